"""The one-position fast paths of a server request give what the batch paths give: board validation of one board,
the empty-row test of small batches, the Position ID of one board, and a bot whose compiled kernels are loaded
before serving (``Bot.prepare_to_serve``) ranks plays exactly as it did before."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bgai.core.board import starting_board, validate, validation_errors
from bgai.core.equity import finished_or_evaluate, finished_probabilities
from bgai.core.movegen import afterstates
from bgai.core.position_id import encode_position_id, encode_position_ids
from bgai.errors import InvalidPositionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _random_boards(n: int, seed: int) -> np.ndarray:
    """Boards of every kind: legal ones (random afterstates of the start), and ones with a negative count, more
    than 15 checkers, a point held by both sides, both sides off, one side off."""
    rng = np.random.default_rng(seed)
    start = np.repeat(starting_board()[None], n, axis=0)
    legal, _ = afterstates(start, rng.integers(1, 7, (n, 2)), validate=False)
    boards = legal[rng.choice(len(legal), n)].copy()
    kinds = rng.integers(0, 6, n)
    for i, k in enumerate(kinds.tolist()):
        side, col = int(rng.integers(0, 2)), int(rng.integers(0, 25))
        if k == 1:
            boards[i, side, col] = -int(rng.integers(1, 3))
        elif k == 2:
            boards[i, side, col] += int(rng.integers(1, 4))
        elif k == 3 and col < 24:
            boards[i, 0, col] = max(boards[i, 0, col], 1)
            boards[i, 1, 23 - col] = max(boards[i, 1, 23 - col], 1)
        elif k == 4:
            boards[i] = 0
        elif k == 5:
            boards[i, side] = 0
    return boards


def test_one_board_is_validated_as_in_a_batch():
    boards = _random_boards(600, 1)
    errors = validation_errors(boards)
    assert sum(e is None for e in errors) > 100 and sum(e is not None for e in errors) > 100
    for b, err in zip(boards, errors):
        if err is None:
            assert np.array_equal(validate(b)[0], b)
        else:
            with pytest.raises(InvalidPositionError) as exc:
                validate(b)
            assert str(exc.value) == f"invalid position: {err}"


def test_finished_positions_found_in_small_and_large_batches():
    boards = _random_boards(400, 2)
    boards = boards[[e is None for e in validation_errors(boards)] & (boards[:, 0].sum(axis=1) > 0)]
    boards[::7, 1] = 0  # finished games (the opponent has borne off)
    expect = boards[:, 1].sum(axis=1) == 0
    for n in (1, 2, 5, 64, 65, len(boards)):
        over, probs = finished_probabilities(boards[:n])
        assert np.array_equal(over, expect[:n]) and len(probs) == expect[:n].sum()
        strided = np.ascontiguousarray(boards[: 2 * n])[::2]  # a strided batch
        assert np.array_equal(finished_probabilities(strided)[0], expect[: 2 * n : 2])

    def net(b):
        return np.full((len(b), 5), 0.5)

    for n in (3, 64, 200):
        out = finished_or_evaluate(boards[:n], net)
        assert np.array_equal(out[~expect[:n]], np.full(((~expect[:n]).sum(), 5), 0.5))
        assert np.array_equal(out[expect[:n]], finished_probabilities(boards[:n])[1])


def test_position_id_of_one_board_equals_the_batch_encoder():
    boards = _random_boards(800, 3)
    ok = np.array([e is None for e in validation_errors(boards)])
    ids = encode_position_ids(boards[ok])
    assert [encode_position_id(b) for b in boards[ok]] == ids
    assert encode_position_id(starting_board()) == "4HPwATDgc/ABMA"
    for b in boards[~ok][:50]:
        with pytest.raises(InvalidPositionError):
            encode_position_id(b)
    with pytest.raises(InvalidPositionError):  # not a position: refused, never a wrong ID
        encode_position_ids(boards[~ok][:5], validate=True)


_SCRIPT = r"""
import json, sys
import numpy as np
sys.path.insert(0, "scripts")
from positions import selfplay_positions
from bgai.core.movegen import afterstates
from bgai.util.jit import loaded_kernels
from bgai.serve.bot import Bot

bot = Bot.from_spec("default")
pool = selfplay_positions(160, 5, games=8)[:120]
rolls = np.random.default_rng(5).integers(1, 7, (len(pool), 2))

def answers():
    out = []
    for b, d in zip(pool, rolls.tolist()):
        out.append([(r.notation, r.probabilities.tolist(), r.score) for r in bot.rank_plays(b, d)])
    return out

before = answers()
assert not loaded_kernels()
on = bot.prepare_to_serve()
after = answers()
print(json.dumps({"on": on, "same": before == after, "plays": sum(map(len, before)), "loaded": [k.rsplit(":", 1)[-1] for k in loaded_kernels()]}))
"""


def test_bot_with_compiled_kernels_ranks_plays_exactly_as_before():
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["same"] and res["plays"] > 1000
    from bgai.util.jit import AVAILABLE

    assert res["on"] == AVAILABLE and ("_encode_kernel" in res["loaded"]) == AVAILABLE


@pytest.mark.parametrize("hidden, activation", [((128,), "sigmoid"), ((80,), "sigmoid"), ((40, 20), "relu")])
def test_fast_forward_small_batches_equal_the_transposed_weights(hidden, activation):
    """FastForward's plain copy of the first layer (batches of tens of rows) gives the bits of the transposed view
    (the reference), for every batch size, and follows in-place updates of the weights."""
    import torch

    from bgai.model.features import get_encoder
    from bgai.model.nets import FastForward, NetSpec, ValueNet

    enc = get_encoder("extended")
    net = ValueNet(NetSpec(enc.size, hidden, activation), generator=torch.Generator().manual_seed(1))
    ff = FastForward(net, fixed_weights=True)
    boards = _random_boards(700, 4)
    boards = boards[[e is None for e in validation_errors(boards)]]
    x = enc(boards)

    def reference(rows):
        h = rows
        for i, (w, b) in enumerate(zip(ff.weights, ff.biases)):  # the transposed views, no buffers, as before
            h = h @ w
            h += b
            if activation == "relu" and i < len(ff.weights) - 1:
                torch.relu_(torch.from_numpy(h))
            else:
                torch.sigmoid_(torch.from_numpy(h))
        return h

    for n in list(range(1, 64)) + list(range(64, 300, 5)) + [400]:
        rows = np.ascontiguousarray(x[:n])
        first = ff(rows)
        assert np.array_equal(first, reference(rows)), n
        ff(np.ascontiguousarray(x[1 : n + 1]))  # (the same buffers again: the first result is the caller's own)
        assert np.array_equal(first, reference(rows)), n
    plain = [n for n, same in ff._plain_same.items() if same]
    assert len(plain) > 10  # (the plain copy is used: for most sizes of tens of rows with 80 or 128 units)
    rows = np.ascontiguousarray(x[: plain[-1]])
    before = ff(rows)
    with torch.no_grad():
        net.body[0].weight.mul_(1.5)
    after = ff(rows)
    assert not np.array_equal(before, after) and np.array_equal(after, reference(rows))
    # a trained net's weights change through numpy views (the self-play trainer), which torch's version counter
    # does not see: without fixed_weights the plain copy is never used
    train = FastForward(net)
    w0 = train.weights[0]
    w0 *= 0.5  # in place, through the numpy view
    assert np.array_equal(train(rows), reference(rows)) and not any(train._plain_same.values())
