"""Hand-written rule cases with the answers written out (cases A1..H of the project's rule-case list, written out here, plus cases for the
rules the summary table names without a worked example).  Each case: the position (me = side to move, points
24 -> 1; the opponent given on MY point numbers), its GNU Backgammon Position ID, the roll, and every distinct
legal play as single-die steps.  The expected afterstates are built from the written steps and compared as
sets with both afterstates() and legal_plays()."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.core.board import result_kind, starting_board
from bgai.core.movegen import afterstates, apply_steps, legal_plays
from bgai.core.position import Position
from bgai.errors import InvalidDiceError, InvalidPositionError


def position(me, opp_on_my_points, me_bar=0, opp_bar=0) -> Position:
    return Position.from_points(
        me, {25 - p: n for p, n in opp_on_my_points.items()}, me_bar=me_bar, opponent_bar=opp_bar
    )


def parse_steps(text: str) -> list[tuple[int, int]]:
    out = []
    for tok in text.split():
        a, b = tok.replace("*", "").split("/")
        out.append((25 if a == "bar" else int(a), 0 if b == "off" else int(b)))
    return out


START_OPP = {19: 5, 17: 3, 12: 5}  # opponent's 6, 8 and 13 points on my numbering (2 off)

CASES = {
    # id: (me, opponent on my points, me_bar, opp_bar, position id, dice, expected plays)
    "A1": ({24: 1, 8: 1, 6: 13}, {20: 4, 19: 4, 18: 3, 16: 2, 4: 2}, 0, 0, "8N4ZAAbg/xMAIA", (6, 2), ["8/2 24/22"]),
    "B1": ({24: 3, 22: 1, 6: 3, 5: 2, 3: 2, 2: 3}, {19: 6, 17: 3, 12: 3, 7: 1, 1: 2}, 1, 0, "4OfgIDBudgCAXA",
           (5, 3), ["bar/20 24/21", "bar/20 5/2", "bar/20 6/3"]),
    "C1": ({}, {20: 2}, 1, 0, "MAAAAAAACAAAAA", (3, 2), ["bar/22"]),
    "C2": ({24: 1, 6: 1}, {21: 2, 18: 2, 17: 2, 3: 2, 1: 2}, 0, 2, "GBsAmA0EACAAAA", (4, 3), ["24/20", "6/2"]),
    "C3": ({7: 2}, {2: 2}, 0, 0, "AADAAAYAAAAAAA", (5, 2), ["7/5"]),
    "C4": ({20: 1}, {16: 3}, 0, 0, "AAcAAACAAAAAAA", (4, 3), ["20/17 17/13"]),
    "D1": ({10: 2}, {22: 2}, 2, 0, "DAAAADAAYAAAAA", (5, 3), ["bar/20"]),
    "D2": ({1: 14}, START_OPP, 1, 0, "4HPwAcD/DwAAEA", (6, 1), ["bar/24 24/18"]),
    "D3": ({12: 1}, {20: 2, 10: 2}, 1, 0, "MAADAAABQAAAAA", (3, 2), ["bar/23 12/9"]),
    "D4": ({10: 2}, {20: 1}, 3, 0, "EAAAABgAcAAAAA", (5, 3), ["bar/20* bar/22"]),
    "E1": ({24: 1, 2: 14}, START_OPP, 0, 0, "4HPwAYD/HwAACA", (2, 1), ["24/22 2/1", "24/22 22/21"]),
    "E2": ({5: 1, 3: 1}, START_OPP, 0, 0, "4HPwAQAJAAAAAA", (5, 3), ["5/2 3/off", "5/off 3/off"]),
    "E3": ({6: 1, 4: 1}, START_OPP, 0, 0, "4HPwAQASAAAAAA", (5, 1), ["6/1 1/off", "6/1 4/3"]),
    "E4": ({5: 1, 2: 1}, START_OPP, 0, 0, "4HPwAYAIAAAAAA", (4, 2), ["5/1 2/off", "5/3 3/off"]),
    "E5": ({4: 1, 2: 4}, {24: 1, 1: 1}, 0, 0, "AQAA8QQAAAAAAA", (6, 4), ["4/off 2/off"]),
    "E6": ({9: 1, 5: 3, 3: 2}, {24: 10, 23: 3, 1: 2}, 0, 0, "/zsAADDMIQAAAA", (6, 4), ["9/5 5/off"]),
    "F1": ({1: 3}, {24: 1, 23: 1, 22: 1, 21: 1, 20: 1, 19: 10}, 0, 0, "Vf0PAAAHAAAAAA", (1, 1),
           ["1/off 1/off 1/off"]),
    "F2": ({2: 1, 1: 2}, {23: 2, 22: 6, 21: 1, 16: 2, 15: 1, 10: 1, 6: 2}, 0, 0, "9gsWhAELAAAAAA", (5, 5),
           ["2/off 1/off 1/off"]),
    "F3": ({24: 2, 13: 3, 7: 2, 6: 5, 5: 3}, {20: 2, 19: 3, 18: 2, 17: 3, 12: 3, 1: 2}, 0, 0, "sNvBATBw38ABMA",
           (6, 6), ["13/7 13/7 13/7"]),
    "G1": ({13: 1, 11: 1, 6: 13}, {12: 2, 1: 2}, 0, 0, "ADAABvx/kAAAAA", (1, 1), [
        "11/10 10/9 6/5 5/4", "11/10 10/9 6/5 6/5", "11/10 10/9 9/8 6/5", "11/10 10/9 9/8 8/7",
        "11/10 6/5 5/4 4/3", "11/10 6/5 6/5 5/4", "11/10 6/5 6/5 6/5", "6/5 5/4 4/3 3/2", "6/5 6/5 5/4 4/3",
        "6/5 6/5 5/4 5/4", "6/5 6/5 6/5 5/4", "6/5 6/5 6/5 6/5"]),
    # --- rules named in the summary table without a worked case (answers checked with GNU Backgammon) ---
    # G2: a hit on the intermediate point of one checker using both dice is a different play from the
    # non-hitting route (OpenSpiel #561)
    "G2": ({24: 1, 13: 6, 8: 3, 6: 5}, {18: 1, 12: 2, 1: 2}, 0, 0, "QGAADPgc/AAIAA", (6, 5), [
        "24/18* 18/13", "24/19 19/13", "24/18* 13/8", "24/18* 8/3", "24/19 13/7", "13/8 13/7", "13/7 8/3",
        "13/7 7/2", "24/19 8/2", "8/3 8/2"]),
    # G3: hits on the intermediate and the final point
    "G3": ({24: 1, 8: 3, 6: 11}, {18: 1, 13: 1, 19: 2, 1: 2}, 0, 0, "YEEAGPB/DgAQAA", (6, 5),
           ["24/18* 18/13*", "24/18* 8/3", "8/3 8/2"]),
    # G4 / E13: a lone checker on 4 with 5-2 uses both dice (wildbg e419072, aima-python #849)
    "G4": ({4: 1}, {24: 2}, 0, 0, "AwAAQAAAAAAAAA", (5, 2), ["4/2 2/off"]),
    # E8: the last checker comes home with the first die, the second die bears off (bgammon e73339f)
    "E8": ({7: 1, 6: 4, 1: 10}, {24: 2}, 0, 0, "AwAA+B+8AAAAAA", (6, 1), ["7/1 6/5", "7/6 6/off"]),
    # E10: bear-off after coming home, or a 7-pip move with both dice
    "E10": ({9: 1, 3: 3, 2: 2}, {24: 2}, 0, 0, "AwAAsAMBAAAAAA", (5, 2), ["9/4 4/2", "9/4 3/1", "9/4 2/off"]),
    # E11: checkers on 5 and 4 with 6-4: two different plays (matrix-os #321)
    "E11": ({5: 1, 4: 1}, {24: 2}, 0, 0, "AwAAQAEAAAAAAA", (6, 4), ["5/off 4/off", "5/1 4/off"]),
    # E12: 9/off with 6-5, a blot on the 4-point: hitting on the way is a different play (gnubg bea63a15)
    "E12": ({9: 1, 2: 14}, {4: 1, 20: 2}, 0, 0, "MABA4P8HBAAAAA", (6, 5), ["9/3 3/off", "9/4* 4/off"]),
    # F4: a double in which a checker walks down and is borne off (gym-backgammon cdeee45)
    "F4": ({8: 1, 4: 1, 2: 1}, {24: 2}, 0, 0, "AwAAkBAAAAAAAA", (4, 4), ["8/4 4/off 4/off 2/off"]),
    "F5": ({10: 1, 6: 1, 3: 2}, {24: 2, 20: 1}, 0, 0, "QwAAwAgBAAAAAA", (3, 3),
           ["10/7 7/4 4/1 6/3", "10/7 7/4 6/3 3/off", "10/7 7/4 4/1 3/off", "10/7 7/4 3/off 3/off"]),
    # D5: two on the bar against a closed board: no play, the board is unchanged
    "D5": ({6: 5}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2}, 2, 0, "27YBAAB8AAAMAA", (6, 6), [""]),
}


def expected_afterstates(pos: Position, plays: list[str]) -> set[bytes]:
    return {apply_steps(pos.board, parse_steps(p)).tobytes() for p in plays}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_case(case):
    me, opp, me_bar, opp_bar, pid, dice, plays = CASES[case]
    pos = position(me, opp, me_bar, opp_bar)
    assert pos.position_id() == pid
    expected = expected_afterstates(pos, plays)
    assert len(expected) == len(plays)
    for dd in (dice, dice[::-1]):
        after, src = afterstates(pos.board[None], np.array([dd]))
        got = [a.tobytes() for a in after]
        assert len(got) == len(set(got)) == len(plays)
        assert set(got) == expected
        single = legal_plays(pos, dd)
        assert {p.afterstate.tobytes() for p in single} == expected
        # every representative step list is playable and reproduces its afterstate
        for p in single:
            assert apply_steps(pos.board, p.steps).tobytes() == p.afterstate.tobytes()


def test_g4_uses_both_dice():
    pos = position({4: 1}, {24: 2})
    (play,) = legal_plays(pos, (5, 2))
    assert [s[:2] for s in play.steps] == [(4, 2), (2, 0)]


def test_e12_intermediate_hit_distinguished_in_notation():
    pos = position({9: 1, 2: 14}, {4: 1, 20: 2})
    assert sorted(p.notation for p in legal_plays(pos, (6, 5))) == ["9/4*/off", "9/off"]


def test_game_ending_plays_score():
    # E2 second play ends the game: single game; F1: gammon; F2: backgammon (RULE_CASES H)
    for case, play, points in (("E2", "5/off 3/off", 1), ("F1", "1/off 1/off 1/off", 2), ("F2", "2/off 1/off 1/off", 3)):
        me, opp, me_bar, opp_bar, _, _, _ = CASES[case]
        pos = position(me, opp, me_bar, opp_bar)
        after = apply_steps(pos.board, parse_steps(play))
        winner, pts = result_kind(after)
        assert winner.tolist() == [0] and pts.tolist() == [points]


OPENING = {(6, 5): 7, (6, 4): 14, (6, 3): 14, (6, 2): 14, (6, 1): 10, (5, 4): 9, (5, 3): 9, (5, 2): 8, (5, 1): 8,
           (4, 3): 17, (4, 2): 18, (4, 1): 14, (3, 2): 17, (3, 1): 16, (2, 1): 15,
           (6, 6): 11, (5, 5): 4, (4, 4): 52, (3, 3): 73, (2, 2): 75, (1, 1): 42}


def test_play_counts_from_the_start_for_all_21_rolls():
    rolls = sorted(OPENING)
    assert len(rolls) == 21
    boards = np.repeat(starting_board()[None], 21, axis=0)
    after, src = afterstates(boards, np.array(rolls))
    counts = np.bincount(src, minlength=21)
    assert dict(zip(rolls, counts.tolist())) == OPENING
    assert Position(starting_board()).position_id() == "4HPwATDgc/ABMA"
    for roll in rolls:
        assert len(legal_plays(starting_board(), roll)) == OPENING[roll]


def test_opening_plays_written_out():
    got = sorted(p.notation for p in legal_plays(starting_board(), (3, 1)))
    assert got == ["13/10 6/5", "13/10 8/7", "13/9", "24/20", "24/21 6/5", "24/21 8/7", "24/23 13/10",
                   "24/23 24/21", "24/23 6/3", "24/23 8/5", "6/2", "6/5 6/3", "8/4", "8/5 6/5", "8/7 6/3", "8/7 8/5"]
    got = sorted(p.notation for p in legal_plays(starting_board(), (5, 5)))
    assert got == ["13/3 13/8(2)", "13/3 8/3(2)", "13/3(2)", "13/8(4)"]


def test_batch_output_contract():
    rng = np.random.default_rng(3)
    boards = np.repeat(starting_board()[None], 5, axis=0)
    dice = rng.integers(1, 7, size=(5, 2))
    after, src = afterstates(boards, dice)
    assert after.dtype == np.int8 and src.dtype == np.int64
    assert np.all(np.diff(src) >= 0) and set(src.tolist()) == set(range(5))
    again, src2 = afterstates(boards, dice)
    assert np.array_equal(after, again) and np.array_equal(src, src2)  # deterministic
    empty, src0 = afterstates(np.zeros((0, 2, 25), np.int8), np.zeros((0, 2), int))
    assert empty.shape == (0, 2, 25) and src0.shape == (0,)


@pytest.mark.parametrize("dice", [[[0, 3]], [[7, 1]], [[1, 2, 3]], [[1.5, 2]], [["a", 2]]])
def test_bad_dice_rejected(dice):
    with pytest.raises(InvalidDiceError):
        afterstates(starting_board()[None], np.array(dice, dtype=object if "a" in str(dice) else None))


def test_bad_boards_rejected():
    with pytest.raises(InvalidPositionError):
        afterstates(np.zeros((3, 25), np.int8), np.array([[3, 1]]))
    bad = starting_board()[None].copy()
    bad[0, 0, 0] = 5  # 20 checkers
    with pytest.raises(InvalidPositionError, match="15"):
        afterstates(bad, np.array([[3, 1]]))
    neg = starting_board()[None].copy()
    neg[0, 1, 3] = -1
    with pytest.raises(InvalidPositionError, match="negative"):
        afterstates(neg, np.array([[3, 1]]))
    clash = starting_board()[None].copy()
    clash[0, 0, 0] = 1  # my 1-point is the opponent's 24-point, where it has two checkers
    clash[0, 0, 5] -= 1
    with pytest.raises(InvalidPositionError, match="both"):
        afterstates(clash, np.array([[3, 1]]))
    with pytest.raises(InvalidDiceError):
        afterstates(starting_board()[None], np.array([[3, 1], [2, 2]]))
    with pytest.raises(InvalidDiceError):
        legal_plays(starting_board(), (0, 1))
