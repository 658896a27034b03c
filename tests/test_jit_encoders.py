"""The compiled encoder kernels (numba, bgai.util.jit) against the numpy reference, bit for bit.

Every encoder of ``features.ENCODERS`` (and ``contact`` with gnubg-nn's hit rule) is run with ``compiled=True``
and ``compiled=False`` on self-play afterstates, random legal positions of every class and edge cases (bar, all
off, 15 checkers on one point or the bar), and the float32 outputs must be equal as bit patterns.  A subprocess
with ``BGAI_NUMBA=0`` must take the numpy path (numba never imported) and give the same output.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba", reason="numba (the 'fast' extra) is not installed: no compiled kernels to test")

from bgai.core.board import flip, is_game_over, starting_board  # noqa: E402
from bgai.core.movegen import afterstates  # noqa: E402
from bgai.errors import InvalidPositionError  # noqa: E402
from bgai.model.classes import classify  # noqa: E402
from bgai.model.features import ENCODERS  # noqa: E402
from bgai.model.gnubg_inputs import contact_inputs, race_inputs  # noqa: E402
from bgai.model.kernels import PositionKernel  # noqa: E402
from bgai.util import jit  # noqa: E402


def _names() -> list[str]:
    """The function names of the kernels in use (bgai.util.jit.loaded_kernels gives 'module:function')."""
    return [k.rsplit(":", 1)[-1].rsplit(".", 1)[-1] for k in jit.loaded_kernels()]


if not jit.AVAILABLE:
    pytest.skip("compiled kernels are turned off (BGAI_NUMBA=0)", allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def selfplay_positions(n: int, seed: int) -> np.ndarray:
    """``n`` afterstates (side on roll in row 0) of random-move self-play, 256 games in parallel."""
    rng = np.random.default_rng(seed)
    games = 256
    boards = np.broadcast_to(starting_board(), (games, 2, 25)).copy()
    parts, have = [], 0
    while have < n:
        after, src = afterstates(boards, rng.integers(1, 7, size=(games, 2)), validate=False)
        pick = rng.random(after.shape[0]) < 0.15
        parts.append(flip(after[pick]))
        have += int(pick.sum())
        starts = np.searchsorted(src, np.arange(games))
        counts = np.diff(np.append(starts, src.size))
        boards = flip(after[starts + (rng.random(games) * counts).astype(np.int64)])
        boards[is_game_over(boards)] = starting_board()
    return np.concatenate(parts)[:n]


def random_positions(n: int, seed: int) -> np.ndarray:
    """``n`` random legal positions: each side has 0..15 checkers on random points (bar included), the two sides
    never on the same point; about a third have checkers on the bar, some have all checkers off."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 2, 25), dtype=np.int8)
    for i in range(n):
        taken = np.zeros(24, dtype=bool)  # side 0's columns
        for s in (0, 1):
            on = int(rng.choice([0, 1, 15, 15, 15, 15, int(rng.integers(1, 16))]))
            cols = np.arange(25) if s == 0 else np.array([c for c in range(24) if not taken[23 - c]] + [24])
            k = int(rng.integers(1, min(len(cols), 8) + 1))
            chosen = rng.choice(cols, size=k, replace=False)
            if rng.random() > 0.3:
                chosen = chosen[chosen != 24] if (chosen != 24).any() else chosen
            counts = rng.multinomial(on, np.ones(len(chosen)) / len(chosen))
            out[i, s, chosen] = counts
            if s == 0:
                taken = out[i, 0, :24] > 0
        if rng.random() < 0.4:  # 1..3 checkers of one side (those it has) from its points to the bar
            s = int(rng.integers(2))
            for _ in range(int(rng.choice([1, 1, 2, 3]))):
                pts = np.flatnonzero(out[i, s, :24])
                if pts.size:
                    out[i, s, rng.choice(pts)] -= 1
                    out[i, s, 24] += 1
    return out


def edge_positions() -> np.ndarray:
    """Bar, all off, 15 checkers on one point or on the bar, the starting position and empty boards."""
    rows = []
    for c in range(25):  # 15 on one column of the side on roll, against the opponent's 15 on another
        b = np.zeros((2, 25), dtype=np.int8)
        b[0, c] = 15
        b[1, (c + 5) % 24] = 15
        rows.append(b)
        b = b.copy()
        b[1] = 0  # opponent all off
        rows.append(b)
        b = np.zeros((2, 25), dtype=np.int8)
        b[1, c] = 15  # side on roll all off
        rows.append(b)
    rows.append(np.zeros((2, 25), dtype=np.int8))
    start = starting_board()
    rows.append(start)
    for k in (1, 2, 3, 4, 15):  # checkers on the bar against closed and open boards
        for s in (0, 1):
            b = start.copy()
            b[s, 24] = k
            b[s, 23] = max(0, 2 - k)
            b[s, 12] = 5 - max(0, k - 2) if k <= 7 else 0
            if b[s].sum() > 15:
                b[s, 5] -= b[s].sum() - 15
            if b[s, 5] < 0:
                b[s, :24] = 0
                b[s, 24] = 15
            rows.append(b)
            closed = np.zeros((2, 25), dtype=np.int8)
            closed[1 - s, :6] = 2
            closed[1 - s, 6] = 3
            closed[s, 24] = k
            closed[s, 18] = 15 - k
            rows.append(closed)
    return np.array(rows, dtype=np.int8)


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    rand = random_positions(3000, 2)
    rand[1::2] = flip(rand[1::2])  # the bar and the all-off cases on both sides
    play = selfplay_positions(3000, 1)
    play[1::2] = flip(play[1::2])
    out = np.concatenate([play, rand, edge_positions()])
    assert (out.sum(axis=2) <= 15).all()
    return out


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype == np.float32 and a.shape == b.shape and np.array_equal(a.view(np.int32), b.view(np.int32))


def test_the_positions_cover_every_class(boards):
    classes = set(np.unique(classify(boards)).tolist())
    assert len(classes) >= 4, classes  # bear-off, race, contact, crashed (and over)
    assert (boards[:, 0, 24] == 1).sum() > 100 and (boards[:, 0, 24] >= 2).sum() > 50
    assert (boards[:, 1, 24] == 1).sum() > 100 and (boards[:, 1, 24] >= 2).sum() > 50


@pytest.mark.parametrize("name", ["tesauro198", "extended", "contact"])
def test_compiled_equals_numpy(boards, name):
    enc = ENCODERS[name]
    ref = enc.encode(boards, compiled=False)
    out = enc.encode(boards, compiled=True)
    assert same_bits(ref, out), np.argwhere(ref.view(np.int32) != out.view(np.int32))[:5]
    # one position at a time and a batch of one (shape (2, 25)) go through the kernel too
    for i in range(0, boards.shape[0], 997):
        assert same_bits(enc.encode(boards[i], compiled=True), ref[i : i + 1])


def test_contact_gnubg_nn_rule_compiled_equals_numpy(boards):
    ref = contact_inputs(boards, hit_rule="gnubg-nn", compiled=False)
    assert same_bits(contact_inputs(boards, hit_rule="gnubg-nn", compiled=True), ref)
    # the two rules differ somewhere on these positions, so the rule reaches the kernel
    assert not same_bits(contact_inputs(boards, compiled=True), ref)


def test_race_compiled_equals_numpy(boards):
    race = boards[(boards[:, :, 23:] == 0).all(axis=(1, 2))]
    assert race.shape[0] > 500
    assert same_bits(race_inputs(race, compiled=True), race_inputs(race, compiled=False))
    assert "_race_kernel" in _names()


def test_kernels_were_loaded(boards):
    for name in ("tesauro198", "contact"):
        ENCODERS[name].encode(boards[:10], compiled=True)
    assert {"_encode_kernel", "_contact_kernel"} <= set(_names())


def test_empty_batch_and_errors_as_numpy():
    empty = np.zeros((0, 2, 25), dtype=np.int8)
    for enc in ENCODERS.values():
        assert enc.encode(empty, compiled=True).shape == (0, enc.size)
    bad = np.zeros((3, 2, 25), dtype=np.int8)
    bad[1, 0, 3] = 16
    for enc in ENCODERS.values():
        with pytest.raises(InvalidPositionError, match="0..15"):
            enc.encode(bad, compiled=True)
    over = np.zeros((2, 2, 25), dtype=np.int8)
    over[1, 1, :3] = 6  # 18 checkers
    for name in ("contact", "race"):
        with pytest.raises(InvalidPositionError, match="more than 15"):
            ENCODERS[name].encode(over, compiled=True)
    not_race = np.zeros((1, 2, 25), dtype=np.int8)
    not_race[0, 1, 24] = 1
    with pytest.raises(InvalidPositionError, match="race"):
        race_inputs(not_race, compiled=True)


def test_warm_up_then_kernel():
    def add_one(x):
        return x + 1

    k = PositionKernel(add_one, warm_up=10)
    assert k.get(4, None) is None and k.get(5, None) is None  # 9 positions with numpy so far
    assert k.get(100, False) is None  # compiled=False never loads, and does not count
    kernel = k.get(1, None)  # the 10th position: loaded
    assert kernel is not None and kernel(41) == 42
    assert k.get(1, None) is kernel and k.get(1, False) is None and "add_one" in _names()
    assert PositionKernel(add_one, warm_up=10**9).get(1, True) is not None


def test_bgai_numba_0_takes_the_numpy_path(boards, tmp_path):
    sample = boards[::7]
    path = tmp_path / "boards.npy"
    np.save(path, sample)
    code = (
        "import json, sys, numpy as np\n"
        "from bgai.model.features import ENCODERS\n"
        "from bgai.util import jit\n"
        + inspect.getsource(_names)  # this module's helper itself (it reads ``jit``)
        + f"b = np.load({str(path)!r})\n"
        "for name, enc in ENCODERS.items():\n"
        "    x = b[(b[:, :, 23:] == 0).all(axis=(1, 2))] if enc.races_only else b\n"
        f"    np.save({str(tmp_path)!r} + '/' + name + '.npy', enc.encode(x, compiled=True))\n"
        "print(json.dumps({'available': jit.AVAILABLE, 'numba': 'numba' in sys.modules, 'loaded': _names()}))\n"
    )
    env = dict(os.environ, BGAI_NUMBA="0", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout.strip().splitlines()[-1])
    assert info == {"available": False, "numba": False, "loaded": []}
    for name, enc in ENCODERS.items():
        x = sample[(sample[:, :, 23:] == 0).all(axis=(1, 2))] if enc.races_only else sample
        assert same_bits(np.load(tmp_path / f"{name}.npy"), enc.encode(x, compiled=True)), name
