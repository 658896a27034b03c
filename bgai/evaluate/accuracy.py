"""How close an agent's probabilities come to rollouts: evaluation accuracy per position class.

A bgai label folder of kind ``rollout`` (:mod:`bgai.train.labels`) holds positions (side on roll in row 0) with the
five cubeless outcome probabilities of a rollout and their standard errors.  For an agent with probabilities
(:attr:`bgai.agents.base.Capabilities.probabilities`: a model at 0/1/2-ply, GNU Backgammon) this compares its
estimate of each position with the rollout's, per class (:mod:`bgai.model.classes`):

* **equity RMS**: root mean square of (agent's cubeless equity - rollout's), in points per game
  (:func:`bgai.core.equity.cubeless_equity`); it includes the rollouts' own noise (``rollout_se``, below), so two
  agents compare on the same labels, not against zero;
* **equity mean**: the mean of that difference (> 0: the agent is too optimistic for the side on roll);
* **output mean**: ``(5,)`` mean of (agent - rollout) per output, :data:`bgai.core.equity.OUTPUTS` order (e.g.
  gammon rates over- or underestimated);
* **bce**: the binary cross-entropy of the agent's probabilities against the rollout's, summed over the 5
  outputs and averaged over the positions (the loss of ``bgai train``'s supervised algorithm, ``loss: bce``);
* **rollout_se**: the mean standard error of the rollouts' P(win).

The equity RMS is the absolute accuracy of the evaluation (what a cube decision or a rollout's truncation needs),
not the strength of its checker play, which depends only on how it orders the plays of one decision (the strength
benchmark, :mod:`bgai.evaluate.strength`, measures that).  ``scripts/bench_accuracy.py`` prints these side by side.
"""

from __future__ import annotations

import numpy as np

from bgai.agents.base import Agent
from bgai.agents.registry import make_agent
from bgai.core.equity import cubeless_equity
from bgai.errors import AgentCapabilityError, BgaiError
from bgai.model.classes import CLASS_NAMES
from bgai.train.labels import Dataset

__all__ = ["accuracy", "class_accuracy", "probability_agent"]

#: Probabilities are clipped to [EPS, 1 - EPS] for the cross-entropy (a 0 or 1 estimate of a non-degenerate
#: target would otherwise be infinite).
EPS = 1e-7


def accuracy(probs: np.ndarray, rollout: np.ndarray, rollout_se: np.ndarray | None = None) -> dict:
    """Accuracy of estimated probabilities against rollout probabilities (module docstring).

    Args:
        probs: ``(N, 5)`` estimates for the side on roll, :data:`bgai.core.equity.OUTPUTS` order.
        rollout: ``(N, 5)`` the rollouts' probabilities of the same positions (clipped to [0, 1] here: a rollout
            with variance reduction can come out a little outside).
        rollout_se: ``(N, 5)`` their standard errors, or None.

    Returns:
        ``{'n', 'equity_rms', 'equity_mean', 'output_mean' (list of 5), 'bce', 'rollout_se'}`` (floats; NaN
        for no position; ``rollout_se`` NaN without standard errors).

    Raises:
        BgaiError: shapes that are not ``(N, 5)`` or that differ.
    """
    p = np.asarray(probs, dtype=np.float64)
    r = np.clip(np.asarray(rollout, dtype=np.float64), 0.0, 1.0)
    if p.ndim != 2 or p.shape[1] != 5 or p.shape != r.shape:
        raise BgaiError(f"accuracy needs (N, 5) estimates and rollouts of the same shape, got {p.shape} and {r.shape}")
    if rollout_se is not None and np.shape(rollout_se) != p.shape:
        raise BgaiError(f"accuracy needs rollout standard errors of shape {p.shape}, got {np.shape(rollout_se)}")
    n = p.shape[0]
    se = float(np.mean(np.asarray(rollout_se)[:, 0])) if rollout_se is not None and n else float("nan")
    if n == 0:
        return {"n": 0, "equity_rms": float("nan"), "equity_mean": float("nan"), "output_mean": [float("nan")] * 5,
                "bce": float("nan"), "rollout_se": se}
    d = cubeless_equity(p) - cubeless_equity(r)
    q = np.clip(p, EPS, 1.0 - EPS)
    bce = -(r * np.log(q) + (1.0 - r) * np.log(1.0 - q)).sum(axis=1).mean()
    return {"n": int(n), "equity_rms": float(np.sqrt(np.mean(d * d))), "equity_mean": float(d.mean()),
            "output_mean": [float(v) for v in (p - r).mean(axis=0)], "bce": float(bce), "rollout_se": se}


def probability_agent(agent: Agent | str) -> Agent:
    """The agent of a spec (or the agent itself), checked to have probabilities.

    Raises:
        AgentCapabilityError: it has none (pubeval, the heuristic bots), named by its spec or name.
        AgentSpecError, CheckpointError: a bad spec.
    """
    a = make_agent(agent) if isinstance(agent, str) else agent
    if not a.capabilities.probabilities:
        name = agent if isinstance(agent, str) else getattr(a, "name", a)
        raise AgentCapabilityError(f"agent {name!r} gives no probabilities to compare with rollouts")
    return a


def class_accuracy(agent: Agent | str, labels: Dataset, batch: int = 4096) -> dict[str, dict]:
    """:func:`accuracy` of an agent's probabilities on a rollout label folder, per class and over all.

    Args:
        agent: an agent with probabilities, or its spec (:func:`bgai.agents.registry.make_agent`, e.g.
            ``'checkpoints/bgai-sl8.pt:ply=1'`` or ``'gnubg'``).
        labels: a label folder read by :func:`bgai.train.labels.load_labels` (any label kind; the accuracy
            against rollouts needs a rollout folder; ``rollout_se`` is NaN for other kinds).
        batch: positions per :meth:`~bgai.agents.base.ProbabilityAgent.probabilities` call.

    Returns:
        ``{class name: accuracy dict, ..., 'all': accuracy dict}`` for the classes present, in
        :data:`bgai.model.classes.CLASS_NAMES` order.

    Raises:
        AgentCapabilityError: the agent has no probabilities (pubeval, the heuristic bots).
        AgentSpecError, CheckpointError: a bad spec.
    """
    a = probability_agent(agent)
    boards = labels.boards
    probs = np.concatenate([a.probabilities(boards[i:i + batch]) for i in range(0, len(boards), batch)]) \
        if len(boards) else np.zeros((0, 5))
    se = labels.std_errors if labels.settings.get("kind") == "rollout" else None
    out = {}
    for c in np.unique(labels.classes):
        m = labels.classes == c
        out[CLASS_NAMES[int(c)]] = accuracy(probs[m], labels.probs[m], None if se is None else se[m])
    out["all"] = accuracy(probs, labels.probs, se)
    return out
