"""TD(lambda): lambda-returns on a chain with a known answer, and forward view == backward view (offline)."""

import numpy as np
import pytest
import torch

from bgai.core.equity import swap_perspective
from bgai.model.nets import NetSpec, ValueNet
from bgai.train.targets import lambda_returns, terminal_targets
from bgai.train.td import linear_schedule, offline_trace_increments


def test_terminal_targets():
    z = terminal_targets(np.array([1, 2, 3]))
    assert z.tolist() == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]]


def test_lambda_zero_and_one():
    rng = np.random.default_rng(0)
    v = rng.random((6, 5)).astype(np.float32)
    z = terminal_targets(np.array([2]))
    g0 = lambda_returns(v, [6], z, 0.0)
    for t in range(5):
        np.testing.assert_allclose(g0[t], swap_perspective(v[t + 1]), atol=1e-6)
    np.testing.assert_allclose(g0[5], z[0])
    g1 = lambda_returns(v, [6], z, 1.0)
    # Monte Carlo: the result, seen from each side on roll in turn (the winner was on roll last)
    for t in range(6):
        want = z[0] if (5 - t) % 2 == 0 else swap_perspective(z[0])
        np.testing.assert_allclose(g1[t], want, atol=1e-6)


def test_batch_of_games_equals_one_at_a_time():
    rng = np.random.default_rng(1)
    lengths = [3, 1, 7, 4]
    v = rng.random((sum(lengths), 5)).astype(np.float32)
    z = terminal_targets(np.array([1, 3, 2, 1]))
    got = lambda_returns(v, lengths, z, 0.6)
    off = 0
    for k, n in enumerate(lengths):
        want = np.empty((n, 5))
        want[-1] = z[k]
        for t in range(n - 2, -1, -1):
            want[t] = swap_perspective(0.4 * v[off + t + 1] + 0.6 * want[t + 1])
        np.testing.assert_allclose(got[off : off + n], want, atol=1e-6)
        off += n


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_random_walk_chain_known_values(lam):
    """Sutton's 5-state random walk as a two-player game: players alternate, a step goes left or right with
    probability 1/2, leaving on the right is a win for A, on the left for B.  The true P(win) of the side on
    roll is i/6 for A on point i and 1 - i/6 for B.  Tabular offline lambda-return updates must find it."""
    rng = np.random.default_rng(2)
    table = np.full((7, 2, 5), 0.5, dtype=np.float32)  # [point, side on roll (0 = A)], the 5 outputs
    table[:, :, 1:] = 0.0
    visits = np.zeros((7, 2))
    for episode in range(3000):
        pos, side = 3, int(rng.integers(2))
        states = []
        while 1 <= pos <= 5:
            states.append((pos, side))
            pos += 1 if rng.random() < 0.5 else -1
            side = 1 - side
        mover = 1 - side  # made the last step
        a_won = pos == 6
        mover_won = a_won == (mover == 0)
        z = np.array([[1.0 if mover_won else 0.0, 0, 0, 0, 0]], dtype=np.float32)
        v = np.array([table[p, s] for p, s in states])
        g = lambda_returns(v, [len(states)], z, lam)
        for (p, s), target in zip(states, g):
            visits[p, s] += 1  # step size 1/visits: a running mean of the targets
            table[p, s] += (target - table[p, s]) / max(visits[p, s], 20.0)
    want_a = np.arange(1, 6) / 6
    np.testing.assert_allclose(table[1:6, 0, 0], want_a, atol=0.06)
    np.testing.assert_allclose(table[1:6, 1, 0], 1 - want_a, atol=0.06)
    np.testing.assert_allclose(table[1:6, :, 1:], 0.0, atol=1e-6)  # no gammons in this game


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.8, 1.0])
def test_forward_view_equals_eligibility_traces(lam):
    """Offline TD(lambda): summed trace increments == minus the gradient of 0.5 * sum ||V - G_lambda||^2."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(3)
    net = ValueNet(NetSpec(6, (4,), "sigmoid"), generator=gen).double()
    x = torch.rand(7, 6, dtype=torch.float64, generator=gen)
    outcome = torch.tensor([1.0, 1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    backward = offline_trace_increments(net, x, outcome, lam)
    v = net(x)
    g = lambda_returns(v.detach().numpy(), [7], outcome.numpy()[None], lam)
    loss = 0.5 * ((v - torch.from_numpy(g.astype(np.float64))) ** 2).sum()
    grads = torch.autograd.grad(loss, list(net.parameters()))
    for b, gr in zip(backward, grads):
        torch.testing.assert_close(b, -gr, atol=2e-6, rtol=1e-4)
    assert max(float(b.abs().max()) for b in backward) > 1e-3  # a real, non-zero update


def test_linear_schedule():
    assert linear_schedule(1.0, 0.0, 0, 50) == 1.0
    assert linear_schedule(1.0, 0.0, 100, 50) == pytest.approx(0.5)
    assert linear_schedule(1.0, 0.2, 100, 1000) == pytest.approx(0.2)
