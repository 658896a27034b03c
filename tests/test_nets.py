"""Value network: shapes, outputs in OUTPUTS order, the fast path, and the afterstate perspective rule."""

import numpy as np
import pytest
import torch

from bgai.agents.neural import NeuralAgent
from bgai.core.board import flip, starting_board
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.errors import CheckpointError, ConfigError
from bgai.model.features import get_encoder
from bgai.model.nets import FastForward, NetSpec, ValueNet


def make(hidden=(16,), activation="sigmoid", seed=0, enc="extended"):
    e = get_encoder(enc)
    return ValueNet(NetSpec(e.size, hidden, activation), generator=torch.Generator().manual_seed(seed)), e


def test_shapes_and_range():
    net, enc = make()
    x = torch.from_numpy(enc(np.stack([starting_board()] * 3)))
    p = net(x).detach()
    assert p.shape == (3, 5) and p.dtype == torch.float32
    assert float(p.min()) > 0 and float(p.max()) < 1


def test_seeded_init_is_reproducible():
    a, _ = make(seed=3)
    b, _ = make(seed=3)
    c, _ = make(seed=4)
    for (k, v), w in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(v, w), k
    assert not torch.equal(a.state_dict()["body.0.weight"], c.state_dict()["body.0.weight"])


@pytest.mark.parametrize("activation", ["sigmoid", "relu"])
def test_fast_forward_matches_module(activation):
    net, enc = make(hidden=(12, 7), activation=activation)
    rng = np.random.default_rng(0)
    x = rng.random((50, enc.size)).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(FastForward(net)(x), want, rtol=1e-5, atol=1e-6)


def test_afterstate_value_is_swapped_evaluation_of_flipped_position():
    """The one perspective rule: value(afterstate, for the mover) = swap(net(flip(afterstate)))."""
    net, enc = make(seed=1)
    agent = NeuralAgent(net, enc, ply=0)
    from bgai.core.movegen import afterstates

    after, _ = afterstates(starting_board()[None], np.array([[3, 1]]))
    mine = agent.afterstate_probabilities(after)
    theirs = agent.probabilities(flip(after))
    np.testing.assert_allclose(mine[:, 0], 1 - theirs[:, 0], atol=1e-7)
    np.testing.assert_allclose(mine[:, 1:3], theirs[:, 3:5], atol=1e-7)
    np.testing.assert_allclose(mine[:, 3:5], theirs[:, 1:3], atol=1e-7)
    np.testing.assert_allclose(agent.evaluate_afterstates(after), -cubeless_equity(theirs), atol=1e-9)
    # and the network itself is what probabilities() reports
    with torch.no_grad():
        direct = net(torch.from_numpy(enc(flip(after)))).numpy()
    np.testing.assert_allclose(theirs, direct, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(swap_perspective(swap_perspective(mine)), mine, atol=1e-12)


def test_spec_validation():
    with pytest.raises(ConfigError):
        NetSpec(10, (0,))
    with pytest.raises(ConfigError):
        NetSpec(10, (8,), "tanhh")
    with pytest.raises(CheckpointError):
        NetSpec.from_dict({"n_inputs": 3})
    s = NetSpec(10, (8, 4), "relu")
    assert NetSpec.from_dict(s.to_dict()) == s
