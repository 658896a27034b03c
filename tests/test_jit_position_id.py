"""The compiled Position ID encoder (numba kernel bgai.core.position_id_jit.encode_ids) against the numpy encoder.

The numpy path of bgai.core.position_id.encode_position_ids stays the reference (itself checked against GNU
Backgammon's test vectors in tests/test_position_id.py); the compiled encoder must give the very same IDs: on every
reference position and its afterstates, on random legal boards (hypothesis), on the edge cases of the 80-bit key
(no checker left, every checker on the bar, 15 on one point, 30 checkers filling the key to its last bit), in one
batch and one board at a time, for arrays of any layout and dtype, and with the same errors for boards that are not
positions (passed with ``validate=False``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import compiled_kernel_fixture, error_of, legal_positions
from hypothesis import HealthCheck, given, settings

from bgai.core import position_id
from bgai.core.board import starting_board
from bgai.core.movegen import afterstates
from bgai.core.position_id import decode_position_ids, encode_position_id, encode_position_ids, use_compiled

pytest.importorskip("numba")

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)


compiled = compiled_kernel_fixture(use_compiled, position_id._ENCODER)  # on for this module, then reset


def numpy_ids(boards, validate=True):
    """The reference: the IDs with the compiled encoder turned off."""
    use_compiled(False)
    try:
        return encode_position_ids(boards, validate=validate)
    finally:
        assert use_compiled(True)


def edge_boards() -> np.ndarray:
    """Boards at the edges of the key: empty sides, full bars, stacks, 30 checkers (the last bit of 80 used)."""
    out = []
    for me_col, opp_col in [(24, 24), (0, 0), (23, 23), (0, 23), (5, 12), (24, 0)]:
        b = np.zeros((2, 25), dtype=np.int8)
        b[0, me_col] = 15
        b[1, opp_col] = 15
        if me_col < 24 and opp_col < 24 and 23 - opp_col == me_col:
            continue  # the same point for both sides
        out.append(b)
    one = np.zeros((2, 25), dtype=np.int8)
    one[0, 0] = 1  # one checker left, the opponent has borne off all
    out.append(one)
    other = np.zeros((2, 25), dtype=np.int8)
    other[1, 24] = 1  # the side on roll has borne off all, one opponent checker on the bar
    out.append(other)
    spread = np.zeros((2, 25), dtype=np.int8)
    spread[0, :15] = 1  # 15 single checkers of each side: every slot used
    spread[1, :9] = 1  # (the opponent's points 1..9 are the mover's 24..16)
    spread[1, 24] = 6
    out.append(spread)
    out.append(starting_board())
    return np.array(out, dtype=np.int8)


def test_the_compiled_encoder_is_in_use():
    assert use_compiled(True) and position_id._ENCODER.kernel is not None
    assert not use_compiled(False) and position_id._ENCODER.kernel is None
    assert use_compiled(True)


def test_edge_cases_and_the_starting_position():
    boards = edge_boards()
    ids = encode_position_ids(boards)
    assert ids == numpy_ids(boards)
    assert ids[-1] == "4HPwATDgc/ABMA"  # the GNU Backgammon manual's starting position
    np.testing.assert_array_equal(decode_position_ids(ids), boards)
    assert all(encode_position_ids(b) == [encode_position_id(b)] for b in boards)  # one board at a time


def test_reference_positions_and_their_afterstates():
    boards = np.load(FIXTURE)["boards"]
    dice = ROLLS[np.arange(len(boards)) % len(ROLLS)]
    after, _ = afterstates(boards, dice)
    every = np.concatenate([boards, after])
    assert len(every) > 15000
    ids = encode_position_ids(every)
    assert ids == numpy_ids(every)
    assert len(set(ids)) == len(np.unique(every.reshape(len(every), -1), axis=0))  # distinct boards, distinct IDs
    for n in (1, 2, 17):  # small batches, as an answer's afterstates come
        assert encode_position_ids(every[:n]) == ids[:n]
        assert encode_position_ids(every[100 : 100 + n], validate=False) == ids[100 : 100 + n]


def test_any_layout_and_dtype():
    boards = np.load(FIXTURE)["boards"][:64]
    ref = numpy_ids(boards)
    readonly = boards.copy()
    readonly.setflags(write=False)
    assert encode_position_ids(readonly) == ref
    assert encode_position_ids(np.asfortranarray(boards)) == ref
    assert encode_position_ids(boards.astype(np.int64)) == ref
    doubled = np.repeat(boards, 2, axis=0)[::2]  # a strided view
    assert not doubled.flags.c_contiguous
    assert encode_position_ids(doubled) == ref
    assert encode_position_ids(boards[0]) == ref[:1]  # one (2, 25) board
    assert encode_position_ids(boards[:0]) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=legal_positions())
def test_random_legal_boards(board):
    assert encode_position_ids(board) == numpy_ids(board)
    assert encode_position_ids(np.stack([board, board[::-1]])) == numpy_ids(np.stack([board, board[::-1]]))


def test_not_a_position_raises_as_the_numpy_path_does():
    negative = starting_board()
    negative[0, 3] = -1
    too_many = np.zeros((2, 25), dtype=np.int8)
    too_many[0, 24] = too_many[1, 24] = 16  # 32 checkers: no 80-bit key
    for bad in (negative, too_many):
        batch = np.stack([starting_board(), bad])
        expected = error_of(lambda: numpy_ids(batch, validate=False))
        assert expected is not None
        assert error_of(lambda: encode_position_ids(batch, validate=False)) == expected
        assert error_of(lambda: encode_position_ids(batch)) == error_of(lambda: numpy_ids(batch))
