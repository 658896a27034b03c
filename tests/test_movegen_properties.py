"""Hypothesis properties of the move generator on random legal positions (not only positions from play)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgai.core.board import pip_counts, validate
from bgai.core.movegen import _afterstates_reference, afterstates, legal_plays


@st.composite
def positions(draw):
    """A legal board: each side 15 checkers spread over its points, bar and off, no point held by both.

    Half of the draws put the side to move in (or near) its home board, for bear-off positions."""
    board = np.zeros((2, 25), dtype=np.int8)
    home_only = draw(st.booleans())
    top = 8 if home_only else 25
    me = draw(st.lists(st.integers(0, top), min_size=15, max_size=15))  # 0 = off, 25 = bar
    for loc in me:
        if loc:
            board[0, loc - 1] += 1
    taken = {24 - (c + 1) for c in range(24) if board[0, c] > 0}  # opponent columns facing my checkers
    free = [c for c in range(24) if c not in taken]
    opp = draw(st.lists(st.sampled_from(free + [-1, 24]), min_size=15, max_size=15))  # -1 = off, 24 = bar
    for c in opp:
        if c >= 0:
            board[1, c] += 1
    if not board.any():  # both sides borne off is impossible: give the side to move its last checker
        board[0, 0] = 1
    return validate(board)[0]


dice_st = st.tuples(st.integers(1, 6), st.integers(1, 6))
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(positions(), dice_st)
def test_same_set_as_the_plain_python_generator(board, dice):
    after, src = afterstates(board[None], np.array([dice]))
    ref, _ = _afterstates_reference(board[None], np.array([dice]))
    got = [a.tobytes() for a in after]
    assert len(got) == len(set(got))
    assert set(got) == {a.tobytes() for a in ref}


@FAST
@given(positions(), dice_st)
def test_afterstate_invariants(board, dice):
    after, src = afterstates(board[None], np.array([dice]))
    assert np.all(src == 0) and len(after) >= 1
    validate(after)  # legal positions: no point held by both sides, counts in range
    steps_max = 4 if dice[0] == dice[1] else 2
    max_pips = steps_max * max(dice)
    before_pips = pip_counts(board)[0]
    opp_before = board[1].astype(int)
    for a in after.astype(int):
        # checker conservation: the opponent keeps all 15, the mover only loses checkers it bears off
        assert a[1].sum() == opp_before.sum()
        assert a[0].sum() <= board[0].sum()
        if a[0].sum() < board[0].sum():
            assert board[0, 6:].sum() <= steps_max  # bearing off needs (nearly) all checkers home
        # hits: only blots leave their point, each one to the opponent's bar
        changed = np.flatnonzero(a[1, :24] != opp_before[:24])
        assert np.all(opp_before[changed] == 1) and np.all(a[1, changed] == 0)
        assert a[1, 24] - opp_before[24] == len(changed)
        # never on a point the opponent holds with two or more
        held = opp_before[23::-1] >= 2  # on the mover's points 1..24
        assert not np.any(a[0, :24][held] > 0)
        # the mover moves forward only, by at most the pips rolled
        pips = pip_counts(a)[0]
        assert 0 <= before_pips[0] - pips[0] <= max_pips
    if len(after) > 1 or not np.array_equal(after[0], board):
        assert all(not np.array_equal(a, board) for a in after)


@FAST
@given(positions(), dice_st)
def test_dice_order_and_single_position_agree(board, dice):
    a1, _ = afterstates(board[None], np.array([dice]))
    a2, _ = afterstates(board[None], np.array([dice[::-1]]))
    s1 = {a.tobytes() for a in a1}
    assert s1 == {a.tobytes() for a in a2}
    plays = legal_plays(board, dice)
    assert {p.afterstate.tobytes() for p in plays} == s1
    n_steps = {len(p.steps) for p in plays}
    assert len(n_steps) == 1  # every legal play uses the same (maximal) number of dice
    if dice[0] != dice[1] and n_steps == {1}:
        dies = {p.steps[0][0] - p.steps[0][1] for p in plays if p.steps[0][1] > 0}
        assert len(dies) <= 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(positions(), dice_st), min_size=1, max_size=20))
def test_batch_equals_concatenated_singles(items):
    boards = np.stack([b for b, _ in items])
    dice = np.array([d for _, d in items])
    after, src = afterstates(boards, dice)
    assert np.all(np.diff(src) >= 0)
    for i, (b, d) in enumerate(items):
        single, _ = afterstates(b[None], np.array([d]))
        assert np.array_equal(after[src == i], single)
