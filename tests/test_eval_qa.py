"""Regression tests for the QA review of ``bgai eval`` / ``bgai play``: --json checked before playing, options
that do not apply are errors, honest worker counts, A/B labels and full agent names in the report tables."""

from __future__ import annotations

import json
import os

import pytest

from bgai.cli import main
from bgai.evaluate.series import EvalReport, SideStats, name_width, side_labels


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# --- 5. --json target checked before any game ------------------------------------------------------------------


def _no_games(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("games were played before --json was checked")

    monkeypatch.setattr("bgai.evaluate.series.evaluate", boom)
    monkeypatch.setattr("bgai.evaluate.cubeful.evaluate_cubeful", boom)


@pytest.mark.parametrize("extra", [[], ["--cube"]])
def test_eval_json_target_checked_before_playing(capsys, tmp_path, monkeypatch, extra):
    _no_games(monkeypatch)
    code, _, err = run(capsys, "eval", "pubeval", "racer", "--games", "20", "--json", str(tmp_path), *extra)
    assert code == 2 and "it is a directory" in err
    code, _, err = run(capsys, "eval", "pubeval", "racer", "--games", "20", "--json",
                       str(tmp_path / "missing" / "r.json"), *extra)
    assert code == 2 and "does not exist" in err
    afile = tmp_path / "file"
    afile.write_text("x")
    code, _, err = run(capsys, "eval", "pubeval", "racer", "--games", "20", "--json", str(afile / "r.json"), *extra)
    assert code == 2 and "is not a directory" in err
    real_access = os.access
    ro_dir = str(tmp_path / "ro2")
    os.mkdir(ro_dir)
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == ro_dir else real_access(p, mode))
    code, _, err = run(capsys, "eval", "pubeval", "racer", "--games", "20", "--json", ro_dir + "/r.json", *extra)
    assert code == 2 and "is not writable" in err
    monkeypatch.setattr(os, "access", real_access)
    if os.geteuid() != 0:  # root may write anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        try:
            code, _, err = run(capsys, "eval", "pubeval", "racer", "--games", "20", "--json", str(ro / "r.json"),
                               *extra)
            assert code == 2 and "not writable" in err
        finally:
            ro.chmod(0o700)


# --- 6. options that do not apply; honest workers ---------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--no-jacoby", "--games", "10"], "--no-jacoby: for cubeful money games only; add --cube"),
        (["--cube-limit", "4", "--games", "10"], "--cube-limit: for cubeful money games only; add --cube"),
        (["--match", "3", "--matches", "2", "--no-jacoby"], "not for match play"),
    ],
)
def test_eval_cube_options_without_cube_are_errors(capsys, monkeypatch, argv, msg):
    _no_games(monkeypatch)
    code, _, err = run(capsys, "eval", "pubeval", "racer", *argv)
    assert code == 2 and msg in err


def test_play_match_zero_is_an_error(capsys):
    code, _, err = run(capsys, "play", "--match", "0", "--agent", "pubeval")
    assert code == 2 and "a match is played to 1..64 points" in err and "got 0" in err


def test_eval_reports_workers_used(capsys):
    code, out, err = run(capsys, "eval", "pubeval", "racer", "--games", "20", "--workers", "2", "--no-progress")
    assert code == 0
    assert "1 worker(s) for 1 work unit(s) of up to 1000 games" in out
    assert "--workers 2: 20 in 1 work unit(s) of up to 1000, so 1 worker(s) used" in err


# --- 10. labels and widths --------------------------------------------------------------------------------------


def test_eval_same_agent_labelled_a_b(capsys):
    code, out, _ = run(capsys, "eval", "pubeval", "pubeval", "--cube", "--games", "4", "--no-progress")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("pubeval (A) vs pubeval (B):")
    assert [ln.split()[:2] for ln in lines[3:5]] == [["pubeval", "(A)"], ["pubeval", "(B)"]]
    code, out, _ = run(capsys, "eval", "racer", "racer", "--games", "4", "--no-progress")
    assert "ppg for racer (A):" in out and "\n  racer (B) " in out


def test_long_agent_names_not_truncated():
    long_a = "runs/experiment-2026-11-30/best.pt:ply=1"
    side = SideStats(win=0.5, gammon=0.1, backgammon=0.0)
    rep = EvalReport(long_a, "pubeval", "duplicate", 2, 0, 1, 0.0, 0.0, 0.0, side, side, 50.0, 1.0, 2.0)
    rows = rep.table().splitlines()
    assert rows[3].startswith(f"  {long_a}  ") and rows[4].startswith("  pubeval ")
    # the numbers line up under the headers
    assert rows[2].index("win %") + len("win %") == rows[3].index("50.00") + len("50.00")
    assert rows[4].index("50.00") == rows[3].index("50.00")
    assert side_labels("a", "a") == ("a (A)", "a (B)") and side_labels("a", "b") == ("a", "b")
    assert name_width("x", "y") == 14 and name_width(long_a) == len(long_a) + 2
    json.dumps(rep.to_dict())


def test_report_counts_work_units_of_the_series():
    from bgai.evaluate.series import evaluate

    rep = evaluate("pubeval", "racer", 8, 3, chunk_games=2)
    assert rep.to_dict()["chunk_games"] == 2 and rep.workers == 1
    assert "1 worker(s) for 4 work unit(s) of up to 2 games" in rep.table()
