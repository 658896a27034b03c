"""wildbg p0..p25 board parameters: PROTOCOLS.md section 4 examples and validation messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgai.core.board import starting_board
from bgai.core.position import Position
from bgai.core.position_id import encode_position_id
from bgai.errors import FormatError, InvalidPositionError
from bgai.formats.wildbg import board_from_wildbg, to_wildbg, to_wildbg_pips

# wildbg README: the starting position with 3-1
README_START = {"p24": 2, "p19": -5, "p17": -3, "p13": 5, "p12": -5, "p8": 3, "p6": 5, "p1": -2}


def test_readme_start_position():
    b = board_from_wildbg(README_START)
    assert b.dtype == np.int8 and b.shape == (2, 25)
    assert np.array_equal(b, starting_board())
    assert encode_position_id(b) == "4HPwATDgc/ABMA"


def test_query_string_values_and_int_keys():
    b = board_from_wildbg({k: str(v) for k, v in README_START.items()})
    assert np.array_equal(b, starting_board())
    b2 = board_from_wildbg({int(k[1:]): v for k, v in README_START.items()})
    assert np.array_equal(b2, starting_board())


def test_server_test_positions():
    # /move?die1=3&die2=1&p5=1&p24=-1 : x has one checker on 5, o one on x's 24 = o's 1-point
    b = board_from_wildbg({"p5": 1, "p24": -1})
    assert b[0].tolist() == [0, 0, 0, 0, 1] + [0] * 20
    assert b[1].tolist() == [1] + [0] * 24
    # /eval?p1=1&p20=-1&p24=-1 : o on x's 20 and 24 = o's 5 and 1
    b = board_from_wildbg({"p1": 1, "p20": -1, "p24": -1})
    assert b[0, 0] == 1 and b[1, 4] == 1 and b[1, 0] == 1 and b.sum() == 3


def test_bars():
    b = board_from_wildbg({"p25": 2, "p0": -3, "p6": 13, "p19": -12})
    assert b[0, 24] == 2 and b[1, 24] == 3 and b[0, 5] == 13 and b[1, 5] == 12
    assert to_wildbg(b) == {"p0": -3, "p6": 13, "p19": -12, "p25": 2}


def test_sequence_form_c_api():
    pips = [0] * 26
    pips[25], pips[0], pips[6], pips[19] = 1, -1, 5, -5
    b = board_from_wildbg(pips)
    assert to_wildbg_pips(b) == pips
    assert np.array_equal(board_from_wildbg(np.array(pips)), b)


def test_to_wildbg_start_and_include_zeros():
    assert to_wildbg(starting_board()) == {
        "p1": -2, "p6": 5, "p8": 3, "p12": -5, "p13": 5, "p17": -3, "p19": -5, "p24": 2,
    }
    full = to_wildbg(Position.start(), include_zeros=True)
    assert list(full) == [f"p{i}" for i in range(26)] and full["p0"] == 0


@pytest.mark.parametrize(
    "params,error,message",
    [
        ({"p6": 16}, InvalidPositionError, "Index 6 has 16 checkers"),
        ({"p6": 10, "p8": 6}, InvalidPositionError, "Player x has more than 15 checkers on the board."),
        ({"p6": -10, "p8": -6}, InvalidPositionError, "Player o has more than 15 checkers on the board."),
        ({"p6": 10, "p25": 6}, InvalidPositionError, "Player x has more than 15 checkers on the board."),
        ({"p25": -1}, InvalidPositionError, "Index 25 is the bar for player x, number of checkers needs to be positive."),
        ({"p0": 1}, InvalidPositionError, "Index 0 is the bar for player o, number of checkers needs to be negative."),
        ({"p26": 1}, FormatError, "unknown wildbg board parameter 'p26'"),
        ({"die1": 3}, FormatError, "unknown wildbg board parameter 'die1'"),
        ({"p3": "x"}, FormatError, "p3 = 'x' is not an integer"),
        ({"p3": 1.5}, FormatError, "p3 = 1.5 is not an integer"),
        ([0] * 25, FormatError, "has 25 entries, expected 26"),
        ("p1=2", FormatError, "got a string"),
    ],
)
def test_validation_messages(params, error, message):
    with pytest.raises(error) as info:
        board_from_wildbg(params)
    assert message in str(info.value)


def test_to_wildbg_rejects_invalid_board():
    b = starting_board()
    b[1, 18] = 1  # opponent column 18 = mover's point 6, held by the mover
    with pytest.raises(InvalidPositionError, match="held by both sides"):
        to_wildbg(b)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_property_round_trip(seed):
    rng = np.random.default_rng(seed)
    board = np.zeros((2, 25), dtype=np.int8)
    # at least one checker for the side to move: both sides borne off is an impossible position
    np.add.at(board[0], rng.integers(0, 25, size=rng.integers(1, 16)), 1)
    free = [c for c in range(24) if board[0, 23 - c] == 0] + [24]
    np.add.at(board[1], rng.choice(free, size=rng.integers(0, 16)), 1)
    params = to_wildbg(board)
    assert all(-15 <= v <= 15 for v in params.values())
    assert params.get("p25", 0) >= 0 and params.get("p0", 0) <= 0
    assert np.array_equal(board_from_wildbg(params), board)
    # pip count agrees: x's checker on point i is i pips away, bar 25
    assert sum(int(k[1:]) * v for k, v in params.items() if v > 0) == int(
        (board[0].astype(int) * np.arange(1, 26)).sum()
    )
