"""``bgai hint`` without dice (the cube decision) and ``bgai eval --cube / --match N --matches M``."""

from __future__ import annotations

import json

import pytest

from bgai.cli import main
from bgai.formats.match_id import MatchState, encode_match_id

START = "4HPwATDgc/ABMA"
POST_CRAWFORD_TRAILER = "cAngAGAAIAAA"  # 7-point match 6-4, player 1 (3-away) on roll, post-Crawford


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_hint_cube_decision_money_and_match(capsys):
    pytest.importorskip("gnubg_nn")
    code, out, _ = run(capsys, "hint", START, "--agent", "gnubg")
    assert code == 0
    assert "money game, cube 1 centred, Jacoby on" in out
    assert "Proper cube action: No double, take" in out
    assert "1. No double" in out and "Double, pass       +1.000" in out
    code, out, _ = run(capsys, "hint", f"{START}:{POST_CRAWFORD_TRAILER}", "--agent", "gnubg")
    assert code == 0 and "post-Crawford" in out and "Proper cube action: Double, take" in out and "MWC" in out
    code, out, _ = run(capsys, "hint", START, "--match-id", POST_CRAWFORD_TRAILER, "--agent", "gnubg", "--json")
    d = json.loads(out)
    assert d["cube"]["action"] == "Double, take" and d["cube"]["double"] and d["cube"]["take"]
    assert d["cube"]["equities"]["double_take"] == pytest.approx(0.384, abs=0.01)


def test_hint_crawford_game_and_pending_double(capsys):
    pytest.importorskip("gnubg_nn")
    crawford = encode_match_id(MatchState(player_on_roll=1, turn=1, match_length=5, score=(4, 2), crawford=True))
    code, out, _ = run(capsys, "hint", f"{START}:{crawford}", "--agent", "gnubg")
    assert code == 0 and "Crawford game" in out and "Never double, take (dead cube)" in out
    doubled = encode_match_id(MatchState(player_on_roll=0, turn=1, double_offered=True, match_length=7, score=(4, 6)))
    code, out, _ = run(capsys, "hint", f"{START}:{doubled}", "--agent", "gnubg")
    assert code == 0 and "Proper response to the double: take" in out


def test_hint_agent_without_probabilities(capsys):
    code, out, _ = run(capsys, "hint", START, "--agent", "pubeval")
    assert code == 0 and "never double, always take" in out


def test_hint_bad_match_ids(capsys):
    bad_cube = encode_match_id(MatchState(cube_value=2, cube_owner=-1))
    code, _, err = run(capsys, "hint", f"{START}:{bad_cube}", "--agent", "pubeval")
    assert code == 2 and "centred but shows 2" in err
    code, _, err = run(capsys, "hint", START, "--match-id", "nonsense!!!!", "--agent", "pubeval")
    assert code == 2 and "Match ID" in err
    finished = "AAAAAAAAAAAAAA"  # no checkers at all: a finished game
    code, _, err = run(capsys, "hint", f"{finished}:cAkAAAAAAAAA", "--agent", "pubeval")
    assert code == 2 and "bgai: error:" in err


def test_eval_matches_and_cubeful_money(capsys):
    code, out, _ = run(capsys, "eval", "pubeval", "random", "--match", "3", "--matches", "4", "--no-progress")
    assert code == 0 and "matches to 3 points" in out and "match wins for pubeval" in out
    code, out, _ = run(capsys, "eval", "pubeval", "random", "--cube", "--games", "4", "--no-progress",
                       "--no-jacoby", "--cube-limit", "8")
    assert code == 0 and "cubeful money games (Jacoby off, cube limit 8" in out and "ppg for pubeval" in out


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--match", "0", "--matches", "4"], "match length must be at least 1 point"),
        (["--match", "5"], "needs both --match N"),
        (["--cube"], "--cube needs --games"),
        (["--match", "65", "--matches", "2"], "longer than"),  # the MET covers 64 points, as gnubg's
        (["--match", "3", "--matches", "2", "--cube"], "cannot be combined"),
    ],
)
def test_eval_bad_cube_arguments(capsys, argv, msg):
    code, _, err = run(capsys, "eval", "pubeval", "random", "--no-progress", *argv)
    assert code == 2 and msg in err
