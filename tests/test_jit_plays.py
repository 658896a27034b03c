"""The compiled step reader (numba kernel bgai.analysis.plays_jit.direct_steps) against the Python reader.

bgai.analysis.plays.afterstate_plays reads each play's steps off its afterstate; its Python reader stays the
reference (itself checked against bgai.core.movegen.legal_plays in tests/test_afterstate_plays.py).  With the
compiled reader in use, every play must get the very same steps (numbers, hits, order) and notation: on every
reference position with a third of the 21 rolls each, in either die order, and on random legal boards with every
roll; every play the kernel reads off directly (not left to the search) must have legal_plays' steps; the kernel
must read off most plays (hits, entries from the bar, doubles, one checker using both dice), and a row no legal
play reaches must raise the same error as on the Python path.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import compiled_kernel_fixture, error_of, legal_positions
from hypothesis import HealthCheck, given, settings

from bgai.analysis import plays
from bgai.analysis.plays import afterstate_plays, use_compiled
from bgai.analysis.plays_jit import SEARCH, direct_steps, unpack_steps
from bgai.core.board import starting_board
from bgai.core.movegen import afterstates, legal_plays

pytest.importorskip("numba")

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]


compiled = compiled_kernel_fixture(use_compiled, plays._STEP_READER)  # on for this module, then reset


def python_steps(board, after, dice, lazy=True):
    """The reference: the steps with the compiled reader turned off."""
    use_compiled(False)
    try:
        return [p.steps for p in afterstate_plays(board, after, dice, lazy=lazy)]
    finally:
        assert use_compiled(True)


def kernel_codes(board, after, dice) -> list[int]:
    after = np.array(after, dtype=np.int8)
    after.setflags(write=False)
    return plays._STEP_READER.kernel(np.array(board, dtype=np.int8), after, max(dice), min(dice)).tolist()


def compare(board, dice, with_legal_plays: bool, kinds: dict) -> None:
    after, _ = afterstates(board, np.array(dice))
    ref = python_steps(board, after, dice)
    got = afterstate_plays(board, after, dice, lazy=True)
    assert [p.steps for p in got] == ref, (board.tolist(), dice)
    assert [p.notation for p in got] == [p.notation for p in afterstate_plays(board, after, dice)]
    codes = kernel_codes(board, after, dice)
    legal = {p.afterstate.tobytes(): p.steps for p in legal_plays(board, dice)} if with_legal_plays else None
    for a, code, steps in zip(after, codes, ref):
        kinds["rows"] += 1
        if code == SEARCH:
            kinds["search"] += 1
            continue
        assert unpack_steps(code) == steps
        if legal is not None:
            assert steps == legal[a.tobytes()]
        kinds["hit"] += any(h for _, _, h in steps)
        kinds["bar"] += any(f == 25 for f, _, _ in steps)
        kinds["double"] += len(steps) > 2
        kinds["both dice, one checker"] += len(steps) == 2 and steps[0][1] == steps[1][0]


def test_the_compiled_reader_is_in_use():
    assert use_compiled(True) and plays._STEP_READER.kernel is not None
    assert not use_compiled(False) and plays._STEP_READER.kernel is None
    assert use_compiled(True)


def test_reference_positions_every_play():
    boards = np.load(FIXTURE)["boards"]
    kinds = dict.fromkeys(["rows", "search", "hit", "bar", "double", "both dice, one checker"], 0)
    for i, board in enumerate(boards):
        for j, roll in enumerate(ROLLS[i % 3 :: 3]):
            compare(board, roll if j % 2 else roll[::-1], with_legal_plays=i % 4 == 0, kinds=kinds)
    assert kinds["rows"] > 50000
    assert kinds["search"] < 0.1 * kinds["rows"]  # the kernel reads off most plays itself
    assert min(kinds.values()) > 500, kinds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=legal_positions(mover_on_board=True))
def test_random_legal_boards_every_roll(board):
    kinds = dict.fromkeys(["rows", "search", "hit", "bar", "double", "both dice, one checker"], 0)
    for roll in ROLLS:
        compare(board, roll, with_legal_plays=True, kinds=kinds)


def test_nothing_to_play_and_unreachable_rows():
    board = starting_board()
    five = board.copy()
    five[0, 23] -= 1
    five[0, 18] += 1  # 24/19: no die or sum of 3-1
    off = board.copy()
    off[0, 5] -= 1  # a checker borne off with checkers outside the home board
    rows = np.stack([board, five, off])
    assert kernel_codes(board, rows, (3, 1)) == [0, SEARCH, SEARCH]
    for lazy in (True, False):
        for row in rows[1:]:
            expected = error_of(lambda: python_steps(board, row[None], (3, 1), lazy=lazy))
            assert expected is not None
            got = error_of(lambda: [p.steps for p in afterstate_plays(board, row[None], (3, 1), lazy=lazy)])
            assert got == expected
    lazy_plays = afterstate_plays(board, rows, (3, 1), lazy=True)
    assert lazy_plays[0].steps == () and lazy_plays[0].notation == ""
    assert error_of(lambda: lazy_plays[1].steps) is not None  # raised when asked for, not before


def test_kernel_codes_pack_the_steps():
    board = starting_board()
    after, _ = afterstates(board, np.array((6, 4)))
    codes = direct_steps(np.array(board), after, 6, 4).tolist()
    got = {unpack_steps(c) for c in codes}
    assert ((24, 18, False), (18, 14, False)) in got  # 24/14
    assert ((24, 18, False), (13, 9, False)) in got
    assert all(isinstance(x, int) and isinstance(h, bool) for s in got for f, t, h in s for x in (f, t))
