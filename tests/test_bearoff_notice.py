"""The bear-off database built on demand: the command line says so on stderr, once; a library call stays quiet."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import bgai.model.bearoff as bo
from bgai.cli import main
from bgai.core.position_id import encode_position_id

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bearoff_pid() -> str:
    """A bear-off position: 3 checkers on each of the side on roll's points 1-5, the opponent's 5 on each of 1-3."""
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, :5] = 3
    b[1, :3] = 5
    return encode_position_id(b)


def test_the_cli_announces_the_first_build_once(monkeypatch, tmp_path, capsys):
    data = tmp_path / "data"
    monkeypatch.setenv(bo.DATA_DIR_ENV, str(data))
    pid = _bearoff_pid()
    bo.clear_cache()
    try:
        assert main(["bearoff", "show", pid]) == 0
        first = capsys.readouterr()
        want = f"bgai: building the one-sided bear-off database (first use, about 5 s; cached in {data})\n"
        assert first.err == want and (data / bo.FILE_NAME).is_file()
        assert first.out.startswith(f"Position ID {pid}\n")
        bo.clear_cache()  # the next use reads the file: no build, no line
        assert main(["bearoff", "show", pid]) == 0
        second = capsys.readouterr()
        assert second.err == "" and second.out == first.out
    finally:
        bo.clear_cache()
    # a library call that builds it says nothing (the notice is an INFO log line; nothing shows it outside the CLI);
    # compute() is replaced by reading the file built above, to keep the test short
    fresh = tmp_path / "fresh"
    code = (
        "import bgai.model.bearoff as bo\n"
        f"bo.compute = lambda: bo.load({str(data / bo.FILE_NAME)!r})\n"
        "db = bo.get_database()\n"
        f"assert (__import__('pathlib').Path({str(fresh)!r}) / bo.FILE_NAME).is_file()\n"
        "print(db.off.shape[0])\n"
    )
    env = dict(os.environ, BGAI_DATA_DIR=str(fresh), PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout == f"{bo.NUM_POSITIONS}\n"
