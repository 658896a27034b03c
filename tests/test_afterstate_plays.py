"""bgai.analysis.plays.afterstate_plays: the plays (steps, hits, notation) read off the generator's afterstates must
be exactly those of bgai.core.movegen.legal_plays, the reference (itself checked against GNU Backgammon in
tests/test_movegen_reference.py), and rank_plays must list the same plays in the same order as before.

Checked on every reference position (tests/data/reference_positions.npz: contact, races, bear-offs, checkers on
the bar, closed boards) with every other roll of the 21 (each roll on half of them, in either die order), and on
random legal positions.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from conftest import legal_positions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgai.agents.registry import make_agent
from bgai.analysis.api import rank_plays
from bgai.analysis.plays import afterstate_plays
from bgai.core.board import starting_board
from bgai.core.movegen import Play, afterstates, legal_plays
from bgai.errors import IllegalMoveError

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]


def _check(board: np.ndarray, dice: tuple[int, int]) -> list[str]:
    """Differences between afterstate_plays and legal_plays for one position and roll (empty when none)."""
    ref = {p.afterstate.tobytes(): p for p in legal_plays(board, dice)}
    after, _ = afterstates(board, np.array(dice))
    got = afterstate_plays(board, after, dice)
    bad = []
    if len(got) != len(ref):
        bad.append(f"{len(got)} plays, legal_plays has {len(ref)}")
    for a, p in zip(after, got):
        q = ref.get(a.tobytes())
        if not np.array_equal(p.afterstate, a):
            bad.append("afterstate not the row's")
        if q is None or p.steps != q.steps or p.notation != q.notation:
            bad.append(f"{board.tolist()} {dice}: {p.steps} ({p.notation!r}), legal_plays "
                       f"{None if q is None else q.steps}")
    return bad


def test_reference_positions_all_rolls_equal_legal_plays():
    boards = np.load(FIXTURE)["boards"]
    bad = []
    for i, b in enumerate(boards):  # every roll on half the positions (alternately), the other die order on the rest
        for d1, d2 in ROLLS[i % 2 :: 2]:
            bad += _check(b, (d1, d2) if i % 4 < 2 else (d2, d1))
    assert not bad, f"{len(bad)} differences, e.g. {bad[:3]}"




@given(legal_positions(mover_on_board=True), st.tuples(st.integers(1, 6), st.integers(1, 6)))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_positions_equal_legal_plays(board, dice):
    assert not _check(board, dice)
    # lazy plays: the same steps, read when asked for, in any order; they pickle
    after, _ = afterstates(board, np.array(dice))
    eager = afterstate_plays(board, after, dice)
    lazy = afterstate_plays(board, after, dice, lazy=True)
    assert all(isinstance(p, Play) for p in lazy)
    assert [p.notation for p in lazy[::-1]][::-1] == [p.notation for p in eager]
    assert [p.steps for p in pickle.loads(pickle.dumps(lazy))] == [p.steps for p in eager] == [p.steps for p in lazy]
    assert lazy == eager


def test_known_plays_and_hits():
    start = starting_board()
    after, _ = afterstates(start, np.array((3, 1)))
    notations = [p.notation for p in afterstate_plays(start, after, (3, 1))]
    assert len(notations) == 16 and {"8/5 6/5", "24/20", "24/23 13/10", "13/10 6/5"} <= set(notations)
    # two checkers landing on one blot with 6-1: the higher die's step (played first) hits it
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, [12, 7]] = 1
    b[0, 0] = 13
    b[1, 24 - 7] = 1
    b[1, 0] = 14
    after, _ = afterstates(b, np.array((6, 1)))
    plays = {p.notation: p.steps for p in afterstate_plays(b, after, (6, 1))}
    assert plays["13/7* 8/7"] == ((13, 7, True), (8, 7, False))
    # no legal play: the unchanged board, no steps
    closed = np.zeros((2, 25), dtype=np.int8)
    closed[0, 24] = 1  # (14 borne off)
    closed[1, 0:6] = 2  # the opponent's home board closed
    closed[1, 12] = 3
    after, _ = afterstates(closed, np.array((6, 6)))
    (p,) = afterstate_plays(closed, after, (6, 6))
    assert p.steps == () and p.notation == "" and np.array_equal(p.afterstate, closed)


def test_unreachable_row_is_refused():
    start = starting_board()
    other = start.copy()
    other[0, 23] -= 1
    other[0, 0] += 1  # 24/1: no roll does that
    with pytest.raises(IllegalMoveError):
        afterstate_plays(start, other[None], (3, 1))


def test_rank_plays_lists_legal_plays_in_the_generators_order():
    agent = make_agent("pubeval")
    boards = np.load(FIXTURE)["boards"][::20]
    for b in boards:
        for dice in [(3, 1), (6, 6), (5, 2)]:
            ranked = rank_plays(agent, b, dice)
            ref = {p.afterstate.tobytes(): p for p in legal_plays(b, dice)}
            assert len(ranked) == len(ref)
            for r in ranked:
                q = ref[r.afterstate.tobytes()]
                assert r.play.steps == q.steps and r.notation == q.notation and r.play == q
