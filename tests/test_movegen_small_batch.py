"""Small batches of bgai.core.movegen.afterstates (plain-Python planner) against the batched numpy planner.

Batches of up to ``SMALL_BATCH`` positions take a plain-Python path (fast for one position); it must return the
very same rows in the very same order as the numpy path, which stays the reference (itself checked against GNU
Backgammon in tests/test_movegen_reference.py).  Checked on every reference position with all 21 rolls (either
die order), on random legal positions, and for the errors raised on invalid boards.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import error_of, legal_positions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgai.core.board import starting_board
from bgai.core.movegen import SMALL_BATCH, afterstates, use_compiled
from bgai.errors import InvalidDiceError, InvalidPositionError

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)




dice_st = st.tuples(st.integers(1, 6), st.integers(1, 6))
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def numpy_path():
    """This module compares the plain-Python planner with the numpy planner: the compiled generator (checked
    against the numpy planner in tests/test_jit_movegen.py) stays off."""
    use_compiled(False)


@pytest.fixture(scope="module")
def pairs():
    boards = np.load(FIXTURE)["boards"]
    all_boards = np.repeat(boards, len(ROLLS), axis=0)
    all_dice = np.tile(ROLLS, (len(boards), 1))
    swap = np.arange(len(all_dice)) % 2 == 1
    all_dice[swap] = all_dice[swap][:, ::-1]
    return all_boards, all_dice


def test_small_batch_threshold_is_small():
    assert 1 <= SMALL_BATCH <= 16


def test_single_positions_equal_the_batched_generator(pairs):
    boards, dice = pairs
    ref, ref_src = afterstates(boards, dice)  # numpy path (large batch)
    starts = np.searchsorted(ref_src, np.arange(len(boards) + 1))
    bad = []
    for i in range(len(boards)):
        after, src = afterstates(boards[i], dice[i])
        if not (np.array_equal(after, ref[starts[i] : starts[i + 1]]) and not src.any()):
            bad.append(i)
    assert not bad, f"{len(bad)} positions differ, e.g. {boards[bad[0]].tolist()} {dice[bad[0]].tolist()}"


@pytest.mark.parametrize("k", [2, 3, SMALL_BATCH])
def test_small_batches_equal_the_batched_generator(pairs, k):
    boards, dice = pairs
    boards, dice = boards[: 300 * k], dice[: 300 * k]
    ref, ref_src = afterstates(boards, dice)
    starts = np.searchsorted(ref_src, np.arange(len(boards) + 1))
    for i in range(0, len(boards), k):
        after, src = afterstates(boards[i : i + k], dice[i : i + k])
        lo, hi = starts[i], starts[min(i + k, len(boards))]
        np.testing.assert_array_equal(after, ref[lo:hi])
        np.testing.assert_array_equal(src + i, ref_src[lo:hi])
        assert after.dtype == np.int8 and src.dtype == np.int64


@FAST
@given(legal_positions(), dice_st)
def test_random_positions_equal_the_batched_generator(board, dice):
    pad = np.repeat(starting_board()[None], SMALL_BATCH, axis=0)  # batch above the threshold: numpy path
    big = np.concatenate([board[None], pad])
    big_dice = np.concatenate([np.array([dice]), np.full((SMALL_BATCH, 2), 1)])
    ref, ref_src = afterstates(big, big_dice)
    after, src = afterstates(board, dice)
    np.testing.assert_array_equal(after, ref[ref_src == 0])


def test_invalid_input_raises_the_same_errors():
    start = starting_board()
    extra = start.copy()
    extra[0, 3] += 1  # 16 checkers
    both = start.copy()
    both[0, 23] -= 1
    both[0, 3] += 1  # side to move on its 4 point ...
    both[1, 23] -= 1
    both[1, 20] += 1  # ... and the opponent on the same point (its 21)
    negative = start.copy()
    negative[0, 5] = -1
    for bad in (extra, both, negative):
        small = error_of(afterstates, np.stack([start, bad]), np.array([[3, 1], [3, 1]]))
        large = error_of(afterstates, np.stack([start, bad] + [start] * SMALL_BATCH), np.full((SMALL_BATCH + 2, 2), 3))
        assert small is not None and small[0] is InvalidPositionError
        assert small == large
    assert error_of(afterstates, start, (0, 3))[0] is InvalidDiceError


def test_batches_with_many_plays_per_position(pairs):
    """Batches whose plays outgrow the output's first allocation (about 20 rows a position) come out whole."""
    boards, dice = pairs
    counts = np.bincount(afterstates(boards, dice)[1], minlength=len(boards))
    rich = np.argsort(-counts, kind="stable")[:200]  # the pairs with the most plays (small doubles, open boards)
    assert counts[rich].mean() > 40
    after, src = afterstates(boards[rich], dice[rich])
    assert len(after) == counts[rich].sum()
    for j, i in enumerate(rich):
        np.testing.assert_array_equal(after[src == j], afterstates(boards[i], dice[i])[0])
