"""The compiled move generator (numba kernel bgai.core.movegen_jit.generate) against the numpy generator.

The numpy path of bgai.core.movegen.afterstates stays the reference (itself checked against GNU Backgammon in
tests/test_movegen_reference.py); the compiled generator must return the very same rows (afterstates) in the very
same order with the same input indices, at batch 1 and in big batches: on every reference position with all 21
rolls in either die order, on positions from seeded random self-play (bar entries, bear-offs, forced single dice,
doubles, no legal play: each kind counted), on random legal boards, with every accepted dice type, and with the
same errors for bad input.  With BGAI_NUMBA=0 (a subprocess) the numpy path runs and gives the same output.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import compiled_kernel_fixture, error_of, legal_positions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgai.core import movegen
from bgai.core.board import starting_board, validate
from bgai.core.movegen import afterstates, legal_plays, use_compiled

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "data", "reference_positions.npz")
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)


def numpy_afterstates(boards, dice, validate=True):
    """The reference: afterstates with the compiled generator turned off."""
    use_compiled(False)
    try:
        return afterstates(boards, dice, validate=validate)
    finally:
        assert use_compiled(True)


def compiled_afterstates(boards, dice, validate=True):
    assert use_compiled(True)
    return afterstates(boards, dice, validate=validate)


compiled = compiled_kernel_fixture(use_compiled, movegen._GENERATOR)  # on for this module, then reset


@pytest.fixture(scope="module")
def reference_pairs():
    boards = np.load(FIXTURE)["boards"]
    all_boards = np.repeat(boards, len(ROLLS), axis=0)
    all_dice = np.tile(ROLLS, (len(boards), 1))
    swap = np.arange(len(all_dice)) % 2 == 1
    all_dice[swap] = all_dice[swap][:, ::-1]
    return all_boards, all_dice


def selfplay_pairs(seed: int, games: int) -> tuple[np.ndarray, np.ndarray]:
    """(position, roll) pairs met in seeded random self-play (uniformly random legal plays), side to move in row 0."""
    rng = np.random.default_rng(seed)
    boards, dice = [], []
    for _ in range(games):
        b = starting_board()
        while True:
            d = rng.integers(1, 7, size=2)
            boards.append(b)
            dice.append(d)
            after, _ = numpy_afterstates(b, d)
            a = after[rng.integers(len(after))]
            if a[0].sum() == 0:  # the mover has borne off all checkers
                break
            b = np.ascontiguousarray(a[::-1])  # the opponent moves next
    return np.array(boards, dtype=np.int8), np.array(dice, dtype=np.int64)


@pytest.fixture(scope="module")
def selfplay():
    return selfplay_pairs(seed=7, games=40)


def assert_same(boards, dice, batch: int, validate=True):
    ref, ref_src = numpy_afterstates(boards, dice, validate=validate)
    starts = np.searchsorted(ref_src, np.arange(len(boards) + 1))
    for i in range(0, len(boards), batch):
        after, src = compiled_afterstates(boards[i : i + batch], dice[i : i + batch], validate=validate)
        lo, hi = starts[i], starts[min(i + batch, len(boards))]
        assert after.dtype == np.int8 and src.dtype == np.int64 and after.shape[1:] == (2, 25)
        np.testing.assert_array_equal(after, ref[lo:hi], err_msg=f"batch {batch} at input {i}")
        np.testing.assert_array_equal(src + i, ref_src[lo:hi])


def test_the_compiled_generator_is_in_use():
    assert use_compiled(True) and movegen._GENERATOR.kernel is not None
    assert not use_compiled(False) and movegen._GENERATOR.kernel is None
    assert use_compiled(True)


def test_reference_positions_in_one_batch(reference_pairs):
    boards, dice = reference_pairs
    assert len(boards) > 20000
    assert_same(boards, dice, len(boards))


@pytest.mark.parametrize("batch", [1, 7, 64, 4096])
def test_reference_positions_in_batches(reference_pairs, batch):
    boards, dice = reference_pairs
    if batch < 64:  # every 4th pair at the smallest batch sizes (the numpy reference is one big batch anyway)
        boards, dice = boards[::4], dice[::4]
    assert_same(boards, dice, batch)


def pips(boards: np.ndarray) -> np.ndarray:
    """The mover's pip count of each ``(..., 2, 25)`` board (bar = 25)."""
    return (boards[..., 0, :].astype(np.int64) * np.arange(1, 26)).sum(axis=-1)


def test_selfplay_positions_of_every_kind(selfplay):
    boards, dice = selfplay
    ref, ref_src = numpy_afterstates(boards, dice)
    counts = np.bincount(ref_src, minlength=len(boards))
    first = np.searchsorted(ref_src, np.arange(len(boards)))
    dbl = dice[:, 0] == dice[:, 1]
    most = np.zeros(len(boards), dtype=np.int64)  # the most pips any play of the input moves
    np.maximum.at(most, ref_src, pips(boards)[ref_src] - pips(ref))
    maybe_one = ~dbl & (most > 0) & (most < dice.sum(axis=1))  # (or a bear-off with a high die)
    one_die = [i for i in maybe_one.nonzero()[0] if len(legal_plays(boards[i], dice[i])[0].steps) == 1]
    found = {
        "bar": int((boards[:, 0, 24] > 0).sum()),
        "bear-off": int(((boards[:, 0, 6:].sum(axis=1) == 0)).sum()),
        "doubles": int(dbl.sum()),
        "no legal play": int(((counts == 1) & (ref[first] == boards).all(axis=(1, 2))).sum()),
        "one die only": len(one_die),
    }
    assert len(boards) > 3000
    assert min(found.values()) >= 20, found
    for batch in (1, 33, len(boards)):
        assert_same(boards, dice, batch)


def test_forced_single_die_and_no_play_examples():
    # the mover: one checker on its 24 point, 14 on its ace point; the opponent holds the mover's 14..19 points
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 23] = 1
    b[0, 0] = 14
    for p in range(14, 20):
        b[1, 24 - p] = 2
    b[1, 24] = 3  # on the opponent's bar
    b = validate(b)[0]
    for d in [(6, 5), (5, 6), (6, 1), (1, 6), (2, 1), (4, 4), (1, 1), (6, 6), (5, 5)]:
        ref = numpy_afterstates(b, d)
        got = compiled_afterstates(b, d)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
    after, _ = compiled_afterstates(b, (6, 5))  # 24/18 and 24/19 blocked, the ace point cannot bear off: no play
    assert len(after) == 1 and np.array_equal(after[0], b)
    after, _ = compiled_afterstates(b, (6, 1))  # only 24/23 (23/17 and 24/18 blocked): the one die that can move
    expect = b.copy()
    expect[0, 23], expect[0, 22] = 0, 1
    assert len(after) == 1 and np.array_equal(after[0], expect)




@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_positions(), st.tuples(st.integers(1, 6), st.integers(1, 6)))
def test_random_positions(board, dice):
    ref = numpy_afterstates(board, dice)
    got = compiled_afterstates(board, dice)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])


def test_positions_with_many_plays_grow_the_output(reference_pairs):
    """Inputs with more plays than the output's first allocation (64 + 20 rows a position) come out whole."""
    boards, dice = reference_pairs
    counts = np.bincount(numpy_afterstates(boards, dice)[1], minlength=len(boards))
    rich = np.argsort(-counts, kind="stable")[:100]
    assert counts[rich[0]] > 84 and counts[rich].mean() > 40
    assert_same(boards[rich], dice[rich], 1)
    assert_same(boards[rich], dice[rich], len(rich))


def test_trusted_batches_without_validation(selfplay):
    boards, dice = selfplay
    assert_same(boards[:2000], dice[:2000], 500, validate=False)


def test_dice_types_and_single_board():
    b = starting_board()
    ref = numpy_afterstates(b, (3, 1))
    for d in [(3, 1), [1, 3], np.array([3, 1], dtype=np.uint8), np.array([[1, 3]], dtype=np.int8),
              np.array([3.0, 1.0]), np.array([[3, 1]], dtype=np.uint64)]:
        got = compiled_afterstates(b, d)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
    empty = compiled_afterstates(np.zeros((0, 2, 25), dtype=np.int8), np.zeros((0, 2), dtype=np.int64))
    ref_empty = numpy_afterstates(np.zeros((0, 2, 25), dtype=np.int8), np.zeros((0, 2), dtype=np.int64))
    assert empty[0].shape == ref_empty[0].shape == (0, 2, 25) and empty[1].shape == ref_empty[1].shape == (0,)


def test_bad_input_raises_the_same_errors():
    start = starting_board()
    extra = start.copy()
    extra[0, 3] += 1  # 16 checkers
    both = start.copy()
    both[0, 23] -= 1
    both[0, 3] += 1  # the side to move on its 4 point ...
    both[1, 23] -= 1
    both[1, 20] += 1  # ... and the opponent on the same point (its 21)
    negative = start.copy()
    negative[0, 5] = -1
    many = start.copy()
    many[1, 0] = 16
    many[1, 5] = 0
    cases = [(np.stack([start, bad] + [start] * k), np.full((k + 2, 2), 3)) for bad in (extra, both, negative, many)
             for k in (0, 20)]
    bad_dice = np.full((3, 2), 3)
    bad_dice[2] = (7, 1)
    cases += [
        (start, (0, 3)),
        (start, (3, 7)),
        (start, (3,)),
        (start, (2.5, 1)),
        (start, np.array([True, True])),
        (np.stack([start] * 3), bad_dice),
        (np.stack([start, extra, start]), bad_dice),  # both bad: the dice error first, as on the numpy path
        (np.stack([start] * 3), np.full((2, 2), 3)),
        (np.zeros((2, 24), dtype=np.int8), (3, 1)),
    ]
    for boards, dice in cases:
        ref = error_of(numpy_afterstates, boards, dice)
        assert ref is not None
        assert error_of(compiled_afterstates, boards, dice) == ref


PROBE = """
import hashlib, json, sys
import numpy as np
from bgai.core import movegen
from bgai.util import jit
d = np.load(sys.argv[1])
after, src = movegen.afterstates(d["boards"], d["dice"])
one = [movegen.afterstates(d["boards"][i], d["dice"][i])[0].tobytes() for i in range(0, len(d["dice"]), 50)]
h = lambda x: hashlib.sha256(x).hexdigest()
print(json.dumps({"available": jit.AVAILABLE, "used": movegen.use_compiled(), "numba": "numba" in sys.modules,
                  "after": h(after.tobytes()), "src": h(src.tobytes()), "one": h(b"".join(one))}))
"""


def test_bgai_numba_0_takes_the_numpy_path_with_equal_output(selfplay, tmp_path):
    boards, dice = selfplay
    boards, dice = boards[:3000], dice[:3000]
    path = tmp_path / "pairs.npz"
    np.savez(path, boards=boards, dice=dice)
    env = dict(os.environ, BGAI_NUMBA="0", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, env=env,
                         cwd=ROOT, check=True)
    got = json.loads(out.stdout)
    assert got["available"] is False and got["used"] is False and got["numba"] is False
    after, src = compiled_afterstates(boards, dice)
    one = [compiled_afterstates(boards[i], dice[i])[0].tobytes() for i in range(0, len(dice), 50)]
    assert got["after"] == hashlib.sha256(after.tobytes()).hexdigest()
    assert got["src"] == hashlib.sha256(src.tobytes()).hexdigest()
    assert got["one"] == hashlib.sha256(b"".join(one)).hexdigest()


LAZY = """
import json, sys
import numpy as np
import bgai.core.movegen as mg
from bgai.core.board import starting_board
loaded = ["numba" in sys.modules]
mg.afterstates(starting_board(), (3, 1))  # a little work: the numpy path, numba not loaded
loaded.append("numba" in sys.modules)
mg._GENERATOR.load_after = 0.0  # from now on the work done exceeds the threshold: the next call loads the kernel
mg.afterstates(starting_board(), (3, 1))
loaded.append("numba" in sys.modules)
print(json.dumps([loaded, mg._GENERATOR.kernel is not None]))
"""


def test_numba_is_loaded_only_after_enough_work():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("BGAI_NUMBA", None)
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert json.loads(out.stdout) == [[False, False, True], True]
