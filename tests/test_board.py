"""Board representation: starting position, validation, pip counts, flipping, game results (RULE_CASES.md H)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgai.core.board import (
    BAR,
    flip,
    is_game_over,
    off_counts,
    pip_counts,
    result_kind,
    starting_board,
    validate,
    validation_errors,
)
from bgai.core.position import Position
from bgai.errors import InvalidPositionError


def test_starting_position_layout_and_pips():
    b = starting_board()
    assert b.dtype == np.int8 and b.shape == (2, 25)
    for row in b:
        assert {i + 1: int(n) for i, n in enumerate(row[:24]) if n} == {24: 2, 13: 5, 8: 3, 6: 5}
        assert row[BAR] == 0
    assert pip_counts(b).tolist() == [[167, 167]]
    assert off_counts(b).tolist() == [[0, 0]]
    assert not is_game_over(b)[0]


def test_position_from_points_equals_start():
    p = Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})
    assert p == Position.start()
    assert p.pip_count == (167, 167)
    assert hash(p) == hash(Position.start())


def test_sixteen_checkers_is_rejected_with_a_clear_message():
    b = starting_board()
    b[0, 5] += 1
    with pytest.raises(InvalidPositionError, match="side to move has 16 checkers"):
        validate(b)
    with pytest.raises(InvalidPositionError, match="16 checkers"):
        Position(b)


def test_point_held_by_both_sides_is_rejected():
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 5] = 2  # my 6-point
    b[1, 18] = 1  # opponent's 19-point == my 6-point
    with pytest.raises(InvalidPositionError, match=r"point\(s\) 6 .* held by both sides"):
        validate(b)


def test_negative_count_and_bad_shape_are_rejected():
    b = starting_board().astype(np.int16)
    b[1, BAR] = -1
    with pytest.raises(InvalidPositionError, match="opponent has a negative count .* the bar"):
        validate(b)
    with pytest.raises(InvalidPositionError, match="shape"):
        validate(np.zeros((2, 24), dtype=np.int8))


def test_validation_errors_reports_each_board_of_a_batch():
    good = starting_board()
    bad = starting_board()
    bad[1, 0] = 9
    msgs = validation_errors(np.stack([good, bad, good]))
    assert msgs[0] is None and msgs[2] is None
    assert "opponent has 24 checkers" in msgs[1]
    with pytest.raises(InvalidPositionError, match="board 1"):
        validate(np.stack([good, bad, good]))


def test_flip_swaps_sides_and_is_an_involution():
    b = starting_board()
    b[0, 23] = 0
    b[0, 20] = 2
    f = flip(b)
    assert np.array_equal(f[0], b[1]) and np.array_equal(f[1], b[0])
    assert np.array_equal(flip(f), b)
    batch = np.stack([b, starting_board()])
    assert np.array_equal(flip(batch)[:, 0], batch[:, 1])


def _finished(loser_points: dict, loser_bar: int = 0) -> np.ndarray:
    """Winner (row 0) has borne off everything; loser's checkers given on the WINNER's point numbers."""
    b = np.zeros((2, 25), dtype=np.int8)
    for p, n in loser_points.items():
        b[1, 24 - p] = n  # winner's point p == loser's point 25 - p == loser column 24 - p
    b[1, BAR] = loser_bar
    return b


@pytest.mark.parametrize(
    "loser, bar, expected",
    [
        ({18: 5, 17: 5, 16: 5}, 0, 2),  # all 15 in his own outer board: gammon
        ({22: 15}, 0, 2),  # all in his own home board, none off: gammon
        ({17: 14, 6: 1}, 0, 3),  # one checker in the winner's home board: backgammon
        ({17: 14}, 1, 3),  # one on the bar: backgammon
        ({19: 14}, 0, 1),  # one borne off: single
    ],
)
def test_result_kind_rule_cases_h(loser, bar, expected):
    winner, points = result_kind(_finished(loser, bar))
    assert winner.tolist() == [0] and points.tolist() == [expected]
    # the same game seen from the loser's side: winner is row 1
    winner, points = result_kind(flip(_finished(loser, bar)))
    assert winner.tolist() == [1] and points.tolist() == [expected]


def test_result_kind_rejects_unfinished_games():
    with pytest.raises(InvalidPositionError, match="not a finished game"):
        result_kind(starting_board())


@st.composite
def legal_boards(draw):
    """Random legal boards: each side distributes up to 15 checkers, never on a point the other holds."""
    b = np.zeros((2, 25), dtype=np.int8)
    for side in (0, 1):
        n = draw(st.integers(1 if side == 0 else 0, 15))  # side 0 places first, so never both sides empty
        for _ in range(n):
            col = draw(st.integers(0, 24))
            if col < 24:
                other = b[1 - side, 23 - col]
                if other:
                    continue
            b[side, col] += 1
    return b


@settings(max_examples=300, deadline=None)
@given(legal_boards())
def test_pip_count_of_flip_swaps_and_legal_boards_validate(b):
    validate(b)
    pc = pip_counts(b)[0]
    assert pip_counts(flip(b))[0].tolist() == [pc[1], pc[0]]
    expected = sum((i + 1) * int(n) for i, n in enumerate(b[0]))
    assert pc[0] == expected
    assert off_counts(b)[0, 0] == 15 - int(b[0].sum())


def test_render_shows_counts_and_pips():
    text = str(Position.start())
    assert "pips 167" in text and "BAR" in text


def test_both_sides_borne_off_is_impossible_but_one_side_finished_is_valid():
    with pytest.raises(InvalidPositionError, match="both sides have borne off"):
        validate(np.zeros((2, 25), dtype=np.int8))
    finished = np.zeros((2, 25), dtype=np.int8)
    finished[1, 3] = 4
    validate(finished)
