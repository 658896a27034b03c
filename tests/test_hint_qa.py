"""Regression tests for the QA review of ``bgai hint`` / ``bgai moves``: per-line batch errors, match-equity
ranking with a Match ID (checked against GNU Backgammon 1.07's 0-ply ``hint``), the cubeless equity label, cube
output when doubling is not allowed, the pass shape, finished games and Match IDs in ``bgai moves``."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from bgai.cli import main

START = "4HPwATDgc/ABMA"
BEAROFF_GAMMON = "wN1tAwDb3Q4AAA"  # side on roll wins at once, gammon likely (gnubg: cubeless +1.848 money)
PASS_POSITION = "27YDBgDg8+ADQA"  # no legal play with 31
OPPONENT_DONE = "AAAAwP8fAAAAAA"  # the opponent has borne off all 15 checkers


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _hint_json(capsys, *argv):
    code, out, err = run(capsys, "hint", *argv, "--agent", "gnubg", "--json")
    assert code == 0, err
    return json.loads(out)


# --- 1. batch: per-line errors -------------------------------------------------------------------------------


def test_hint_batch_bad_lines_are_per_line(capsys, monkeypatch):
    pytest.importorskip("gnubg_nn")
    text = f"{START} 31\nbad 31\nAAAAAAAAAAAAAA 31\n{OPPONENT_DONE} 31\n{START}:cAkgAAAAAAAA 13\n{START} 77\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code, out, _ = run(capsys, "hint", "--batch", "-", "--agent", "gnubg")
    recs = [json.loads(x) for x in out.splitlines()]
    assert code == 1 and len(recs) == 6
    assert recs[0]["plays"][0]["play"] == "8/5 6/5"
    assert recs[1] == {"line": 2, "error": recs[1]["error"]} and "Position ID 'bad'" in recs[1]["error"]
    assert recs[2]["line"] == 3 and "both sides have borne off" in recs[2]["error"]
    assert recs[3]["line"] == 4 and "game is over" in recs[3]["error"]
    assert recs[4]["match_id"] == "cAkgAAAAAAAA" and recs[4]["plays"][0]["equity"] == pytest.approx(0.102, abs=3e-3)
    assert recs[5]["line"] == 6 and "die 7" in recs[5]["error"]


# --- 2. match equity with a Match ID ---------------------------------------------------------------------------

# GNU Backgammon 1.07, `gnubg -t`: set evaluation chequerplay evaluation plies 0; set gnubgid START:MATCHID;
# set dice 31; hint -> "Cubeful 0-ply <play> Eq.: <normalised match (or money cubeful) equity>".
GNUBG_HINTS = {
    "cAEgAAAAAAAA": {"8/5 6/5": 0.102, "24/23 13/10": -0.006, "24/20": -0.007, "24/23 24/21": -0.009},  # 1-point
    "UQmgACAACAAA": {"8/5 6/5": 0.661, "24/23 13/10": 0.461, "24/20": 0.456, "24/23 24/21": 0.451},  # 5pt, 1-2, 2 own
    "cAngADAAKAAA": {"8/5 6/5": -0.042, "24/20": -0.264, "24/23 24/21": -0.268, "24/23 13/10": -0.271},  # 7pt 5-3
    "QQkAAAAAAAAA": {"8/5 6/5": 0.006, "24/23 13/10": -0.180, "24/20": -0.187, "24/23 24/21": -0.191},  # money, cube 2 opp
    "cAngAGAAIAAA": {"8/5 6/5": 0.373, "24/23 13/10": 0.208, "13/9": 0.205, "13/10 6/5": 0.196},  # 7pt post-Crawford
    "cAkAAAAAAAAA": {"8/5 6/5": 0.200, "24/23 13/10": -0.011, "24/20": -0.018, "24/23 24/21": -0.022},  # money centred
    "QQlgAAAACAAA": {"8/5 6/5": -0.326, "24/23 13/10": -0.485, "24/20": -0.486, "24/23 24/21": -0.490},  # 3pt, 2 mine
}


@pytest.mark.parametrize("match_id", sorted(GNUBG_HINTS))
def test_hint_with_match_id_ranks_like_gnubg(capsys, match_id):
    pytest.importorskip("gnubg_nn")
    d = _hint_json(capsys, START, "31", "--match-id", match_id)
    got = {p["play"]: p["equity"] for p in d["plays"]}
    ref = GNUBG_HINTS[match_id]
    assert [p["play"] for p in d["plays"][: len(ref)]] == list(ref)  # gnubg's order
    for play, eq in ref.items():
        assert got[play] == pytest.approx(eq, abs=3e-3), play
    assert d["match_id"] == match_id and "cubeful" in d["ranking"]


def test_hint_one_point_match_is_winning_chance(capsys):
    """1-point match: the cube is dead, so MWC = cubeless P(win) and the normalised equity = 2 MWC - 1."""
    pytest.importorskip("gnubg_nn")
    d = _hint_json(capsys, f"{START}:cAEgAAAAAAAA", "31")
    for p in d["plays"]:
        assert p["mwc"] == pytest.approx(p["probabilities"]["win"], abs=1e-6)
        assert p["equity"] == pytest.approx(2 * p["mwc"] - 1, abs=2e-6)
    code, out, _ = run(capsys, "hint", START, "31", "--match-id", "cAEgAAAAAAAA", "--agent", "gnubg")
    assert code == 0 and "1-point match" in out and "MWC 55." in out and "ranked by cubeful match equity" in out


def test_hint_dice_disagree_with_match_id(capsys):
    from bgai.formats.match_id import MatchState, encode_match_id

    rolled = encode_match_id(MatchState(match_length=5, player_on_roll=1, turn=1, dice=(5, 2)))
    code, _, err = run(capsys, "hint", f"{START}:{rolled}", "31", "--agent", "pubeval")
    assert code == 2 and "disagree" in err and "5-2" in err  # rolls are written one way: Dice's str
    code, out, _ = run(capsys, "hint", f"{START}:{rolled}", "25", "--agent", "pubeval", "--json")  # same roll
    assert code == 0 and json.loads(out)["dice"] == [2, 5]


def test_hint_pubeval_with_match_id_says_cubeless(capsys):
    code, out, _ = run(capsys, "hint", START, "31", "--match-id", "cAngADAAKAAA", "--agent", "pubeval", "--json")
    d = json.loads(out)
    assert code == 0 and d["ranking"].startswith("agent score (cubeless") and "mwc" not in d["plays"][0]


# --- 3. cubeless equity label ----------------------------------------------------------------------------------


def test_cube_hint_cubeless_equity_is_plain_money_equity(capsys):
    pytest.importorskip("gnubg_nn")
    from bgai.core.equity import OUTPUTS, cubeless_equity

    d = _hint_json(capsys, BEAROFF_GAMMON)["cube"]
    probs = np.array([d["probabilities"][k] for k in OUTPUTS])
    assert d["cubeless_equity"] == pytest.approx(float(cubeless_equity(probs)), abs=1e-12)
    assert d["cubeless_equity"] == pytest.approx(1.848, abs=3e-3)  # gnubg 0-ply / bgai's /api/evaluate
    assert d["cubeless_equity_jacoby"] == pytest.approx(2 * probs[0] - 1, abs=1e-9)  # gammons do not count
    code, out, _ = run(capsys, "hint", BEAROFF_GAMMON, "--agent", "gnubg")
    assert "cubeless equity +1.848 (money), +1.000 with the Jacoby rule" in out


# --- 4. cube not available, dice rolled ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "match_id, reason",
    [("8AmgADAAIAAA", "doubling is not allowed in the Crawford game"),
     ("QQkAAAAAAAAA", "the cube is owned by the opponent: cube not available")],
)
def test_cube_hint_when_doubling_is_not_allowed(capsys, match_id, reason):
    pytest.importorskip("gnubg_nn")
    code, out, _ = run(capsys, "hint", BEAROFF_GAMMON, "--match-id", match_id, "--agent", "gnubg")
    assert code == 0 and f"You cannot double: {reason}." in out
    assert "Double, take" not in out and "Double, pass" not in out and "Cubeful equities" not in out
    d = _hint_json(capsys, BEAROFF_GAMMON, "--match-id", match_id)["cube"]
    assert d["available"] is False and d["reason"] == reason and set(d["equities"]) == {"no_double"}
    assert d["double"] is False


def test_cube_presentation_refuses_after_the_roll():
    from bgai.errors import MatchStateError
    from bgai.game.cube import CubeState, cube_decision, cube_decision_dict, format_cube_decision

    d = cube_decision([0.9, 0.2, 0.0, 0.0, 0.0], CubeState(), 0.68)
    for fn in (format_cube_decision, cube_decision_dict):
        with pytest.raises(MatchStateError, match="dice are already rolled"):
            fn(d, dice_rolled=True)
    assert "Double" in format_cube_decision(d)  # before the roll the decision is shown


def test_cube_hint_with_rolled_match_id_is_checker_play(capsys):
    from bgai.formats.match_id import MatchState, encode_match_id

    rolled = encode_match_id(MatchState(match_length=5, player_on_roll=1, turn=1, dice=(3, 1)))
    code, out, _ = run(capsys, "hint", f"{START}:{rolled}", "--agent", "pubeval")
    assert code == 0 and "Double" not in out and "8/5 6/5" in out and "checker play" in out


# --- 7. pass shape and the header ------------------------------------------------------------------------------


def test_hint_pass_has_the_moves_shape(capsys, monkeypatch):
    pytest.importorskip("gnubg_nn")
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{PASS_POSITION} 31\n"))
    code, out, _ = run(capsys, "hint", "--batch", "-", "--agent", "gnubg")
    hint = json.loads(out)
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{PASS_POSITION} 31\n"))
    code_m, out_m, _ = run(capsys, "moves", "--batch", "-")
    moves = json.loads(out_m)
    assert code == code_m == 0 and len(hint["plays"]) == 1
    assert [(p["play"], p["position_id"]) for p in hint["plays"]] == [(p["play"], p["position_id"])
                                                                     for p in moves["plays"]] == [("", PASS_POSITION)]
    from bgai.agents.registry import make_agent
    from bgai.core.equity import cubeless_equity
    from bgai.core.position_id import decode_position_id

    ref = make_agent("gnubg").afterstate_probabilities(decode_position_id(PASS_POSITION)[None])
    assert hint["plays"][0]["equity"] == pytest.approx(float(cubeless_equity(ref)[0]), abs=1e-6)
    code, out, _ = run(capsys, "hint", PASS_POSITION, "31", "--agent", "gnubg")
    assert "agent gnubg (equity)" in out.splitlines()[0] and "no legal play" in out


# --- 8. finished games ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", ["moves", "hint"])
def test_finished_game_is_an_error(capsys, cmd):
    code, _, err = run(capsys, cmd, OPPONENT_DONE, "31")
    assert code == 2 and "the game is over" in err
    if cmd == "hint":
        code, _, err = run(capsys, cmd, OPPONENT_DONE)  # cube decision
        assert code == 2 and "the game is over" in err


# --- 9. moves: the right field is blamed; POSITION_ID:MATCH_ID -------------------------------------------------


def test_moves_batch_blames_the_position_id_first(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(f"# comment\n{OPPONENT_DONE} 31\n{START} 31\n"))
    code, out, _ = run(capsys, "moves", "--batch", "-")
    recs = [json.loads(x) for x in out.splitlines()]
    assert code == 1 and "Position ID '#'" in recs[0]["error"] and "dice" not in recs[0]["error"]
    assert recs[1] == {"line": 2, "error": "the game is over: the opponent of the side on roll has borne off all "
                                           "15 checkers"}
    assert len(recs[2]["plays"]) == 16


def test_moves_accepts_match_id(capsys):
    from bgai.formats.match_id import MatchState, encode_match_id

    rolled = encode_match_id(MatchState(match_length=5, player_on_roll=1, turn=1, dice=(3, 1)))
    code, out, _ = run(capsys, "moves", f"{START}:{rolled}", "--json")
    d = json.loads(out)
    assert code == 0 and d["dice"] == [3, 1] and len(d["plays"]) == 16
    code, _, err = run(capsys, "moves", f"{START}:{rolled}", "52")
    assert code == 2 and "disagree" in err
    code, _, err = run(capsys, "moves", f"{START}:cAkgAAAAAAAA")  # no roll anywhere
    assert code == 2 and "DICE" in err
