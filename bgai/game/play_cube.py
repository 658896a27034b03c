"""Cubeful play: money sessions with the doubling cube and N-point matches, batched, between two agents.

The games are played by the one game loop, :func:`bgai.game.play.play` with ``rules`` (its module docstring has
the turn's phases, the units and the dice); :func:`play_cubeful` is that call, and :data:`CubefulResults` its
result type.  The cube policies live in :mod:`bgai.game.policies` (re-exported here).

Statistics of a series (:mod:`bgai.evaluate.cubeful`): money: A's points per game (ppg) with a 95% confidence
interval (normal approximation over pairs in duplicate mode, over games otherwise); match: A's match-winning
percentage with a 95% CI.  Both: win, gammon and backgammon rates per player (of all games, cumulative), average
final cube value per game, doubles offered, takes and passes per player (a take/pass counts for the player who
answered).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bgai.agents.base import Agent
from bgai.game.match import MatchRules
from bgai.game.play import MAX_PLIES, PlayResults, play
from bgai.game.policies import (
    CubePolicy,
    JanowskiCubePolicy,
    NeverDoubleAlwaysTake,
    cube_policy_for,
)

__all__ = [
    "CubePolicy",
    "JanowskiCubePolicy",
    "NeverDoubleAlwaysTake",
    "cube_policy_for",
    "CubefulResults",
    "play_cubeful",
]

#: The results of cubeful play: :class:`bgai.game.play.PlayResults`.
CubefulResults = PlayResults


def play_cubeful(
    agents: Sequence[Agent],
    rules: MatchRules,
    dice_rngs: Sequence[np.random.Generator],
    rng: np.random.Generator,
    *,
    a_seat: np.ndarray | int = 0,
    policies: Sequence[CubePolicy] | None = None,
    max_plies: int = MAX_PLIES,
    record: bool = False,
) -> PlayResults:
    """Play one unit per dice generator (a cubeful money game, or a whole match) between A and B, batched:
    :func:`bgai.game.play.play` with ``rules``.

    Args:
        agents: ``(agent A, agent B)``, possibly the same object.
        rules: :class:`~bgai.game.match.MatchRules` (``MatchRules.money(...)`` or ``MatchRules.match(n)``).
        dice_rngs: one dice generator per unit (see :func:`bgai.game.play.dice_rng`).
        rng: generator handed to the agents' ``choose``.
        a_seat: seat of A per unit (dice order), ``(U,)`` 0/1 or one int.
        policies: cube policies of A and B (default :func:`cube_policy_for` each agent).
        max_plies: per-game safety limit.
        record: keep a :class:`~bgai.game.play.GameRecord` of every game (with its cube actions).

    Returns:
        :class:`~bgai.game.play.PlayResults`.

    Raises:
        MatchStateError: a match longer than the match equity table (for probability agents).
        RuntimeError: a game longer than ``max_plies``, or an agent returning the wrong shape.
    """
    if rules is None:
        raise ValueError("play_cubeful needs rules (MatchRules.money() or MatchRules.match(n))")
    return play(agents, dice_rngs, rng, rules=rules, a_seat=a_seat, policies=policies, record=record,
                max_plies=max_plies)
