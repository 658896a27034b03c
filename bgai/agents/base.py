"""The one interface every bot implements, batched.

An agent is given positions ``(N, 2, 25)`` int8 (bgai's layout, :mod:`bgai.core.board`; row 0 on roll) and dice
``(N, 2)`` and returns one chosen afterstate per position, ``(N, 2, 25)`` int8, as seen by the player who moved
(rows not swapped).  The game runner never knows which bot it drives.

Agents with a value function subclass :class:`ValueAgent` and implement only
:meth:`ValueAgent.evaluate_afterstates`; choosing is then the afterstate of highest value per input.

What else an agent can answer is declared by its :attr:`Agent.capabilities` (:class:`Capabilities`), which
callers test instead of the agent's class: whether it scores plays (:meth:`Agent.evaluate_plays`), estimates
outcome probabilities (:meth:`ProbabilityAgent.probabilities`) and can judge the cube from them, and at which
ply it evaluates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from bgai.core.board import flip
from bgai.core.equity import cubeless_equity, finished_or_evaluate, swap_perspective  # noqa: F401 (re-exported)
from bgai.core.movegen import afterstates
from bgai.errors import AgentCapabilityError


@dataclass(frozen=True)
class Capabilities:
    """What an agent can answer besides choosing a play.

    Attributes:
        play_scores: :meth:`Agent.evaluate_plays` gives a value to every afterstate (higher = better for the
            mover): cubeless equity for agents with probabilities, an agent-specific score otherwise.
        probabilities: :meth:`ProbabilityAgent.probabilities` gives the five cubeless outcome probabilities of a
            position (:data:`bgai.core.equity.OUTPUTS`).
        cube: cube decisions can be made from the agent's probabilities (:mod:`bgai.game.cube`); agents without
            it use the "never double, always take" policy.
        ply: the lookahead depth of the agent's evaluation (0 = static evaluation), None when it has none.
    """

    play_scores: bool = False
    probabilities: bool = False
    cube: bool = False
    ply: int | None = None

    @property
    def score_kind(self) -> str | None:
        """What the agent's play values are: ``'equity'`` (cubeless equity in points per game, agents with
        probabilities), ``'score'`` (an agent-specific scale, e.g. pubeval's) or None (no evaluation)."""
        if self.probabilities:
            return "equity"
        return "score" if self.play_scores else None


class Agent(ABC):
    """A backgammon bot (cubeless checker play; cube actions are added by :mod:`bgai.game.cube`)."""

    #: Short name used in reports, e.g. ``'pubeval'``.
    name: str = "agent"

    #: Games played together from which this agent plays at most of its full speed per game: the smallest work
    #: unit of an evaluation (:mod:`bgai.evaluate.series`).  Batched agents (one move-generator and evaluator
    #: call per ply for the whole batch) gain a lot from large batches: pubeval plays about 1,900 games/s per
    #: core in batches of 1,000 games, 1,440 in batches of 500 and 930 in batches of 250.
    batch_games: int = 500

    #: ``True`` promises that :meth:`choose` plays each position the same whatever else is in the call: it does
    #: not draw from its ``rng``, and its scores do not depend on the batch (bit for bit), so that the game loop
    #: may put the games of several work units into one call (:func:`bgai.game.play.play`'s continuous
    #: batching).  The default ``False`` keeps each unit's positions in calls of their own, with the unit's rng:
    #: the random bot draws from it, and torch nets' values change in the last bits (about 1e-7) with the batch.
    batch_invariant: bool = False

    #: What the agent can answer (:class:`Capabilities`); an agent that only chooses plays declares nothing.
    capabilities: Capabilities = Capabilities()

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        """Value of each afterstate for the player who moved, grouped by the position it comes from.

        Args:
            boards: ``(N, 2, 25)`` positions before the play.
            afterstates: ``(M, 2, 25)`` afterstates, mover's view.
            src: ``(M,)`` int, index into ``boards`` of each afterstate.

        Returns:
            ``(M,)`` float64; higher is better for the mover (see :attr:`Capabilities.score_kind`).

        Raises:
            AgentCapabilityError: the agent has no evaluation (``capabilities.play_scores`` is False).
        """
        raise AgentCapabilityError(f"agent {getattr(self, 'name', self)!r} has no evaluation to rank plays with")

    @abstractmethod
    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Choose a play for each position.

        Args:
            boards: ``(N, 2, 25)`` int8 positions, side to move in row 0.
            dice: ``(N, 2)`` integer dice, values 1..6.
            rng: random source for agents that need one (the caller seeds it; agents own no global state).

        Returns:
            ``(N, 2, 25)`` int8 chosen afterstates, from the mover's view (sides not swapped).  When no play is
            legal the afterstate is the unchanged position.
        """


class ValueAgent(Agent):
    """An agent that scores afterstates and plays the best one (ties: the first generated)."""

    capabilities = Capabilities(play_scores=True, ply=0)

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        """:meth:`evaluate_afterstates` (the value does not depend on the position before the play)."""
        return np.asarray(self.evaluate_afterstates(afterstates), dtype=np.float64)

    @abstractmethod
    def evaluate_afterstates(self, afterstates: np.ndarray) -> np.ndarray:
        """Value of each afterstate for the player who just moved.

        Args:
            afterstates: ``(M, 2, 25)`` int8, row 0 the player who moved, row 1 the player now on roll.

        Returns:
            ``(M,)`` float64; higher is better for the mover.  Cubeless equity in points per game where the agent
            has probabilities; pubeval's score otherwise.
        """

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:

        after, src = afterstates(boards, dice)
        scores = self.evaluate_afterstates(after)
        return after[best_per_input(scores, src, len(boards))]


def best_per_input(scores: np.ndarray, src: np.ndarray, n: int) -> np.ndarray:
    """Index of the highest score within each input's group of afterstates (the one group-argmax of bgai: value
    agents, the neural search and self-play all use it).

    Args:
        scores: ``(M,)`` values.
        src: ``(M,)`` int, the input index of each afterstate, non-decreasing, every ``0..n-1`` present.
        n: number of inputs.

    Returns:
        ``(n,)`` int64 indices into ``scores``; ties go to the first afterstate of the group.
    """
    scores = np.asarray(scores, dtype=np.float64)
    src = np.asarray(src)
    if np.isnan(scores).any():  # rare: sort so that NaN never wins
        order = np.lexsort((-scores, src))
        return order[np.searchsorted(src[order], np.arange(n), side="left")]
    starts = np.searchsorted(src, np.arange(n), side="left")
    group_max = np.maximum.reduceat(scores, starts)
    cand = np.flatnonzero(scores == group_max[src])  # every maximum, in order; the first of each group wins
    return cand[np.searchsorted(src[cand], np.arange(n), side="left")]


def best_k_per_input(scores: np.ndarray, src: np.ndarray, n: int, keep: int, margin: float) -> np.ndarray:
    """The afterstates a search keeps per input: the best ``keep`` of each group by ``scores``, within ``margin``
    of the group's best (GNU Backgammon's move filter ``{accept 0, extra keep, threshold margin}``; the neural
    search's pruning and the gnubg 1-ply rollout player use it).

    Args:
        scores: ``(M,)`` values (higher is better).
        src: ``(M,)`` non-decreasing input index of each afterstate (every ``0..n-1`` present).
        n: number of inputs.
        keep: at most this many per input (>= 1).
        margin: drop those more than this below their group's best.

    Returns:
        Sorted ``(K,)`` int64 indices into ``scores``; at least the best afterstate of every input.
    """
    order = np.lexsort((-scores, src))  # by group, best first
    s = src[order]
    starts = np.searchsorted(s, np.arange(n), side="left")
    rank = np.arange(order.size) - starts[s]
    best = scores[order[starts]]
    ok = (rank < keep) & (scores[order] >= best[s] - margin)
    return np.sort(order[ok])


class ProbabilityAgent(ValueAgent):
    """An agent that estimates outcome probabilities (neural nets, GNU Backgammon).

    Implement :meth:`probabilities` for positions with a side on roll; the value of an afterstate for the player
    who moved is derived here, once: the afterstate is the opponent's position on roll (rows swapped), evaluated,
    then its probabilities turned to the mover's view (:func:`bgai.core.equity.swap_perspective`).
    """

    capabilities = Capabilities(play_scores=True, probabilities=True, cube=True, ply=0)

    def at_ply(self, ply: int) -> "ProbabilityAgent":
        """This agent evaluating at ``ply``: ``self`` when ``ply`` is its own (``capabilities.ply``).

        Agents that can look further ahead (:class:`bgai.agents.neural.NeuralAgent`) override this.

        Raises:
            AgentCapabilityError: the agent cannot evaluate at ``ply``.
        """
        own = self.capabilities.ply
        if ply == own:
            return self
        raise AgentCapabilityError(f"agent {getattr(self, 'name', self)!r} evaluates at {own}-ply only, not {ply}-ply")

    @abstractmethod
    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """Cubeless outcome probabilities for the side on roll, before it rolls.

        Args:
            boards: ``(N, 2, 25)`` int8, side on roll in row 0.

        Returns:
            ``(N, 5)`` float64 in :data:`bgai.core.equity.OUTPUTS` order, for the side on roll.
        """

    def afterstate_probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """``(M, 5)`` probabilities for the player who moved into each ``(M, 2, 25)`` afterstate."""

        return swap_perspective(self.probabilities(flip(afterstates)))

    def evaluate_afterstates(self, afterstates: np.ndarray) -> np.ndarray:

        return cubeless_equity(self.afterstate_probabilities(afterstates))
