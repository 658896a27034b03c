"""Cube policies: how a player in :func:`bgai.game.play.play` handles the doubling cube, batched.

Agents that can judge the cube (``agent.capabilities.cube``: agents with probabilities, gnubg, neural nets) use
:class:`JanowskiCubePolicy`, i.e. :mod:`bgai.game.cube` on their own cubeless probabilities (GNU Backgammon's 0-ply
cube logic).  Agents without probabilities (pubeval, heuristics, random) use :class:`NeverDoubleAlwaysTake`: they
never double and always take.  This is the simplest policy that needs no equity estimate and never ends a game
early; against a cube-using opponent it gives equity away (it takes hopeless doubles and never cashes), which the
reports show as the opponent's doubles and the ppg.  :func:`cube_policy_for` picks the policy of an agent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from typing import Sequence

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent
from bgai.game.cube import CubeState, analyse_cube, cube_efficiency

__all__ = ["CubePolicy", "JanowskiCubePolicy", "NeverDoubleAlwaysTake", "cube_policy_for"]


class CubePolicy(ABC):
    """How a player handles the cube, batched.

    Both methods get the positions **from the doubler's view** (the player about to roll in row 0) and the
    :class:`~bgai.game.cube.CubeState` of each position seen by the doubler, and return one bool per position.
    """

    name = "policy"

    @abstractmethod
    def offer(self, boards: np.ndarray, states: Sequence[CubeState]) -> np.ndarray:
        """``(K,)`` bool: double now?  ``boards`` ``(K, 2, 25)`` int8, the deciding player on roll."""

    @abstractmethod
    def accept(self, boards: np.ndarray, states: Sequence[CubeState]) -> np.ndarray:
        """``(K,)`` bool: take the double?  ``boards`` ``(K, 2, 25)`` int8 and ``states`` from the **doubler's**
        view (the answering player is row 1)."""


class NeverDoubleAlwaysTake(CubePolicy):
    """The simple policy of agents without probabilities (pubeval, heuristics, random): never double, always
    take."""

    name = "never double, always take"

    def offer(self, boards, states):
        return np.zeros(len(states), dtype=bool)

    def accept(self, boards, states):
        return np.ones(len(states), dtype=bool)


class JanowskiCubePolicy(CubePolicy):
    """Cube decisions from an agent's cubeless probabilities with :func:`bgai.game.cube.analyse_cube` (Janowski in
    money play, GNU Backgammon's match model, cube efficiency of :func:`bgai.game.cube.cube_efficiency`).

    The offer is made on "Double, take/pass" and "Redouble, ..." (not on "optional" or "too good"); the take
    when double/take is worth less to the doubler than double/pass.  Positions sharing a state are analysed
    together; the agent's ``probabilities`` is called once per method call.
    """

    name = "janowski"

    def __init__(self, agent: ProbabilityAgent) -> None:
        self.agent = agent

    def _analyse(self, boards: np.ndarray, states: Sequence[CubeState], what: str) -> np.ndarray:
        out = np.zeros(len(states), dtype=bool)
        if len(states) == 0:
            return out
        probs = self.agent.probabilities(boards)
        eff = cube_efficiency(boards)
        groups: dict[CubeState, list[int]] = defaultdict(list)
        for k, s in enumerate(states):
            groups[s].append(k)
        for s, idx in groups.items():
            a = analyse_cube(probs[idx], s, eff[idx])
            out[idx] = a.double if what == "double" else a.take
        return out

    def offer(self, boards, states):
        return self._analyse(boards, states, "double")

    def accept(self, boards, states):
        return self._analyse(boards, states, "take")


def cube_policy_for(agent: Agent) -> CubePolicy:
    """:class:`JanowskiCubePolicy` for agents that can judge the cube (``agent.capabilities.cube``: agents with
    probabilities), :class:`NeverDoubleAlwaysTake` otherwise."""
    if agent.capabilities.cube:
        return JanowskiCubePolicy(agent)
    return NeverDoubleAlwaysTake()
