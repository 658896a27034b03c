"""Paired decision test of two agents: roll out the plays where they disagree.

A match of games between two close agents needs tens of thousands of games to separate 0.01 ppg, because most of
a game's variance comes from the dice and from the decisions both agents play alike.  This test spends the
compute only where the agents differ (as a user of GNU Backgammon or eXtreme Gammon settles "which play is
better" by rolling out both):

1. **Decisions**: ``count`` positions drawn (without replacement, by ``seed``) from a set of positions with a side
   on roll, each with a roll drawn by the same generator; decisions with one legal play (forced) are dropped.
2. **Plays**: each agent chooses its play (its own ``choose``, batched; random choices seeded per decision).
3. **Judge**: where the two plays differ, both afterstates are rolled out together on the same dice
   (:func:`bgai.analysis.rollout.run_unit`): by default GNU Backgammon 0-ply plays ``trials`` trials with
   quasi-random dice and variance reduction, truncated ``truncate`` plies after the play and scored by its 0-ply
   evaluation -- the settings of bgai's strength benchmark (``scripts/make_strength_benchmark.py``), independent
   of every bgai model.  Where they agree the difference is exactly 0.
4. **Gain** of agent B over agent A = 1000 x (sum over decisions of equity(B's play) - equity(A's play)) / number
   of decisions, in milli-points (thousandths of a point of cubeless money equity) per decision (mppd), the unit
   of gnubg's error rate: a positive gain is B's error rate that much below A's.  Its standard error is 1000 x
   std(differences over all decisions, ddof=1) / sqrt(decisions); the spread includes the rollouts' own noise.

Each decision is a pure function of ``(seed, its index)``: the same seed gives the same figures on any number of
workers.  The judge's bias is that of a truncated rollout: its own evaluation errors after ``truncate`` plies
are not seen (for gnubg, in its favour).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bgai.agents.registry import make_agent
from bgai.analysis.rollout import RolloutPolicy, run_unit
from bgai.core.board import as_batch, flip
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.core.movegen import afterstates
from bgai.errors import BgaiError
from bgai.util.parallel import run_units, unit_size

__all__ = ["Decisions", "PairedResult", "draw_decisions", "paired_test", "summarise"]


@dataclass
class Decisions:
    """Checker-play decisions: ``boards`` ``(N, 2, 25)`` int8, side on roll in row 0; ``dice`` ``(N, 2)`` int64;
    ``source`` ``(N,)`` int64 the row of each in the position set it was drawn from."""

    boards: np.ndarray
    dice: np.ndarray
    source: np.ndarray


@dataclass
class PairedResult:
    """The outcome of :func:`paired_test`.

    Attributes:
        decisions: decisions played (forced ones dropped).
        differ: decisions where the two agents' plays differ (the ones rolled out).
        gain_mppd: B's gain over A in milli-points per decision (module docstring), ``se_mppd`` its standard error.
        gain_per_difference: mean equity gain of B over A (points) on the decisions where they differ (0 if none).
        diffs: ``(differ,)`` float64 each differing decision's rolled-out equity difference, B minus A (points).
        diff_se: ``(differ,)`` float64 the rollout's standard error of each difference (paired over the trials).
        index: ``(differ,)`` int64 the decision index of each.
        settings: the judge, trials, truncation, seed and agent specs.
        interrupted: the signal's name when SIGINT/SIGTERM stopped the test (the figures are then those of the
            decisions of the work units that finished), else None.
    """

    decisions: int
    differ: int
    gain_mppd: float
    se_mppd: float
    gain_per_difference: float
    diffs: np.ndarray
    diff_se: np.ndarray
    index: np.ndarray
    settings: dict = field(default_factory=dict)
    interrupted: str | None = None

    def as_dict(self) -> dict:
        """JSON-ready figures (the per-decision arrays as lists; ``se_mppd``, not defined for one decision, as
        None)."""
        return {"decisions": self.decisions, "differ": self.differ, "gain_mppd": self.gain_mppd,
                "se_mppd": None if math.isnan(self.se_mppd) else self.se_mppd,
                "gain_per_difference": self.gain_per_difference,
                "diffs": self.diffs.tolist(), "diff_se": self.diff_se.tolist(),
                "index": self.index.tolist(), "settings": self.settings, "interrupted": self.interrupted}


def _seed_of(seed: int, *key: int) -> int:
    """A 63-bit integer seed for ``(seed, *key)`` (numpy's SeedSequence mixing)."""
    return int(np.random.SeedSequence([seed, *key]).generate_state(2, dtype=np.uint32).view(np.uint64)[0] >> 1)


def draw_decisions(boards: np.ndarray, count: int, seed: int) -> Decisions:
    """``count`` decisions (or all positions when fewer) drawn from ``boards`` ``(M, 2, 25)``, each with a roll;
    forced decisions (one legal play) dropped afterwards, so at most ``count`` remain.

    Raises:
        BgaiError: ``count`` < 1, or no positions.
    """
    boards = as_batch(boards)
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise BgaiError(f"count must be a whole number >= 1, got {count!r}")
    if len(boards) == 0:
        raise BgaiError("no positions to draw decisions from")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    src = np.sort(rng.choice(len(boards), size=min(int(count), len(boards)), replace=False))
    dice = rng.integers(1, 7, size=(len(src), 2))
    b = boards[src]
    _, owner = afterstates(b, dice, validate=False)
    plays = np.bincount(owner, minlength=len(src))
    keep = plays > 1
    return Decisions(b[keep], dice[keep], src[keep].astype(np.int64))


def _context(spec_a: str, spec_b: str, judge: str) -> tuple:
    return make_agent(spec_a), make_agent(spec_b), RolloutPolicy(make_agent(judge))


def _unit(context: tuple, unit: tuple) -> list:
    """One chunk of decisions: ``[(index, diff, diff_se), ...]`` for those where the plays differ."""
    a, b, policy = context
    seed, first, boards, dice, trials, truncate = unit
    out = []
    picks = []
    for agent, tag in ((a, 1), (b, 2)):
        rows = []
        for i in range(len(boards)):  # per decision, so each choice is a function of (seed, index) only
            rng = np.random.default_rng(np.random.SeedSequence([seed, tag, first + i]))
            rows.append(agent.choose(boards[i : i + 1], dice[i : i + 1], rng)[0])
        picks.append(np.asarray(rows, dtype=np.int8))
    for i in range(len(boards)):
        pa, pb = picks[0][i], picks[1][i]
        if np.array_equal(pa, pb):
            continue
        roots = flip(np.stack([pa, pb]))  # the opponent on roll after each play
        res = run_unit(policy, roots, 0, trials, seed=_seed_of(seed, 3, first + i), truncate=truncate,
                       variance_reduction=policy.has_probabilities)
        eq = cubeless_equity(swap_perspective(res))  # (2, trials), the mover's equity
        d = eq[1] - eq[0]
        out.append((first + i, float(d.mean()), float(d.std(ddof=1) / math.sqrt(trials))))  # trials >= 2
    return out


def summarise(decisions: int, index: np.ndarray, diffs: np.ndarray, diff_se: np.ndarray,
              settings: dict | None = None) -> PairedResult:
    """:class:`PairedResult` from the differing decisions' rolled-out differences (points, B minus A); the other
    ``decisions - len(diffs)`` decisions count as exact zeros.

    Raises:
        BgaiError: no decisions, or more differences than decisions.
    """
    diffs = np.asarray(diffs, dtype=np.float64)
    if decisions < 1:
        raise BgaiError("no decisions to summarise (every drawn decision was forced?)")
    if diffs.size > decisions:
        raise BgaiError(f"{diffs.size} differences for {decisions} decisions")
    full = np.zeros(decisions)
    full[: diffs.size] = diffs
    se = 1000.0 * full.std(ddof=1) / math.sqrt(decisions) if decisions > 1 else float("nan")
    return PairedResult(decisions=int(decisions), differ=int(diffs.size), gain_mppd=1000.0 * float(full.mean()),
                        se_mppd=float(se), gain_per_difference=float(diffs.mean()) if diffs.size else 0.0,
                        diffs=diffs, diff_se=np.asarray(diff_se, dtype=np.float64),
                        index=np.asarray(index, dtype=np.int64), settings=dict(settings or {}))


def paired_test(spec_a: str, spec_b: str, decisions: Decisions, *, judge: str = "gnubg", trials: int = 36,
                truncate: int | None = 5, seed: int = 1, workers: int = 1, progress=None) -> PairedResult:
    """Agent B against agent A on ``decisions``, judged by rollouts where their plays differ (module docstring).

    Args:
        spec_a, spec_b: agent specs (:func:`bgai.agents.registry.make_agent`).
        decisions: from :func:`draw_decisions`.
        judge: the rollout agent's spec (default ``gnubg``, GNU Backgammon 0-ply), which plays and evaluates at
            0-ply (a spec with ``ply`` > 0 is refused); an agent without probabilities (pubeval) rolls out to the
            end without variance reduction (``truncate`` must be None).
        trials: trials per differing decision (>= 2).
        truncate: plies after the play at which the trials are scored by the judge's 0-ply evaluation (>= 0;
            0: the judge's evaluation of the two afterstates, no dice), or None (to the end of the game).
        seed: the seed of the agents' random choices and the rollouts' dice.
        workers: worker processes.
        progress: optional ``(finished units, units)`` callback.

    Returns:
        :class:`PairedResult`; after SIGINT/SIGTERM, that of the decisions finished (:attr:`PairedResult.interrupted`).

    Raises:
        AgentSpecError: a bad spec.  BgaiError: bad ``trials``, ``truncate`` or ``workers``, a judge with a ply
            above 0, a judge that cannot truncate asked to, or a stop before any decision was finished.
    """
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 2:
        raise BgaiError(f"trials must be a whole number >= 2, got {trials!r}")
    if truncate is not None and (isinstance(truncate, bool) or not isinstance(truncate, (int, np.integer))
                                 or truncate < 0):
        raise BgaiError(f"truncate must be a whole number >= 0 or None, got {truncate!r}")
    context = _context(spec_a, spec_b, judge)
    if getattr(context[2].agent, "ply", 0):
        raise BgaiError(f"the judge plays and evaluates at 0-ply: give {judge!r} without a ply above 0")
    if truncate is not None and not context[2].has_probabilities:
        raise BgaiError(f"the judge {judge!r} has no evaluation: it can only roll out to the end (use --truncate "
                        "none, truncate=None)")
    n = len(decisions.boards)
    size = unit_size(n, smallest=4, largest=64, even=False) if n else 1
    units = [(int(seed), lo, decisions.boards[lo : lo + size], decisions.dice[lo : lo + size], int(trials), truncate)
             for lo in range(0, n, size)]
    run = run_units(_unit, units, workers=workers, setup=_context, setup_args=(spec_a, spec_b, judge),
                    context=context, progress=progress)
    finished = sum(len(units[i][2]) for i in run.results)
    if run.interrupted and not finished:
        raise BgaiError(f"stopped by {run.interrupted} before any decision was finished")
    rows = sorted(r for res in run.results.values() for r in res)
    settings = {"a": spec_a, "b": spec_b, "judge": judge, "trials": int(trials), "truncate": truncate,
                "seed": int(seed), "variance_reduction": context[2].has_probabilities}
    res = summarise(finished, np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows]),
                    np.array([r[2] for r in rows]), settings)
    res.interrupted = run.interrupted
    return res
