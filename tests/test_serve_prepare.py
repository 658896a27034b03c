"""A server reads its model's bear-off database before the first request (Bot.prepare_to_serve), so that no
request waits for it to be built; and small command-line conveniences found by QA."""

from __future__ import annotations

import os

import numpy as np
import pytest

from bgai.errors import PositionIDError
from bgai.model import bearoff

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_prepare_to_serve_reads_the_bearoff_database(monkeypatch, tmp_path):
    from bgai.serve.bot import Bot

    monkeypatch.setenv("BGAI_DATA_DIR", str(tmp_path))
    bearoff.clear_cache()
    try:
        bot = Bot.from_spec(os.path.join(ROOT, "checkpoints", "bgai-td128.pt") + ":bearoff=db")
        assert not (tmp_path / bearoff.FILE_NAME).exists()
        bot.prepare_to_serve()
        assert (tmp_path / bearoff.FILE_NAME).exists()  # built and cached before any request
        board = np.zeros((2, 25), dtype=np.int8)
        board[0, :3] = 2
        board[1, :2] = 3
        ranked = bot.rank_plays(board, (2, 1))
        assert ranked and ranked[0].probabilities is not None
    finally:
        bearoff.clear_cache()


def test_data_dir_tilde_is_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("BGAI_DATA_DIR", "~/bgai-data")
    assert bearoff.database_path() == tmp_path / "bgai-data" / bearoff.FILE_NAME


def test_plus_written_as_space_in_a_url_is_explained():
    from bgai.core.position_id import decode_position_id

    with pytest.raises(PositionIDError, match=r"bad character ' ' at position 10 .*write it %2B"):
        decode_position_id("4HPwATDgc IBKA")
    with pytest.raises(PositionIDError, match=r"bad character '-' at position 13 \(not in the Base64 alphabet\)$"):
        decode_position_id("4HPwATDgc/AB-A")


def test_a_warning_is_one_line_on_the_command_line(tmp_path):
    import subprocess
    import sys

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {**os.environ, "BGAI_DATA_DIR": str(blocker / "bgai"), "PYTHONPATH": ROOT}
    out = subprocess.run([sys.executable, "-m", "bgai", "hint", "Z14AANh2DQAAAA", "21", "--agent",
                          os.path.join(ROOT, "checkpoints", "bgai-td128.pt") + ":bearoff=db"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bgai: warning: bear-off database not cached"), out.stderr


def test_export_default_is_the_shipped_model(tmp_path, capsys, monkeypatch):
    from bgai.agents.registry import default_model_spec
    from bgai.cli import main

    monkeypatch.delenv("BGAI_MODEL", raising=False)
    assert main(["export", "default", "--out", str(tmp_path / "m.npz")]) == 0
    assert (tmp_path / "m.npz").exists()
    assert main(["export", default_model_spec(), "--out", str(tmp_path / "n.npz")]) == 0
    a, b = np.load(tmp_path / "m.npz"), np.load(tmp_path / "n.npz")
    assert sorted(a.files) == sorted(b.files)
    assert all(np.array_equal(a[k], b[k]) for k in a.files if k != "meta")  # (meta names the source path)
