"""Luck-adjusted results: a game's points with the luck of the dice taken out, judged by an evaluator.

The luck of a roll (GNU Backgammon's "luck analysis"; the same quantity as the variance reduction of its
rollouts) is how much better the roll is than an average roll, as a judge sees it::

    V(p, r) = the judge's cubeless equity (ppg, mover's view) of its best play of roll r in position p
    luck(p, r) = V(p, r) - sum over the 21 rolls r' of P(r') * V(p, r')

``P`` is 1/36 for a double, 2/36 for the others; a roll with no legal play is valued by the position left
unchanged; a play that ends the game by its exact points.  The opening roll decides the first mover too: its luck
is ``V(start, r)`` for the player who moves, whose expectation over the opening (either player, each of the 15
non-double rolls) is exactly 0 because the judge values the same roll the same for either side.  These are GNU
Backgammon's ``LuckNormal`` and ``LuckFirst`` (``analysis.c``) on cubeless equities: the cubeless counterpart of
the cubeful luck of :mod:`bgai.analysis.match_analysis`, for series of cubeless games.

A game's luck-adjusted result for player A is A's points minus A's luck plus B's luck.  Since each luck term has
expectation 0 given everything before it, whatever the judge and whatever the players choose (the judge's best
play, not the mover's, defines ``V``), the adjusted result has the same expectation as the points: the mean is
unbiased for any judge, and the better the judge, the less variance is left (bgai-sl8 0-ply as judge: the
variance of duplicate-dice pairs fell about 9 times in 400 games of bgai-sl8 against pubeval, 23 times in 10,000
games of bgai-sl8 1-ply against GNU Backgammon 0-ply; README, "Luck-adjusted results").  The judge's own cost is
one 0-ply evaluation of every play of every roll in every position of the game: as much as valuing one candidate
play at 1-ply.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent
from bgai.agents.registry import make_agent
from bgai.analysis.rollout import RolloutPolicy
from bgai.core.dice import ROLL_INDEX, ROLL_WEIGHTS, ROLLS
from bgai.core.equity import cubeless_equity
from bgai.errors import AgentSpecError, BgaiError
from bgai.game.play import GameRecord

__all__ = ["roll_values", "game_luck", "luck_judge", "LUCK_CHUNK"]

#: Positions whose 21 rolls are judged in one batch (about 8,000 afterstates).
LUCK_CHUNK = 400


def luck_judge(spec: str | Agent) -> ProbabilityAgent:
    """The judge of a luck analysis: an agent with outcome probabilities at 0-ply (a bgai model or export,
    ``gnubg``, ``bgsage``), built once per process for a spec string.

    Returns:
        the agent (the same object for the same spec within a process).

    Raises:
        AgentSpecError: a bad spec or model file (the message starts ``luck judge:``); an agent without
            probabilities (pubeval, the heuristic bots, random); a judge that searches (``ply`` >= 1: it would
            value every play of every roll of every position by a search, hundreds of times the cost, and a
            2-ply search of a batch exhausts the memory).
    """
    try:
        agent = _built(spec) if isinstance(spec, str) else spec
    except BgaiError as exc:  # a bad spec, a missing or broken model file
        raise AgentSpecError(f"luck judge: {exc}") from None
    name = getattr(agent, "name", spec)
    if not isinstance(agent, ProbabilityAgent):
        raise AgentSpecError(f"luck judge {name!r} has no outcome probabilities; use a bgai model (default, "
                             "model.pt, an export), gnubg or bgsage")
    ply = agent.capabilities.ply
    if ply:
        raise AgentSpecError(f"luck judge {name!r} searches at {ply}-ply; a judge evaluates at 0-ply (drop its "
                             "'ply' option)")
    return agent


@lru_cache(maxsize=4)
def _built(spec: str) -> Agent:
    return make_agent(spec)


def roll_values(judge: ProbabilityAgent, boards: np.ndarray) -> np.ndarray:
    """``V(p, r)`` of the module docstring for every position and each of the 21 rolls.

    Args:
        judge: the evaluator (:func:`luck_judge`).
        boards: ``(N, 2, 25)`` int8 positions, side on roll in row 0.

    Returns:
        ``(N, 21)`` float64 cubeless equity (points per game, the mover's view) of the judge's best play of each
        roll, in :data:`bgai.core.dice.ROLLS` order.
    """
    policy = RolloutPolicy(judge)  # the same 21-roll lookahead as a rollout's variance reduction
    n = boards.shape[0]
    out = np.empty((n, len(ROLLS)))
    for lo in range(0, n, LUCK_CHUNK):
        probs, _ = policy.lookahead(boards[lo:lo + LUCK_CHUNK])
        out[lo:lo + len(probs)] = cubeless_equity(probs)
    return out


def game_luck(records: Sequence[GameRecord], judge: ProbabilityAgent) -> np.ndarray:
    """Each game's luck for player A: the sum of the luck of A's rolls minus that of B's (module docstring).

    Args:
        records: the games (:class:`bgai.game.play.GameRecord`, cubeless).
        judge: the evaluator (:func:`luck_judge`).

    Returns:
        ``(G,)`` float64 points; the luck-adjusted result of game ``g`` is A's points minus ``luck[g]``.
    """
    if not records:
        return np.zeros(0)
    boards = np.concatenate([r.positions() for r in records])
    rolls = np.concatenate([r.dice for r in records]).astype(np.int64)
    index = ROLL_INDEX[rolls[:, 0], rolls[:, 1]]
    values = roll_values(judge, boards)
    luck = values[np.arange(len(index)), index] - values @ ROLL_WEIGHTS
    sizes = np.array([len(r.dice) for r in records])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    luck[starts] = values[starts, index[starts]]  # the opening roll: expectation 0 over who moves first
    sign = np.concatenate([np.where(r.movers == r.a_seat, 1.0, -1.0) for r in records])
    return np.add.reduceat(sign * luck, starts)
