"""Resignations: should a side accept its opponent's offer to resign a single game, a gammon or a backgammon?

One rule for every front end (the external-player protocol, ``bgai play``, the HTTP API and its web page):
accept when what the offer gives is worth at least as much as playing on, both measured **in the units that
decide the session**:

* **money play**: points.  Accepting gives ``points x cube`` (a gammon or backgammon counts as a single game
  under the Jacoby rule while the cube is centred, as it would at the end of the game).  Playing on is worth the
  cubeful equity of the position (:func:`bgai.game.cube.analyse_cube`: Janowski's model, with the side on roll's
  best cube action) times the cube value.
* **match play**: match-winning chances.  Accepting gives the MWC after winning ``points x cube`` at this score
  (:meth:`bgai.game.met.MatchEquityTable.mwc_after`, GNU Backgammon's ``getME``: 1.0 when it wins the match);
  playing on is worth the cubeful MWC of the position (:func:`bgai.game.cube.match_cubeful_mwc` through
  :func:`~bgai.game.cube.analyse_cube`, after the side on roll's best cube action).

So a resignation that wins the match is always accepted, and in money play a single game is refused when the
deciding side expects more than one point (big gammon chances, cube not centred under the Jacoby rule).

The comparison is GNU Backgammon's (``rollout.c`` ``getResignEquities``, used by ``play.c`` and ``external.c``:
accept when the value after the resignation is not below the value before it, tolerance 1e-6).  GNU Backgammon
1.07 values playing on with the cubeless utility (gammon prices of the score); bgai uses the cubeful value, which
also counts what the cube is worth to the side on roll.  The position is valued before the roll of the side on
roll (a roll already made is not looked at, as in GNU Backgammon's resignation analysis).

Agents without probabilities (pubeval, the heuristics, the random bot) cannot value playing on: they accept only
a backgammon, or in match play an offer that wins the match; ``equity_if_played`` is then NaN.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from bgai.agents.base import Agent, ProbabilityAgent
from bgai.core.board import flip, is_game_over, validate
from bgai.errors import BgaiError, InvalidPositionError
from bgai.game.cube import CENTRED, CubeState, analyse_cube, cube_efficiency, met_for

__all__ = ["ResignationDecision", "ResignationError", "resignation_decision", "resignation_value", "RESIGNATION_NAMES", "TOLERANCE"]

#: What a resignation of 1, 2 or 3 points offers.
RESIGNATION_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
#: Accept when the offer is worth at least the value of playing on minus this (GNU Backgammon's epsilon).
TOLERANCE = 1e-6


class ResignationError(BgaiError):
    """A resignation that cannot be offered (not 1, 2 or 3 points)."""


class ResignationDecision(NamedTuple):
    """The deciding side's answer to a resignation, with the two values compared.

    Attributes:
        accept: True to accept the offer.
        equity_if_accepted: money: points won by accepting (cube included); match: MWC after accepting.
        equity_if_played: money: cubeful equity of playing on in points (cube included); match: cubeful MWC of
            playing on.  NaN for agents without probabilities.
    """

    accept: bool
    equity_if_accepted: float
    equity_if_played: float


def _check_points(points) -> int:
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or int(points) not in (1, 2, 3):
        raise ResignationError(
            f"a resignation offers 1 (a single game), 2 (a gammon) or 3 (a backgammon) points, got {points!r}"
        )
    return int(points)


def resignation_value(cube_state: CubeState, points: int) -> float:
    """What accepting a resignation of ``points`` gives the deciding side.

    Args:
        cube_state: cube and score from the deciding side's view (``owner`` 0 = the decider, ``score`` =
            ``(decider, resigner)``).
        points: 1, 2 or 3 (before the cube).

    Returns:
        Money: points (``points x cube``; 1 x cube for a gammon or backgammon under the Jacoby rule with a centred
        cube).  Match: the decider's match-winning chance after winning ``points x cube`` (1.0 if that wins the
        match).

    Raises:
        ResignationError: ``points`` not 1, 2 or 3.  MatchStateError: a match longer than the MET.
    """
    pts = _check_points(points)
    cs = cube_state
    if cs.is_money:
        counted = 1 if (cs.jacoby and cs.owner == CENTRED) else pts
        return float(counted * cs.cube_value)
    a0, a1 = cs.away
    return float(met_for(cs).mwc_after(a0, a1, pts * cs.cube_value, crawford=cs.crawford))


def resignation_decision(
    agent: Agent, board: np.ndarray, cube_state: CubeState, points: int, *, decider_on_roll: bool = True
) -> ResignationDecision:
    """Should the deciding side accept its opponent's resignation of ``points``?  (Module docstring: the rule.)

    Args:
        agent: the deciding side's evaluator; a :class:`~bgai.agents.base.ProbabilityAgent` values playing on,
            any other agent accepts only what nothing can beat (a backgammon, or winning the match).
        board: ``(2, 25)`` int8 from the view of the side deciding (row 0 the decider, row 1 the side resigning).
        cube_state: :class:`bgai.game.cube.CubeState` from the deciding side's view: ``owner`` 0 = the decider,
            1 = the resigner; ``score`` = ``(decider, resigner)``; match length, Crawford game, Jacoby rule.
        points: the offer before the cube: 1 a single game, 2 a gammon, 3 a backgammon.
        decider_on_roll: the deciding side is the one on roll (True; e.g. a resignation offered between the
            resigner's turns) or the resigning side is (False; a player resigning at its own turn).  The
            position is valued before that side rolls, with its cube options.

    Returns:
        :class:`ResignationDecision` ``(accept, equity_if_accepted, equity_if_played)``: money in points (cube
        included), match play in match-winning chances.

    Raises:
        ResignationError: ``points`` not 1, 2 or 3.  InvalidPositionError: an impossible or finished position.
        MatchStateError: a match longer than the MET.
    """
    pts = _check_points(points)
    b = validate(board)
    if b.shape[0] != 1:
        raise InvalidPositionError(f"resignation_decision takes one position, got {b.shape[0]}")
    if bool(is_game_over(b)[0]):
        raise InvalidPositionError("the game is over: there is nothing to resign")
    cs = cube_state
    accepted = resignation_value(cs, pts)
    if not isinstance(agent, ProbabilityAgent):
        wins_match = not cs.is_money and accepted >= 1.0 - TOLERANCE
        return ResignationDecision(pts == 3 or wins_match, accepted, math.nan)
    roller = b if decider_on_roll else flip(b)
    state = cs if decider_on_roll else cs.swapped()
    probs = np.asarray(agent.probabilities(roller), dtype=np.float64)
    a = analyse_cube(probs, state, cube_efficiency(roller))
    if cs.is_money:
        value = float(a.optimal[0]) * cs.cube_value  # points per game for the side on roll
        played = value if decider_on_roll else -value
    else:
        mwc = float(np.where(a.double, np.minimum(a.mwc_double_take, a.mwc_double_pass), a.mwc_no_double)[0])
        played = mwc if decider_on_roll else 1.0 - mwc
    return ResignationDecision(bool(accepted >= played - TOLERANCE), accepted, played)
