"""Cross-check of bgai.core.movegen.afterstates against GNU Backgammon's move generator (gnubg_nn.moves).

The fixture tests/data/reference_positions.npz (made by scripts/make_reference_positions.py, seeded) holds
positions from real play -- gnubg 0-ply self-play and random play: openings, middle games, two or more on the
bar, closed boards, races, bear-offs -- and every position is paired with all 21 rolls.  For every pair the set
of afterstates must equal gnubg's exactly (no missing, no extra, no duplicates).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from bgai.core.movegen import afterstates, legal_plays

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz")
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)


@pytest.fixture(scope="module")
def reference_pairs():
    data = np.load(FIXTURE)
    boards = data["boards"]
    kinds = data["kinds"]
    n = len(boards)
    all_boards = np.repeat(boards, len(ROLLS), axis=0)
    all_dice = np.tile(ROLLS, (n, 1))
    # also the other die order for half of the pairs: dice order must not matter
    swap = np.arange(len(all_dice)) % 2 == 1
    all_dice[swap] = all_dice[swap][:, ::-1]
    return all_boards, all_dice, np.repeat(kinds, len(ROLLS)), [str(k) for k in data["kind_names"]]


def test_fixture_covers_the_kinds_asked_for(reference_pairs):
    boards, dice, kinds, names = reference_pairs
    assert len(boards) >= 20_000
    counts = {name: int((kinds == i).sum()) for i, name in enumerate(names)}
    for name in ("opening", "middle", "random", "bar2", "closed", "race", "bearoff"):
        assert counts[name] >= 21 * 50, (name, counts)
    assert (boards[:, 0, 24] >= 2).sum() >= 21 * 100  # several on the bar
    home = boards[:, 0, 6:].sum(axis=1) == 0
    top = np.where(boards[:, 0, :6] > 0, np.arange(1, 7), 0).max(axis=1)  # highest occupied home point
    gaps = home & ((boards[:, 0, :6] == 0) & (np.arange(1, 7) < top[:, None])).any(axis=1)
    assert gaps.sum() >= 21 * 100  # bear-offs with gaps below the highest checker
    assert len({tuple(sorted(d)) for d in dice.tolist()}) == 21


def test_afterstates_equal_gnubg_on_reference_positions(reference_pairs, gnubg_ref):
    boards, dice, _, _ = reference_pairs
    after, src = afterstates(boards, dice)
    assert after.dtype == np.int8 and after.shape[1:] == (2, 25)
    assert src.dtype == np.int64 and np.all(np.diff(src) >= 0)
    keys = gnubg_ref.keys(after)
    starts = np.searchsorted(src, np.arange(len(boards) + 1))
    mismatches = []
    for i in range(len(boards)):
        mine = keys[starts[i] : starts[i + 1]]
        ref = gnubg_ref.move_keys(boards[i], *dice[i])
        if not ref:  # no legal play: gnubg lists nothing, bgai returns the unchanged board
            ref = gnubg_ref.keys(boards[i : i + 1])
        if len(set(mine)) != len(mine) or set(mine) != set(ref):
            mismatches.append((i, dice[i].tolist(), len(mine), len(set(mine)), len(ref)))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:5]}"
    assert int(starts[-1]) == len(after)


def test_one_die_only_positions_are_in_the_fixture(reference_pairs):
    """Positions where only one die can be played (checked with the single-position generator)."""
    boards, dice, kinds, names = reference_pairs
    closed = np.flatnonzero((kinds == names.index("closed")) | (kinds == names.index("bar2")))[:1500]
    one = sum(1 for i in closed for p in legal_plays(boards[i], dice[i])[:1] if len(p.steps) == 1)
    assert one >= 50


def test_legal_plays_afterstates_equal_batched(reference_pairs):
    boards, dice, _, _ = reference_pairs
    rng = np.random.default_rng(7)
    idx = np.sort(rng.choice(len(boards), size=1500, replace=False))
    after, src = afterstates(boards[idx], dice[idx])
    starts = np.searchsorted(src, np.arange(len(idx) + 1))
    for j, i in enumerate(idx):
        batch = {a.tobytes() for a in after[starts[j] : starts[j + 1]]}
        single = [p.afterstate.tobytes() for p in legal_plays(boards[i], dice[i])]
        assert len(single) == len(set(single))
        assert set(single) == batch, (i, dice[i].tolist())


def test_representative_steps_are_the_ones_gnubg_lists(reference_pairs, gnubg_ref):
    """legal_plays picks, for each afterstate, the step list GNU Backgammon gives (gnubg_nn.moves verbose)."""
    import gnubg_nn

    boards, dice, _, _ = reference_pairs
    rng = np.random.default_rng(5)
    n = 0
    for i in rng.choice(len(boards), size=400, replace=False):
        b, (d1, d2) = boards[i], dice[i]
        gb = [b[1].tolist(), b[0].tolist()]
        listed = {}
        for key, steps in gnubg_nn.moves(gb, int(max(d1, d2)), int(min(d1, d2)), 1):
            listed[bytes.fromhex(key.translate(str.maketrans("ABCDEFGHIJKLMNOP", "0123456789abcdef")))] = steps
        for p in legal_plays(b, (d1, d2)):
            if p.steps:
                assert tuple((f, t) for f, t, _ in p.steps) == tuple(listed[gnubg_ref.keys(p.afterstate[None])[0]])
                n += 1
    assert n > 3000
