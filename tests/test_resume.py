"""Journals of finished work units (bgai.util.journal): a rollout or a match analysis whose driver is killed
(SIGKILL) mid-job resumes from its journal when the same command runs again, with the result of an
uninterrupted run, bit for bit; a journal of other settings is refused with one line; a torn last line is
dropped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bgai.errors import BgaiError
from bgai.util.journal import Journal, spec_file_sha256

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATCH = os.path.join(ROOT, "tests", "data", "matches", "session.mat")
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
# 4 units of 648 trials (no variance reduction), truncated after 3 plies: a few seconds in all
ROLLOUT = ["rollout", "4HPwATDgc/ABMA", "--agent", "gnubg", "--trials", "2592", "--truncate", "3", "--no-vr",
           "--seed", "3"]
# the analysis of one session in units of 300 rankings, through the Python API (the CLI's unit is 4096)
ANALYSE = ("import sys; from bgai.analysis.match_analysis import analyse_files, write_json; "
           "write_json(sys.argv[2], analyse_files([sys.argv[1]], 'gnubg', chunk=300, journal=sys.argv[3] or None))")


def _units(path) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b"\n") - 1
    except FileNotFoundError:
        return 0


def _kill_after_first_unit(cmd: list[str], journal) -> int:
    """Start ``cmd``, SIGKILL it once the journal holds a finished unit; the units recorded by then."""
    proc = subprocess.Popen(cmd, env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while _units(journal) < 1 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the job ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return _units(journal)


def _figures(path) -> dict:
    with open(path) as fh:
        d = json.load(fh)
    d.pop("seconds", None)
    return d


def test_rollout_killed_and_resumed_equals_uninterrupted(tmp_path):
    bgai = [sys.executable, "-m", "bgai"]
    whole, resumed, journal = tmp_path / "whole.json", tmp_path / "resumed.json", tmp_path / "rollout.journal"
    subprocess.run(bgai + ROLLOUT + ["--json", str(whole)], env=ENV, cwd=ROOT, check=True, capture_output=True)
    recorded = _kill_after_first_unit(bgai + ROLLOUT + ["--json", str(resumed), "--journal", str(journal)], journal)
    assert 1 <= recorded < 4 and not resumed.exists()
    out = subprocess.run(bgai + ROLLOUT + ["--json", str(resumed), "--journal", str(journal)], env=ENV, cwd=ROOT,
                         check=True, capture_output=True, text=True)
    assert f"{648 * recorded} of 2592 trials taken from journal" in out.stderr
    assert _figures(resumed) == _figures(whole)
    assert _figures(whole)["trials"] == 2592 and not _figures(whole)["partial"]
    assert _units(journal) == 4
    # another seed: refused with one line, the journal left as it was
    size = journal.stat().st_size
    bad = subprocess.run(bgai + ROLLOUT[:-1] + ["4", "--journal", str(journal)], env=ENV, cwd=ROOT,
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "is of another rollout (seed: 3 there, 4 here)" in bad.stderr
    assert journal.stat().st_size == size


def test_analysis_killed_and_resumed_equals_uninterrupted(tmp_path):
    py = [sys.executable, "-c", ANALYSE, MATCH]
    whole, resumed, journal = tmp_path / "whole.json", tmp_path / "resumed.json", tmp_path / "analysis.journal"
    subprocess.run(py + [str(whole), ""], env=ENV, cwd=ROOT, check=True, capture_output=True)
    recorded = _kill_after_first_unit(py + [str(resumed), str(journal)], journal)
    header = json.loads(journal.read_text().splitlines()[0])
    units = header["settings"]["units"]
    assert units >= 4 and 1 <= recorded < units and not resumed.exists()
    subprocess.run(py + [str(resumed), str(journal)], env=ENV, cwd=ROOT, check=True, capture_output=True)
    assert resumed.read_bytes() == whole.read_bytes()
    assert _units(journal) == units
    # the CLI refuses the analysis journal for a rollout, and for another analysis (its units differ)
    for cmd, why in ((ROLLOUT, "was made by another kind of job (analyse), not by this rollout"),
                     (["analyse", MATCH, "--agent", "gnubg", "--quiet"], "is of another analyse (chunk: 300 there, 4096 here)")):
        bad = subprocess.run([sys.executable, "-m", "bgai"] + cmd + ["--journal", str(journal)], env=ENV, cwd=ROOT,
                             capture_output=True, text=True)
        assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert why in bad.stderr and "Traceback" not in bad.stderr


def test_journal_torn_line_dropped_and_settings_checked(tmp_path):
    path = tmp_path / "j"
    settings = {"seed": 1, "units": [[0, 2], [2, 4]], "model": None}
    with Journal(path, "rollout", settings) as j:
        assert j.done == {}
        j.record(1, {"x": [0.1, 1e-300, float("inf")]})
    with open(path, "ab") as fh:
        fh.write(b'{"unit": 0, "result": {"x": [0.3')  # a driver killed while appending
    with Journal(path, "rollout", {"seed": 1, "units": ((0, 2), (2, 4)), "model": None}) as j:
        assert j.done == {1: {"x": [0.1, 1e-300, float("inf")]}}
        j.record(0, {"x": [0.2]})
    lines = path.read_bytes().split(b"\n")
    assert len(lines) == 4 and lines[-1] == b""  # header, two units, nothing torn left
    assert Journal(path, "rollout", settings).done == {1: {"x": [0.1, 1e-300, float("inf")]}, 0: {"x": [0.2]}}
    with pytest.raises(BgaiError, match=r"is of another rollout \(seed: 1 there, 2 here\)"):
        Journal(path, "rollout", {**settings, "seed": 2})
    with pytest.raises(BgaiError, match=r"units: \[\[0, 2\], \[2, 4\]\] there, \[\[0, 4\]\] here"):
        Journal(path, "rollout", {**settings, "units": [[0, 4]]})
    with pytest.raises(BgaiError, match=r"made by another kind of job \(rollout\), not by this analyse"):
        Journal(path, "analyse", settings)
    other = tmp_path / "other.txt"
    other.write_text("hello\n")
    with pytest.raises(BgaiError, match="is not a bgai journal"):
        Journal(other, "rollout", settings)
    damaged = tmp_path / "damaged"
    damaged.write_bytes(path.read_bytes().replace(b'"unit": 1', b'"unit": x', 1))
    with pytest.raises(BgaiError, match="is damaged at line 2"):
        Journal(damaged, "rollout", settings)
    with pytest.raises(BgaiError, match="does not exist"):
        Journal(tmp_path / "no" / "j", "rollout", settings)
    model = tmp_path / "m.pt"
    model.write_bytes(b"abc")
    assert spec_file_sha256(f"{model}:ply=1") == spec_file_sha256(str(model)) == \
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert spec_file_sha256("gnubg") is None
