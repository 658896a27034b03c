"""The neural agent: loading checkpoints, legal plays at 0/1/2-ply, n-ply arithmetic, finished positions."""

import numpy as np
import pytest
import torch

from bgai.agents.base import best_k_per_input, best_per_input
from bgai.agents.neural import NeuralAgent
from bgai.core.board import flip, starting_board
from bgai.core.dice import ROLL_WEIGHTS, ROLLS
from bgai.core.equity import finished_probabilities
from bgai.core.movegen import afterstates
from bgai.errors import AgentSpecError, CheckpointError
from bgai.model.bundle import build_checkpoint, save_checkpoint
from bgai.model.features import get_encoder
from bgai.model.nets import NetSpec, ValueNet


@pytest.fixture(scope="module")
def ckpt_path(tmp_path_factory):
    enc = get_encoder("tesauro198")
    net = ValueNet(NetSpec(enc.size, (12,), "sigmoid"), generator=torch.Generator().manual_seed(9))
    path = tmp_path_factory.mktemp("ck") / "model.pt"
    save_checkpoint(build_checkpoint(net, enc, {"encoding": "tesauro198"}, 0, []), path)
    return path


@pytest.fixture(scope="module")
def positions():
    """Positions from a few random games (bgai's own move generator)."""
    rng = np.random.default_rng(3)
    b = np.broadcast_to(starting_board(), (16, 2, 25)).copy()
    out = []
    for _ in range(40):
        d = rng.integers(1, 7, size=(16, 2))
        after, src = afterstates(b, d)
        pick = np.array([rng.choice(np.flatnonzero(src == i)) for i in range(16)])
        nxt = flip(after[pick])
        live = nxt[:, 0].sum(axis=1) > 0
        b = np.where(live[:, None, None] & (nxt[:, 1].sum(axis=1) > 0)[:, None, None], nxt, starting_board())
        out.append(b.copy())
    return np.concatenate(out)


def legal(board, dice, chosen):
    after, _ = afterstates(board[None], np.asarray(dice)[None])
    return any(np.array_equal(a, chosen) for a in after)


@pytest.mark.parametrize("ply", [0, 1, 2])
def test_loaded_agent_plays_legal_moves(ckpt_path, positions, ply):
    agent = NeuralAgent.load(ckpt_path, ply=ply)
    rng = np.random.default_rng(ply)
    idx = rng.choice(len(positions), 6 if ply == 2 else 24, replace=False)
    boards = positions[idx]
    dice = rng.integers(1, 7, size=(len(idx), 2))
    chosen = agent.choose(boards, dice, rng)
    for b, d, c in zip(boards, dice, chosen):
        assert legal(b, d, c)


def test_zero_ply_choice_is_best_equity(ckpt_path, positions):
    agent = NeuralAgent.load(ckpt_path, ply=0)
    rng = np.random.default_rng(1)
    boards = positions[:40]
    dice = rng.integers(1, 7, size=(40, 2))
    after, src = afterstates(boards, dice)
    eq = agent.evaluate_afterstates(after)
    np.testing.assert_array_equal(agent.choose(boards, dice, rng), after[best_per_input(eq, src, 40)])


def test_one_ply_is_average_over_rolls_of_best_reply(ckpt_path, positions):
    a0 = NeuralAgent.load(ckpt_path, ply=0)
    a1 = NeuralAgent.load(ckpt_path, ply=1)
    board = positions[50]
    want = np.zeros(5)
    for (d1, d2), w in zip(ROLLS, ROLL_WEIGHTS):
        after, _ = afterstates(board[None], np.array([[d1, d2]]))
        eq = a0.evaluate_afterstates(after)
        best = after[int(np.argmax(eq))]
        want += w * a0.afterstate_probabilities(best[None])[0]
    np.testing.assert_allclose(a1.probabilities(board[None])[0], want, atol=1e-9)
    assert ROLL_WEIGHTS.sum() == pytest.approx(1.0)


def test_two_ply_recurses_on_one_ply(ckpt_path, positions):
    a1 = NeuralAgent.load(ckpt_path, ply=1)
    a2 = NeuralAgent.load(ckpt_path, ply=2)
    board = positions[60]
    want = np.zeros(5)
    for (d1, d2), w in zip(ROLLS, ROLL_WEIGHTS):
        after, _ = afterstates(board[None], np.array([[d1, d2]]))
        eq0 = NeuralAgent.load(ckpt_path, ply=0).evaluate_afterstates(after)
        best = after[int(np.argmax(eq0))]
        want += w * a1.afterstate_probabilities(best[None])[0]
    np.testing.assert_allclose(a2.probabilities(board[None])[0], want, atol=1e-9)


def test_finished_positions_are_exact(ckpt_path):
    agent = NeuralAgent.load(ckpt_path, ply=0)
    b = np.zeros((3, 2, 25), dtype=np.int8)
    b[0, 0, 0] = 15  # side on roll, nothing off: opponent (row 1) has borne off all -> gammon loss
    b[1, 0, 23] = 1  # one checker in the opponent's home board -> backgammon loss
    b[1, 0, 0] = 14
    b[2, 0, 0] = 1  # one checker left (it could bear it off, but the game is already over): single loss
    over, exact = finished_probabilities(b)
    assert over.all()
    np.testing.assert_array_equal(exact, [[0, 0, 0, 1, 0], [0, 0, 0, 1, 1], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(agent.probabilities(b), exact)
    for ply in (1, 2):
        np.testing.assert_array_equal(NeuralAgent.load(ckpt_path, ply=ply).probabilities(b), exact)


def _first_max_per_group(scores, src, n):
    """Reference group argmax, one group at a time: the first index of each group's maximum."""
    return np.array([np.flatnonzero(src == g)[np.argmax(scores[src == g])] for g in range(n)])


def test_group_argmax_and_prune():
    rng = np.random.default_rng(0)
    src = np.sort(rng.integers(0, 30, 400))
    src = np.concatenate([np.arange(30), src])
    src.sort()
    scores = rng.integers(0, 5, src.size).astype(float)  # many ties
    np.testing.assert_array_equal(best_per_input(scores, src, 30), _first_max_per_group(scores, src, 30))
    keep = best_k_per_input(scores, src, 30, keep=3, margin=1.5)
    for g in range(30):
        k = keep[src[keep] == g]
        assert 1 <= len(k) <= 3
        assert scores[k].min() >= scores[src == g].max() - 1.5
        assert scores[best_per_input(scores, src, 30)[g]] in scores[k]


def test_bad_specs(tmp_path, ckpt_path):
    with pytest.raises(AgentSpecError):
        NeuralAgent.load(ckpt_path, ply=3)
    with pytest.raises(CheckpointError):
        NeuralAgent.load(tmp_path / "missing.pt")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x00" * 100)
    with pytest.raises(CheckpointError):
        NeuralAgent.load(junk)


def test_registry_builds_checkpoint_agents(ckpt_path):
    from bgai.agents.registry import make_agent

    a = make_agent(f"{ckpt_path}:ply=1")
    assert isinstance(a, NeuralAgent) and a.ply == 1


@pytest.mark.parametrize("hidden", [(12,), (128,)])
def test_network_chunks_give_the_same_bits(positions, hidden):
    """The search evaluates in chunks of EVAL_CHUNK rows: one call's result up to float32 rounding (single-threaded
    BLAS; bit for bit where the BLAS uses the same kernels for any number of rows, not on every CPU: on an AMD EPYC
    a few values of rows near a chunk's end differ by 6e-8)."""
    from threadpoolctl import threadpool_limits

    from bgai.agents import neural

    enc = get_encoder("extended")
    net = ValueNet(NetSpec(enc.size, hidden, "sigmoid"), generator=torch.Generator().manual_seed(4))
    agent = NeuralAgent(net, enc)
    rng = np.random.default_rng(5)
    boards = positions[rng.integers(0, len(positions), 3 * neural.EVAL_CHUNK + 777)]
    live = boards[boards[:, 1].sum(axis=1) > 0]
    with threadpool_limits(1):
        one_call = agent.bundle.probabilities(live)  # one network call on all rows
        assert len(live) >= 2 * neural.EVAL_CHUNK  # so that _net really cuts it into chunks
        np.testing.assert_allclose(agent._net(live), one_call, rtol=0, atol=3e-7)


def test_two_ply_move_filter(ckpt_path, positions):
    """2-ply: 0-ply filter, then the 1-ply filter (filter_keep within filter_margin), then the 2-ply best."""
    a0, a1, a2 = (NeuralAgent.load(ckpt_path, ply=n) for n in (0, 1, 2))
    rng = np.random.default_rng(11)
    idx = rng.choice(len(positions), 5, replace=False)
    dice = rng.integers(1, 7, size=(5, 2))
    for unfiltered in (False, True):
        if unfiltered:  # no 1-ply filter: the 2-ply best of all 0-ply candidates
            a2.filter_keep, a2.filter_margin = 10**6, np.inf
        chosen = a2.choose(positions[idx], dice, rng)
        for k, i in enumerate(idx):
            after, _ = afterstates(positions[i], dice[k])
            e0 = a0.evaluate_afterstates(after)
            order = np.argsort(-e0, kind="stable")[: a2.prune_keep]
            cand = np.sort(order[e0[order] >= e0[order[0]] - a2.prune_margin])
            e1 = a1.evaluate_afterstates(after[cand])
            o1 = np.argsort(-e1, kind="stable")[: a2.filter_keep]
            kept = cand[np.sort(o1[e1[o1] >= e1[o1[0]] - a2.filter_margin])]
            e2 = a2.evaluate_afterstates(after[kept])
            np.testing.assert_array_equal(chosen[k], after[kept[np.argmax(e2)]])
    assert NeuralAgent.filter_keep >= 1 and NeuralAgent.filter_margin > 0


def test_searched_probabilities_stay_in_range_without_negative_zeros():
    """A lost race (GgAA8NsNMAAAAA, 2-1: no chance to win): the 21-roll averages of certain outcomes sum to 1 up to
    rounding (1 + 2e-16 before the clip), and the mover's complement of that showed as a win chance of -0.0."""
    from bgai.agents.registry import make_agent
    from bgai.core.equity import swap_perspective
    from bgai.core.position_id import decode_position_id

    board = decode_position_id("GgAA8NsNMAAAAA")
    after, _ = afterstates(board[None], np.array([[2, 1]]))
    for ply in (1, 2):
        agent = make_agent(f"checkpoints/bgai-sl6.pt:ply={ply}")
        probs = agent.probabilities(flip(after))
        mover = swap_perspective(probs)
        assert ((probs >= 0) & (probs <= 1)).all() and not np.signbit(probs).any(), (ply, probs)
        assert (mover[:, 0] < 1e-6).all() and not np.signbit(mover).any(), (ply, mover)  # the race is lost
        assert (mover[:, 3] > 0.8).all()  # mostly with a gammon
