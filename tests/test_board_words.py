"""The word-read fast paths of all_home and finished_probabilities / finished_or_evaluate against plain numpy."""

import numpy as np

from bgai.core.equity import finished_or_evaluate, finished_probabilities
from bgai.model.routing import all_home


def _random_boards(rng, n, negative=False):
    """Sparse boards, some rows empty, some checkers outside the home boards (counts 0..15, or -2..15)."""
    keep = rng.random((n, 2, 25)) < rng.random() * 0.3
    counts = rng.integers(-2 if negative else 0, 16, size=(n, 2, 25))
    b = (keep * counts).astype(np.int8)
    b[rng.random(n) < 0.3, :, 6:] = 0  # a third with every checker in the home boards
    return b


def _all_home_reference(b):
    f = b.reshape(b.shape[0], 50)
    outside = np.r_[6:25, 31:50]
    return ~f[:, outside].any(axis=1) & f[:, :25].any(axis=1) & f[:, 25:].any(axis=1)


def test_all_home_matches_reference():
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(300):
        b = _random_boards(rng, int(rng.integers(1, 120)), negative=bool(rng.integers(2)))
        for x in (b, b[::2], b[:, :, :]):  # contiguous and strided batches
            got = all_home(x)
            assert np.array_equal(got, _all_home_reference(x))
            hits += int(got.sum())
    assert hits > 100  # bear-offs were tested, not only non-bear-offs
    assert all_home(np.zeros((0, 2, 25), np.int8)).shape == (0,)


def test_finished_matches_sums():
    rng = np.random.default_rng(8)
    for _ in range(200):
        b = _random_boards(rng, int(rng.integers(1, 120)))
        b[:, 0, 0] += (b[:, 0].sum(axis=1) == 0) & (b[:, 1].sum(axis=1) == 0)  # never both rows empty
        over, _ = finished_probabilities(b)
        assert np.array_equal(over, b[:, 1].sum(axis=1) == 0)
        seen = []

        def evaluate(live):
            seen.append(live.copy())
            return np.full((live.shape[0], 5), 0.25)

        out = finished_or_evaluate(b, evaluate)
        live = (b[:, 0].sum(axis=1) > 0) & (b[:, 1].sum(axis=1) > 0)
        assert np.array_equal(out[live], np.full((int(live.sum()), 5), 0.25))
        if live.any():
            assert np.array_equal(seen[0], b[live])
        assert np.all(out[b[:, 1].sum(axis=1) == 0, 0] == 0.0)  # the side on roll lost
        assert np.all(out[(b[:, 0].sum(axis=1) == 0), 0] == 1.0)  # the side on roll won


def test_bearoff_unchecked_lookup_matches_checked():
    from bgai.model import bearoff

    db = bearoff.get_database()
    rng = np.random.default_rng(9)
    pos = bearoff.positions()
    pick = rng.integers(0, len(pos), size=(3000, 2))
    b = np.zeros((3000, 2, 25), dtype=np.int8)
    b[:, 0, :6], b[:, 1, :6] = pos[pick[:, 0]], pos[pick[:, 1]]
    b = b[(b.sum(axis=2) > 0).all(axis=1)]
    checked = db.probabilities(b, validate=True)
    assert np.array_equal(db.probabilities(b, validate=False), checked)
    assert 0.3 < checked[:, 0].mean() < 0.7  # real values, both sides winning often
