"""Cube advice for the servers: :class:`CubeAdvice`, and the adapter from :class:`bgai.serve.bot.Bot` to :mod:`bgai.game.cube` (GNU Backgammon-style 0-ply cube decisions
from the agent's cubeless probabilities).

:func:`advise` returns ``None`` when the agent has no probabilities (pubeval, heuristics, random): the bot then
uses its conservative policy.  Money-session scores are not passed on (a money game has no score).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bgai.core.board import flip
from bgai.game.cube import CubeState, analyse_cube, cube_efficiency, cube_unavailable_reason, cubeless_mwc

__all__ = ["CubeAdvice", "CONSERVATIVE_CUBE", "advise", "evaluation_value"]

#: Name of the fallback cube policy.
CONSERVATIVE_CUBE = "conservative (never double, always take)"


@dataclass(frozen=True)
class CubeAdvice:
    """A cube decision for the side to act.

    Attributes:
        double: before rolling: the side on roll should double (False where doubling is not allowed).
        take: when doubled: the side doubled should take (True) or drop (False).
        beaver: when doubled in money play: the side doubled should beaver (only from :mod:`bgai.game.cube`).
        policy: where the decision comes from (``'bgai.game.cube'`` or :data:`CONSERVATIVE_CUBE`).
        equities: cubeful equities when known: ``{'no_double': .., 'double_take': .., 'double_pass': ..}`` in
            ppg (money) or match-winning chance (match play), from the side on roll's view.
    """

    double: bool
    take: bool
    beaver: bool = False
    policy: str = CONSERVATIVE_CUBE
    equities: dict = field(default_factory=dict)



def _state(cube_value, cube_owner, match_length, score, crawford, jacoby):

    if not match_length:
        score, crawford = (0, 0), False
    return CubeState(
        cube_value=int(cube_value),
        owner=int(cube_owner),
        match_length=int(match_length),
        score=(int(score[0]), int(score[1])),
        crawford=bool(crawford),
        jacoby=bool(jacoby),
    )


def _analyse(bot, roller_board, state):

    probs = bot.probabilities(roller_board)
    eff = cube_efficiency(np.asarray(roller_board)[None])
    return probs, analyse_cube(probs, state, eff)


def advise(
    bot,
    board,
    *,
    doubled: bool,
    cube_value: int,
    cube_owner: int,
    match_length: int,
    score: tuple[int, int],
    crawford: bool,
    jacoby: bool,
    beavers: bool,
):
    """A :class:`bgai.serve.bot.CubeAdvice` from :mod:`bgai.game.cube`, or ``None`` for agents without probabilities.

    ``board``, ``cube_owner`` and ``score`` are from the view of the side that decides: the side on roll
    (``doubled`` False: double or roll) or the side doubled (``doubled`` True: take or drop).

    Raises:
        MatchStateError: an impossible cube state (e.g. a centred cube above 1, a score beyond the match).
    """
    if not bot.has_probabilities:
        return None
    if doubled:
        roller = flip(board)
        owner = cube_owner if cube_owner == -1 else 1 - cube_owner
        state = _state(cube_value, owner, match_length, (score[1], score[0]), crawford, jacoby)
        _, a = _analyse(bot, roller, state)
        eq = _equities(a, state)
        return CubeAdvice(double=False, take=bool(a.take[0]), beaver=False, policy="bgai.game.cube", equities=eq)
    state = _state(cube_value, cube_owner, match_length, score, crawford, jacoby)
    _, a = _analyse(bot, board, state)
    return CubeAdvice(double=bool(a.double[0]), take=bool(a.take[0]), beaver=False, policy="bgai.game.cube",
                      equities=_equities(a, state))


def _equities(a, state) -> dict:
    """The cube equities of one analysis; when the side on roll may not double (Crawford game, cube owned by the
    opponent, dead cube, cube limit) ``available`` is False, ``reason`` says why (:func:`bgai.game.cube.
    cube_unavailable_reason`, shared with ``bgai hint``) and only the no-double figures are given."""

    reason = cube_unavailable_reason(state)
    out = {
        "action": a.action[0],
        "no_double": float(a.no_double[0]),
        "double_take": float(a.double_take[0]),
        "double_pass": float(a.double_pass[0]),
        "cubeless": float(a.cubeless_equity[0]),
    }
    if not np.isnan(a.mwc_no_double[0]):
        out.update(
            mwc_no_double=float(a.mwc_no_double[0]),
            mwc_double_take=float(a.mwc_double_take[0]),
            mwc_double_pass=float(a.mwc_double_pass[0]),
        )
    out["available"] = reason is None
    if reason is not None:
        out["reason"] = reason
        for key in ("double_take", "double_pass", "mwc_double_take", "mwc_double_pass"):
            out.pop(key, None)
    return out


def evaluation_value(
    bot, board, probs, *, cubeful: bool, cube_value, cube_owner, match_length, score, crawford, jacoby
):
    """The sixth number of an ``evaluation`` answer, as GNU Backgammon computes it: money cubeful equity
    (after the proper cube action) or, in match play, the match-winning chance (cubeful, or cubeless)."""

    state = _state(cube_value, cube_owner, match_length, score, crawford, jacoby)
    if match_length and not cubeful:
        return float(cubeless_mwc(np.asarray(probs)[None], state)[0])
    _, a = _analyse(bot, board, state)
    if match_length:
        mwc = np.where(a.double, np.minimum(a.mwc_double_take, a.mwc_double_pass), a.mwc_no_double)
        return float(mwc[0])
    return float(a.optimal[0])  # per unit of the cube, like GNU Backgammon's normalised equities
