"""Play notation: GNU Backgammon's FormatMove / FormatMovePlain conventions and ParseMove syntax, round trips
over many legal plays, and errors that quote the text."""

from __future__ import annotations

import os

import numpy as np
import pytest

from bgai.core.board import starting_board
from bgai.core.movegen import legal_plays, parse_play
from bgai.core.notation import format_play, format_play_plain, parse_moves
from bgai.core.position import Position
from bgai.errors import AmbiguousMoveError, IllegalMoveError, NotationError

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")


def position(me, opp_on_my_points, me_bar=0, opp_bar=0) -> Position:
    return Position.from_points(me, {25 - p: n for p, n in opp_on_my_points.items()}, me_bar=me_bar, opponent_bar=opp_bar)


@pytest.mark.parametrize(
    "steps, text",
    [
        ([(24, 18, False), (13, 10, False)], "24/18 13/10"),
        ([(13, 10, False), (24, 18, False)], "24/18 13/10"),  # sorted from the back
        ([(25, 22, True)], "bar/22*"),
        ([(6, 0, False)], "6/off"),
        ([(8, 2, False), (8, 2, False)], "8/2(2)"),
        ([(13, 7, False)] * 2 + [(8, 2, False)] * 2, "13/7(2) 8/2(2)"),
        ([(24, 18, True), (18, 13, False)], "24/18*/13"),
        ([(24, 18, False), (18, 13, False)], "24/13"),
        ([(24, 18, True), (18, 13, True)], "24/18*/13*"),
        ([(8, 5, False), (6, 5, False)], "8/5 6/5"),
        ([(25, 21, True), (25, 21, False), (21, 17, False), (21, 17, False)], "bar/21*/17(2)"),
        ([(25, 21, False), (25, 21, False), (21, 17, False), (21, 17, False)], "bar/17(2)"),
        ([(13, 9, True), (13, 9, False)], "13/9*(2)"),
        ([(4, 2, False), (2, 0, False)], "4/off"),
        ([(24, 20), (20, 16), (24, 20), (13, 9)], "24/16 24/20 13/9"),
        ([], ""),
    ],
)
def test_format_play(steps, text):
    assert format_play(steps) == text


@pytest.mark.parametrize(
    "steps, text",
    [
        ([(24, 22, False), (13, 8, False)], "24/22 13/8 "),
        ([(24, 18, False), (18, 13, False)], "24/18 18/13 "),
        ([(25, 22, True), (6, 0, False)], "25/22* 6/0 "),
        ([(13, 9, True), (13, 9, False), (6, 2, False), (6, 2, False)], "13/9* 13/9 6/2 6/2"),
        ([(6, 0, False)], "6/0 "),
    ],
)
def test_format_play_plain(steps, text):
    assert format_play_plain(steps) == text


def test_parse_moves_syntax():
    assert parse_moves("24/18 13/10") == [([24, 18], set()), ([13, 10], set())]
    assert parse_moves("bar/22*") == [([25, 22], {22})]
    assert parse_moves("b/22 B/20") == [([25, 22], set()), ([25, 20], set())]
    assert parse_moves("6/off 5/o 4/0 3/-") == [([6, 0], set()), ([5, 0], set()), ([4, 0], set()), ([3, 0], set())]
    assert parse_moves("24/18*/13") == [([24, 18, 13], {18})]
    assert parse_moves("13/10(2)") == [([13, 10], set()), ([13, 10], set())]
    assert parse_moves("8/2(2), 6/off") == [([8, 2], set()), ([8, 2], set()), ([6, 0], set())]
    assert parse_moves("  BAR/22  ") == [([25, 22], set())]


@pytest.mark.parametrize(
    "text", ["24/x", "24/", "/24", "24//18", "(2)", "24/18(0)", "26/20", "0/5", "20/25", "24", "18/24",
             "24/18/bar", "13/10(2", "24/18 13/10 8/5 6/5 6/1 5/3 4/2 3/1 2/1", "24/18/off/3"],
)
def test_notation_errors_quote_the_text(text):
    with pytest.raises(NotationError) as e:
        parse_play(text, starting_board(), (3, 1))
    assert repr(text) in str(e.value)


def test_parse_play_variants_from_the_start():
    b = starting_board()
    target = {p.notation: p for p in legal_plays(b, (6, 5))}["24/13"]
    for text in ("24/13", "24/18/13", "24/18 18/13", "24/18, 18/13", "24/18 18/13*"[:-1]):
        assert parse_play(text, b, (6, 5)) == target
    with pytest.raises(IllegalMoveError):
        parse_play("24/19/13", b, (6, 5))  # the 19-point (opponent's 6-point) is blocked
    assert parse_play("8/5 6/5", b, (1, 3)).notation == "8/5 6/5"
    assert parse_play("6/5 8/5", b, (3, 1)).notation == "8/5 6/5"
    assert parse_play("13/7(2) 24/18(2)", b, (6, 6)).notation == "24/18(2) 13/7(2)"
    assert parse_play("6/3 13/4", b, (3, 3)).notation == "13/4 6/3"
    with pytest.raises(IllegalMoveError, match="as many dice"):
        parse_play("13/4", b, (3, 3))


def test_parse_play_bar_off_and_hits():
    pos = position({9: 1, 2: 14}, {4: 1, 20: 2})  # RULE case E12
    plays = {p.notation: p for p in legal_plays(pos, (6, 5))}
    assert parse_play("9/off", pos, (6, 5)) == plays["9/off"]  # no hit on the way, as gnubg reads it
    assert parse_play("9/4*/off", pos, (6, 5)) == plays["9/4*/off"]
    assert parse_play("9/4/o", pos, (6, 5)) == plays["9/4*/off"]  # '*' optional
    assert parse_play("9/3/0", pos, (6, 5)) == plays["9/off"]
    d4 = position({10: 2}, {20: 1}, me_bar=3)  # RULE case D4
    (only,) = legal_plays(d4, (5, 3))
    assert only.notation == "bar/22 bar/20*"
    for text in ("bar/20* bar/22", "b/20 b/22", "25/22 25/20", "bar/22 bar/20*"):
        assert parse_play(text, d4, (5, 3)) == only


def test_empty_play():
    closed = position({6: 5}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2}, me_bar=2)  # RULE case D5
    (only,) = legal_plays(closed, (6, 6))
    assert only.steps == () and only.notation == "" and format_play_plain(only.steps) == ""
    assert parse_play("", closed, (6, 6)) == only
    with pytest.raises(IllegalMoveError, match="empty"):
        parse_play("  ", starting_board(), (3, 1))


def test_parse_play_illegal_and_ambiguous():
    b = starting_board()
    with pytest.raises(IllegalMoveError, match="'24/20 24/21'"):
        parse_play("24/20 24/21", b, (3, 1))
    with pytest.raises(IllegalMoveError, match="as many dice"):
        parse_play("8/5", b, (3, 1))
    with pytest.raises(IllegalMoveError):
        parse_play("6/off", b, (6, 1))
    with pytest.raises(IllegalMoveError):
        parse_play("24/20* 6/5", b, (3, 1))  # 20 is empty: a marked hit that does not happen
    # two routes for 24/13 that hit different blots: ambiguous
    pos = position({24: 1, 8: 3, 6: 11}, {18: 1, 19: 1, 1: 2})
    with pytest.raises(AmbiguousMoveError, match="'24/13'"):
        parse_play("24/13", pos, (6, 5))
    assert parse_play("24/18*/13", pos, (6, 5)).notation == "24/18*/13"
    assert parse_play("24/19*/13", pos, (6, 5)).notation == "24/19*/13"


def test_round_trip_over_many_legal_plays():
    data = np.load(FIXTURE)["boards"]
    rng = np.random.default_rng(11)
    idx = rng.choice(len(data), size=160, replace=False)
    n = 0
    for i in idx:
        dice = tuple(int(x) for x in rng.integers(1, 7, size=2))
        plays = legal_plays(data[i], dice)
        for p in plays[:30]:
            if not p.steps:
                continue
            assert parse_play(p.notation, data[i], dice) == p, (i, dice, p.notation)
            assert parse_play(format_play_plain(p.steps), data[i], dice) == p, (i, dice, p.steps)
            n += 1
    assert n > 1500
