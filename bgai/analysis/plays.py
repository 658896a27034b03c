"""Ranked plays (hints): every legal play of a position with the agent's evaluation, best first.

What a play is ranked by (:attr:`RankedPlay.score_kind`):

* ``'equity'``: agents with probabilities (gnubg, neural models): cubeless money equity in points per game
  (:func:`bgai.core.equity.cubeless_equity`) -- or, when a money cube state is given, the mover's cubeful
  money equity per unit of the cube (GNU Backgammon's 0-ply cubeful checker play);
* ``'mwc'``: agents with probabilities and a match cube state: the mover's cubeful match-winning chance;
* ``'score'``: agents without probabilities (pubeval, the heuristics): the agent's own score, in its own
  units (not points per game); a cube state is not used.

An agent without any evaluation (``random``) cannot rank plays (:class:`~bgai.errors.AgentCapabilityError`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgai.agents.base import Agent
from bgai.core.board import as_batch, flip, validate
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.core.movegen import Play, afterstates, legal_plays
from bgai.errors import AgentCapabilityError, BgaiError, InvalidDiceError
from bgai.game.cube import analyse_cube, cube_efficiency, match_equity_after, met_for

__all__ = [
    "RankedPlay",
    "SCORE_KINDS",
    "rank_plays",
    "rank_plays_batch",
    "score_plays",
    "cubeful_afterstate_equities",
    "agent_at_ply",
]

#: The values :attr:`RankedPlay.score_kind` takes.
SCORE_KINDS = ("equity", "mwc", "score")


@dataclass(frozen=True, eq=False)
class RankedPlay:
    """One legal play with the agent's evaluation of it.

    Attributes:
        play: the :class:`bgai.core.movegen.Play` (``.steps``, ``.notation``, ``.afterstate`` from the mover's
            view); with no legal play, the one "play" with no steps that leaves the position unchanged.
        score: the value plays are ranked by (higher is better for the mover), in the unit ``score_kind``
            names.
        score_kind: ``'equity'`` (points per game: cubeless, or cubeful per unit of the cube with a money cube
            state), ``'mwc'`` (cubeful match-winning chance 0..1) or ``'score'`` (the agent's own units); a
            server listing the plays of an agent without evaluation (:meth:`bgai.serve.bot.Bot.rank_plays`)
            uses ``'none'`` with ``score`` NaN.
        probabilities: ``(5,)`` float64 cubeless outcome probabilities of the mover after the play
            (:data:`bgai.core.equity.OUTPUTS` order), or None for agents without probabilities.
        cubeless_equity: cubeless money equity (ppg) from the probabilities, or None.
        cubeful_equity: with a cube state (agents with probabilities): money play, the mover's cubeful equity per
            unit of the cube; match play, GNU Backgammon's normalised equity of the cubeful MWC; else None.
        mwc: match play with a cube state: the mover's cubeful match-winning chance; else None.
    """

    play: Play
    score: float
    score_kind: str
    probabilities: np.ndarray | None = None
    cubeless_equity: float | None = None
    cubeful_equity: float | None = None
    mwc: float | None = None

    @property
    def afterstate(self) -> np.ndarray:
        """``(2, 25)`` int8 position after the play, mover's view."""
        return self.play.afterstate

    @property
    def notation(self) -> str:
        """The play in standard notation (``''`` when no play is legal)."""
        return self.play.notation

    @property
    def equity(self) -> float | None:
        """The equity shown for the play: cubeful (with a cube state) or else cubeless, in points per game (match
        play: normalised equity); None for agents without probabilities (their value is :attr:`score`)."""
        return self.cubeful_equity if self.cubeful_equity is not None else self.cubeless_equity


def agent_at_ply(agent: Agent, ply: int | None) -> Agent:
    """``agent`` evaluating at ``ply`` (None: its own ply, ``agent.capabilities.ply``).

    Raises:
        AgentCapabilityError: the agent has no evaluation, or cannot evaluate at ``ply``.
    """
    caps = agent.capabilities
    if ply is None or ply == caps.ply:
        return agent
    if not caps.probabilities:
        raise AgentCapabilityError(
            f"agent {getattr(agent, 'name', agent)!r} evaluates at {caps.ply}-ply only, not {ply}-ply")
    return agent.at_ply(ply)


def score_plays(agent: Agent, boards: np.ndarray, after: np.ndarray, src: np.ndarray):
    """The agent's value of each afterstate: ``(scores (M,) float64, probabilities (M, 5) or None)``.

    Agents with probabilities (``agent.capabilities.probabilities``): cubeless equity and the probabilities;
    other agents that score plays: ``agent.evaluate_plays(boards, after, src)`` (pubeval's and the heuristics'
    scores depend on the position before the play).

    Raises:
        AgentCapabilityError: the agent has no evaluation (e.g. ``random``).
    """
    caps = agent.capabilities
    if caps.probabilities:
        probs = np.asarray(agent.afterstate_probabilities(after), dtype=np.float64)
        return cubeless_equity(probs), probs
    if caps.play_scores:
        return np.asarray(agent.evaluate_plays(boards, after, src), dtype=np.float64), None
    raise AgentCapabilityError(f"agent {getattr(agent, 'name', agent)!r} has no evaluation to rank plays with")


def cubeful_afterstate_equities(
    after: np.ndarray, probs: np.ndarray, state: CubeState
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
        state: :class:`~bgai.core.cube_state.CubeState` of the mover (before its roll).

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
    met = met_for(state)
    a0, a1 = state.away
    win = match_equity_after(met, a0, a1, 0, state.cube_value, 0, state.crawford)
    lose = match_equity_after(met, a0, a1, 0, state.cube_value, 1, state.crawford)
    return (2.0 * mwc - (win + lose)) / (win - lose), mwc


def rank_plays_batch(
    agent: Agent,
    boards: np.ndarray,
    dice,
    cube_states=None,
    *,
    ply: int | None = None,
) -> list[list[RankedPlay]]:
    """Every legal play of each position, ranked by the agent, best first; the whole batch in one agent call.

    Args:
        agent: an agent that scores plays (``agent.capabilities.play_scores``).
        boards: ``(N, 2, 25)`` int8 positions, side on roll in row 0 (validated).
        dice: ``N`` rolls (an ``(N, 2)`` array, or anything :meth:`bgai.core.dice.Dice.parse` reads, each).
        cube_states: optional ``N`` :class:`~bgai.core.cube_state.CubeState` (or None entries) of the side on
            roll: for agents with probabilities, positions with a state are ranked by the mover's cubeful equity
            (match play: by cubeful MWC), see :func:`cubeful_afterstate_equities`.  Agents without probabilities
            always rank by their own cubeless score.
        ply: evaluate at this ply (:func:`agent_at_ply`); None: the agent's own.

    Returns:
        ``N`` lists of :class:`RankedPlay` (a single entry, the unchanged position, where no play is legal).
        Ties keep the move generator's order.

    Raises:
        InvalidPositionError, InvalidDiceError: bad input; AgentCapabilityError: the agent cannot evaluate, or
        not at ``ply``; MatchStateError: a match longer than the match equity table.
    """
    agent = agent_at_ply(agent, ply)
    boards = validate(boards)
    n = len(boards)
    rolls = [Dice.parse(d) for d in dice]
    if len(rolls) != n:
        raise InvalidDiceError(f"{len(rolls)} rolls for {n} positions")
    if cube_states is not None and len(cube_states) != n:
        raise BgaiError(f"cube_states: {len(cube_states)} cube states for {n} positions")
    dice_arr = np.array([d.as_tuple() for d in rolls], dtype=np.int64).reshape(n, 2)
    after, src = afterstates(boards, dice_arr)
    scores, probs = score_plays(agent, boards, after, src)
    scores = np.array(scores, dtype=np.float64)
    kind = np.full(len(scores), "score" if probs is None else "equity", dtype=object)
    cubeless = None if probs is None else np.array(scores)
    cubeful = np.full(len(scores), np.nan)
    mwcs = np.full(len(scores), np.nan)
    if cube_states is not None and probs is not None:
        groups: dict[CubeState, list[int]] = {}
        for i, st in enumerate(cube_states):
            if st is not None:
                groups.setdefault(st, []).append(i)
        for st, idx in groups.items():
            rows = np.flatnonzero(np.isin(src, idx))
            eq, mwc = cubeful_afterstate_equities(after[rows], probs[rows], st)
            cubeful[rows] = eq
            if mwc is None:
                scores[rows] = eq
            else:
                mwcs[rows] = mwc
                scores[rows] = mwc
                kind[rows] = "mwc"
    order = np.lexsort((np.arange(len(scores)), -scores, src))
    plays = _plays_by_afterstate(boards, rolls)
    out: list[list[RankedPlay]] = [[] for _ in range(n)]
    for i in order:
        j = int(src[i])
        out[j].append(
            RankedPlay(
                play=plays[j][after[i].tobytes()],
                score=float(scores[i]),
                score_kind=str(kind[i]),
                probabilities=None if probs is None else np.array(probs[i], dtype=np.float64),
                cubeless_equity=None if cubeless is None else float(cubeless[i]),
                cubeful_equity=None if np.isnan(cubeful[i]) else float(cubeful[i]),
                mwc=None if np.isnan(mwcs[i]) else float(mwcs[i]),
            )
        )
    return out


def _plays_by_afterstate(boards: np.ndarray, rolls: list[Dice]) -> list[dict[bytes, Play]]:
    """Per position: afterstate bytes -> its :class:`Play` (steps and notation), from
    :func:`bgai.core.movegen.legal_plays` (the same set of afterstates as the batched generator)."""
    out = []
    for board, roll in zip(boards, rolls):
        out.append({np.asarray(p.afterstate, dtype=np.int8).tobytes(): p for p in legal_plays(board, roll)})
    return out


def rank_plays(
    agent: Agent,
    board: np.ndarray,
    dice,
    cube_state: CubeState | None = None,
    *,
    ply: int | None = None,
) -> list[RankedPlay]:
    """Every legal play of one position with the roll, ranked by the agent, best first.

    Args:
        agent: an agent that scores plays.
        board: ``(2, 25)`` int8 position, side on roll in row 0.
        dice: the roll (anything :meth:`bgai.core.dice.Dice.parse` reads).
        cube_state: the cube and score of the side on roll, or None for cubeless ranking (see
            :func:`rank_plays_batch`).
        ply: evaluate at this ply; None: the agent's own.

    Returns:
        The :class:`RankedPlay` list (one entry, the unchanged position, when no play is legal).

    Raises:
        see :func:`rank_plays_batch`.
    """
    b = as_batch(board)
    if b.shape[0] != 1:
        raise BgaiError(f"rank_plays takes one position, got {b.shape[0]}; use rank_plays_batch")
    return rank_plays_batch(agent, b, [dice], None if cube_state is None else [cube_state], ply=ply)[0]
