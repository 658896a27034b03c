"""Position analysis before the roll: evaluation (probabilities, cubeless and cubeful equity) and the cube
decision, and the agent's choice of play -- for one position at a time.

Cube decisions follow :mod:`bgai.game.cube` (GNU Backgammon's 0-ply cubeful evaluation from the agent's cubeless
probabilities) for agents that can judge the cube (``agent.capabilities.cube``); other agents get the
documented fallback, :meth:`bgai.game.cube.CubeDecision.conservative`: never double, always take.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgai.agents.base import Agent
from bgai.analysis.plays import agent_at_ply
from bgai.core.board import as_batch, flip
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.core.equity import cubeless_equity
from bgai.core.movegen import Play, legal_plays
from bgai.errors import AgentCapabilityError
from bgai.game.cube import CubeDecision, cube_decision, cube_efficiency, cubeless_mwc

__all__ = ["Evaluation", "evaluate_position", "decide_cube", "position_probabilities", "choose_play"]


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The evaluation of a position for the side on roll, before it rolls.

    Attributes:
        probabilities: ``(5,)`` float64 cubeless outcome probabilities (:data:`bgai.core.equity.OUTPUTS`).
        cubeless_equity: cubeless money equity in points per game (gammons counted).
        cube_state: the cube state used (the default money state when none was given).
        cube: the cube decision (:func:`decide_cube`).
        cubeful_equity: the cubeful equity after the proper cube action: money play in points per game per
            unit of the cube; match play GNU Backgammon's normalised equity of the cubeful MWC.
        mwc: match play: the cubeful match-winning chance after the proper cube action; else None.
        cubeless_mwc: match play: the cubeless (dead cube) match-winning chance; else None.
        ply: the ply the probabilities were evaluated at.
    """

    probabilities: np.ndarray
    cubeless_equity: float
    cube_state: CubeState
    cube: CubeDecision
    cubeful_equity: float
    mwc: float | None
    cubeless_mwc: float | None
    ply: int | None


def _name(agent: Agent) -> str:
    return str(getattr(agent, "spec", None) or getattr(agent, "name", type(agent).__name__))


def position_probabilities(agent: Agent, board: np.ndarray, *, ply: int | None = None) -> np.ndarray:
    """``(5,)`` float64 cubeless outcome probabilities of the side on roll of ``board`` (``(2, 25)``).

    Raises:
        AgentCapabilityError: the agent gives no probabilities, or not at ``ply``.
        InvalidPositionError: a bad board.
    """
    if not agent.capabilities.probabilities:
        raise AgentCapabilityError(
            f"agent {_name(agent)!r} gives no probabilities; use a neural model or 'gnubg' for evaluations")
    agent = agent_at_ply(agent, ply)
    return np.array(agent.probabilities(as_batch(board))[0], dtype=np.float64)


def decide_cube(
    agent: Agent,
    board: np.ndarray,
    cube_state: CubeState | None = None,
    *,
    doubled: bool = False,
    ply: int | None = None,
) -> CubeDecision:
    """The cube decision of a position before the roll.

    Args:
        agent: any agent; agents that cannot judge the cube get :meth:`CubeDecision.conservative`.
        board: ``(2, 25)``: without ``doubled``, from the view of the side on roll (should it double, and would
            the opponent take?); with ``doubled``, from the view of the side that has been doubled (should it
            take?).
        cube_state: the cube and score from the same view as ``board`` (before the double); None = money play,
            centred cube, Jacoby rule.
        doubled: the side of ``board`` has been doubled and must take or pass.
        ply: evaluate at this ply (None: the agent's own).

    Returns:
        The :class:`~bgai.game.cube.CubeDecision` **of the side on roll** (the doubler when ``doubled``):
        ``double`` whether it should double (False where it may not), ``take`` whether its opponent should take.

    Raises:
        MatchStateError: a match longer than the match equity table.  AgentCapabilityError: not at ``ply``.
    """
    state = cube_state if cube_state is not None else CubeState()
    if doubled:
        board, state = flip(as_batch(board)[0]), state.swapped()
    if not agent.capabilities.cube:
        return CubeDecision.conservative(state)
    b = as_batch(board)
    probs = position_probabilities(agent, b[0], ply=ply)
    return cube_decision(probs, state, float(cube_efficiency(b)[0]))


def evaluate_position(
    agent: Agent, board: np.ndarray, cube_state: CubeState | None = None, *, ply: int | None = None
) -> Evaluation:
    """Probabilities, cubeless and cubeful equity and the cube decision of the side on roll, before it rolls.

    Args:
        agent: an agent with probabilities.
        board: ``(2, 25)`` position, side on roll in row 0.
        cube_state: the cube and score of the side on roll; None = money play, centred cube, Jacoby rule.
        ply: evaluate at this ply (None: the agent's own).

    Raises:
        AgentCapabilityError: the agent gives no probabilities.  MatchStateError: a match longer than the match
        equity table.
    """
    state = cube_state if cube_state is not None else CubeState()
    b = as_batch(board)
    probs = position_probabilities(agent, b[0], ply=ply)
    decision = cube_decision(probs, state, float(cube_efficiency(b)[0]))
    return Evaluation(
        probabilities=probs,
        cubeless_equity=float(cubeless_equity(probs)),
        cube_state=state,
        cube=decision,
        cubeful_equity=float(decision.optimal),
        mwc=decision.optimal_mwc,
        cubeless_mwc=None if state.is_money else float(cubeless_mwc(probs[None], state)[0]),
        ply=agent_at_ply(agent, ply).capabilities.ply,
    )


def choose_play(agent: Agent, board: np.ndarray, dice, rng: np.random.Generator) -> Play | None:
    """The agent's play for one position and roll, or None when no play is legal.

    Args:
        agent: any agent.
        board: ``(2, 25)``, side on roll in row 0.
        dice: the roll (anything :meth:`bgai.core.dice.Dice.parse` reads).
        rng: random source for agents that use one.

    Returns:
        A :class:`bgai.core.movegen.Play` (``.steps``, ``.notation``, ``.afterstate``) or None.

    Raises:
        InvalidPositionError, InvalidDiceError: bad input.  RuntimeError: the agent returned a position that is
        no legal afterstate (a bug in the agent).
    """
    b = as_batch(board)
    roll = Dice.parse(dice)
    plays = [p for p in legal_plays(b[0], roll) if p.steps]
    if not plays:
        return None
    if len(plays) == 1:
        return plays[0]
    chosen = np.asarray(agent.choose(b, np.asarray([roll.as_tuple()], dtype=np.int64), rng))[0]
    for p in plays:
        if np.array_equal(p.afterstate, chosen):
            return p
    raise RuntimeError(f"agent {_name(agent)!r} chose a position that is not a legal afterstate")
