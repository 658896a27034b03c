"""Ranked plays of a position (hints): every legal play with the agent's evaluation, best first.

Cubeless money equity for probability agents, the agent's own score for score-only bots; with a cube state,
the mover's cubeful equity (money) or match-winning chances (match play).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent, ValueAgent
from bgai.core.board import flip, validate
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.core.movegen import afterstates
from bgai.errors import AgentSpecError, BgaiError, InvalidDiceError
from bgai.game.cube import analyse_cube, cube_efficiency, match_equity_after


@dataclass
class RankedPlay:
    """One legal play with the agent's evaluation.

    Attributes:
        afterstate: ``(2, 25)`` int8, mover's view.
        equity: cubeless equity in ppg for probability agents; the agent's score (e.g. pubeval's) otherwise.
            With a cube state (:func:`rank_plays` ``states``) and a probability agent: the mover's cubeful
            equity instead (money: ppg per unit of the present cube; match: GNU Backgammon's normalised equity
            of the cubeful MWC).
        probabilities: ``(5,)`` float64 in :data:`bgai.core.equity.OUTPUTS` order for the mover, or ``None``.
        mwc: match play with a cube state: the mover's cubeful match-winning chance (0..1); else ``None``.
    """

    afterstate: np.ndarray
    equity: float
    probabilities: np.ndarray | None
    mwc: float | None = None


def score_plays(agent: Agent, boards: np.ndarray, after: np.ndarray, src: np.ndarray):
    """The agent's value of each afterstate: ``(scores (M,), probabilities (M, 5) or None)``.

    Uses ``agent.evaluate_plays(boards, after, src)`` when the agent has it (pubeval and the heuristics, whose
    scores depend on the position before the play), else :class:`~bgai.agents.base.ProbabilityAgent`'s
    probabilities or a :class:`~bgai.agents.base.ValueAgent`'s ``evaluate_afterstates``.

    Raises:
        AgentSpecError: the agent has no evaluation (e.g. ``random``).
    """

    if isinstance(agent, ProbabilityAgent):
        probs = agent.afterstate_probabilities(after)
        return cubeless_equity(probs), probs
    if hasattr(agent, "evaluate_plays"):
        return np.asarray(agent.evaluate_plays(boards, after, src), dtype=np.float64), None
    if isinstance(agent, ValueAgent):
        return np.asarray(agent.evaluate_afterstates(after), dtype=np.float64), None
    raise AgentSpecError(f"agent {getattr(agent, 'name', agent)!r} has no evaluation to rank plays with")


def cubeful_afterstate_equities(
    after: np.ndarray, probs: np.ndarray, state
) -> tuple[np.ndarray, np.ndarray | None]:
    """The mover's cubeful equity of afterstates, GNU Backgammon's 0-ply cubeful checker-play evaluation.

    After the play the opponent is on roll and has the cube decision: its cubeful equity is that of the proper
    cube action (:func:`bgai.game.cube.analyse_cube` ``optimal``: no double, or the smaller of double/take and
    double/pass) with its cubeless probabilities and the cube efficiency of the position with it on roll;
    the mover gets the complement (GNU Backgammon ``eval.c`` ``EvaluatePositionCubeful4`` at 0 ply, not top
    level).

    Args:
        after: ``(M, 2, 25)`` int8 afterstates, mover's view (mover in row 0).
        probs: ``(M, 5)`` float64 cubeless probabilities of the mover after each play.
        state: :class:`bgai.game.cube.CubeState` of the mover (before its roll).

    Returns:
        ``(equity (M,), mwc (M,) or None)``: money play: the mover's cubeful equity in ppg per unit of the
        present cube, ``mwc`` None; match play: the mover's cubeful MWC (0..1) and its normalised equity
        ``(2 MWC - (W + L)) / (W - L)`` with ``W``/``L`` the MWC after winning/losing the present cube.

    Raises:
        MatchStateError: a match longer than the match equity table.
    """

    after = np.asarray(after)
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    if len(after) == 0:
        return np.zeros(0), (None if state.is_money else np.zeros(0))
    opp_boards = flip(after)
    opp = analyse_cube(swap_perspective(probs), state.swapped(), cube_efficiency(opp_boards))
    if state.is_money:
        return -opp.optimal, None
    opp_mwc = np.where(opp.double, np.minimum(opp.mwc_double_take, opp.mwc_double_pass), opp.mwc_no_double)
    mwc = 1.0 - opp_mwc

    met = state.met
    a0, a1 = state.away
    win = match_equity_after(met, a0, a1, 0, state.cube_value, 0, state.crawford)
    lose = match_equity_after(met, a0, a1, 0, state.cube_value, 1, state.crawford)
    return (2.0 * mwc - (win + lose)) / (win - lose), mwc


def rank_plays(agent: Agent, boards: np.ndarray, dice: np.ndarray, states=None) -> list[list[RankedPlay]]:
    """Every legal play of each position, ranked by the agent, best first; the whole batch in one agent call.

    Args:
        agent: an agent with an evaluation (not ``random``).
        boards: ``(N, 2, 25)`` int8 positions, side on roll in row 0 (validated).
        dice: ``(N, 2)`` dice 1..6.
        states: optional ``N`` :class:`bgai.game.cube.CubeState` (or None entries) of the side on roll: for agents
            with probabilities, positions with a state are ranked by the mover's cubeful equity (match play:
            by match-winning chance), see :func:`cubeful_afterstate_equities`.  Agents without probabilities
            always rank by their cubeless score.

    Returns:
        ``N`` lists of :class:`RankedPlay` (a single entry, the unchanged position, where no play is legal).
        Ties keep the generator's order.

    Raises:
        InvalidPositionError, InvalidDiceError: bad input; AgentSpecError: the agent cannot evaluate.
    """

    boards = validate(boards)
    dice = np.asarray(dice)
    if dice.shape != (len(boards), 2) or not np.isin(dice, np.arange(1, 7)).all():
        raise InvalidDiceError(f"dice must be {(len(boards), 2)} values 1..6")
    after, src = afterstates(boards, dice)
    scores, probs = score_plays(agent, boards, after, src)
    mwcs = np.full(len(scores), np.nan)
    if states is not None and probs is not None:
        if len(states) != len(boards):
            raise BgaiError(f"states: {len(states)} cube states for {len(boards)} positions")
        scores = np.array(scores, dtype=np.float64)
        groups: dict = {}
        for i, st in enumerate(states):
            if st is not None:
                groups.setdefault(st, []).append(i)
        for st, idx in groups.items():
            rows = np.flatnonzero(np.isin(src, idx))
            eq, mwc = cubeful_afterstate_equities(after[rows], probs[rows], st)
            scores[rows] = eq
            if mwc is not None:
                mwcs[rows] = mwc
    order = np.lexsort((np.arange(len(scores)), -scores, src))
    out: list[list[RankedPlay]] = [[] for _ in range(len(boards))]
    for i in order:
        out[int(src[i])].append(
            RankedPlay(
                after[i],
                float(scores[i]),
                None if probs is None else np.asarray(probs[i], dtype=np.float64),
                None if np.isnan(mwcs[i]) else float(mwcs[i]),
            )
        )
    return out
