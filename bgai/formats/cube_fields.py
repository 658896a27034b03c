"""Converters between :class:`bgai.core.cube_state.CubeState` and the cube/score fields of GNU Backgammon's Match
ID, eXtreme Gammon's XGID and FIBS board lines, and the consistency checks of a Match ID with its position.

Every format names its players its own way (Match ID: absolute players 0/1 plus the player on roll; XGID: the
player named by ``turn``; FIBS: the side that must act); a :class:`CubeState` is always seen from the **side on
roll** (with a double pending: the doubler, before the double), as :mod:`bgai.game.cube` needs it.

Sources: the Match ID bit fields (:mod:`bgai.formats.match_id`, GNU Backgammon ``matchid.c``), the XGID fields
(:mod:`bgai.formats.xgid`, GNU Backgammon ``SetXGID``), the FIBS board fields (:mod:`bgai.formats.fibs`, GNU
Backgammon ``ProcessFIBSBoardInfo``).  Match play never uses the Jacoby rule (it is a money-play rule): states
read from match play have ``jacoby=False`` whatever the format says.
"""

from __future__ import annotations

import numpy as np

from bgai.core.board import as_batch, is_game_over
from bgai.core.cube_state import CENTRED, ME, OPPONENT, CubeState
from bgai.core.dice import Dice
from bgai.errors import FIBSBoardError, MatchIDError, MatchStateError, XGIDError
from bgai.formats.fibs import FIBSState
from bgai.formats.match_id import MatchState
from bgai.formats.xgid import XGIDState

__all__ = [
    "check_match_state",
    "cube_state_from_match_state",
    "match_state_from_cube_state",
    "cube_state_from_xgid",
    "xgid_state_from_cube_state",
    "cube_state_from_fibs",
    "fibs_state_from_cube_state",
]

#: XGID "max cube" (log2 of the money cube limit) written for a state without a cube limit (XG's usual 10).
XGID_NO_LIMIT = 10


def check_match_state(ms: MatchState, board: np.ndarray | None = None, *, where: str = "match state") -> MatchState:
    """Check a decoded Match ID for consistency with itself and with its position; returns ``ms``.

    :meth:`bgai.formats.match_id.MatchState.validate` checks each field; this checks the fields together, as a
    game in progress requires: a centred cube shows 1, the cube is never turned in the Crawford game, a pending
    double has the turn with the player who must answer, no dice rolled while a double is pending, nobody
    doubles a cube the opponent owns, and a game "being played" is not on a finished position.

    Args:
        ms: the decoded Match ID.
        board: optional ``(2, 25)`` position of the Position ID that goes with it (from the view of the Match
            ID's player on roll).
        where: how messages name the Match ID (e.g. ``"Match ID 'cAkAAAAAAAAA'"``).

    Raises:
        MatchIDError: ``"<where>: <what is inconsistent>"``.
    """
    ms.validate()
    if ms.cube_owner == CENTRED and ms.cube_value != 1:
        raise MatchIDError(f"{where}: the cube is centred but shows {ms.cube_value} (a turned cube has an owner)")
    if ms.crawford and (ms.cube_value != 1 or ms.double_offered):
        raise MatchIDError(f"{where}: the cube was turned in the Crawford game")
    if ms.double_offered:
        if ms.turn == ms.player_on_roll:
            raise MatchIDError(f"{where}: a double is pending but the turn is not with the player who must answer")
        if tuple(ms.dice) != (0, 0):
            raise MatchIDError(f"{where}: dice {ms.dice} rolled while a double is pending")
        if ms.cube_owner not in (CENTRED, ms.player_on_roll):
            raise MatchIDError(f"{where}: player {ms.player_on_roll} doubled a cube owned by the opponent")
    if board is not None and ms.game_state == 1 and bool(is_game_over(as_batch(board))[0]):
        raise MatchIDError(f"{where}: says the game is being played but the position is a finished game")
    return ms


def cube_state_from_match_state(ms: MatchState, *, where: str = "match state") -> CubeState:
    """The :class:`CubeState` of a Match ID's player on roll (with a double pending: the doubler, cube before
    the double).

    Money play keeps the Match ID's Jacoby bit; match play has ``jacoby=False`` and the score as ``(player on
    roll, opponent)``.  A money-play score in the Match ID (a session's running total) is not part of the state.

    Raises:
        MatchIDError: fields no game can have (a score not below the match length, a Crawford flag without a
            1-away side, ...), as ``"<where>: ..."``.
    """
    p = ms.player_on_roll
    owner = CENTRED if ms.cube_owner == CENTRED else (ME if ms.cube_owner == p else OPPONENT)
    money = ms.match_length == 0
    try:
        return CubeState(
            cube_value=ms.cube_value,
            owner=owner,
            match_length=ms.match_length,
            score=(0, 0) if money else (ms.score[p], ms.score[1 - p]),
            crawford=ms.crawford,
            jacoby=bool(ms.jacoby) if money else False,
        )
    except MatchStateError as exc:
        raise MatchIDError(f"{where}: {exc}") from None


def match_state_from_cube_state(
    state: CubeState, *, player_on_roll: int = 0, dice: Dice | tuple[int, int] | None = None,
    double_offered: bool = False,
) -> MatchState:
    """The Match ID fields of a state, with ``player_on_roll`` (GNU Backgammon's player 0 or 1) on roll.

    A pending double is written as GNU Backgammon does: the doubler on roll, the turn with the taker.  Match
    play writes the Jacoby bit on (GNU Backgammon's default; it has no effect in a match).

    Raises:
        MatchIDError: ``player_on_roll`` not 0/1, dice with a pending double, bad dice.
    """
    if player_on_roll not in (0, 1):
        raise MatchIDError(f"player on roll {player_on_roll!r} must be 0 or 1")
    d = (0, 0) if dice is None else Dice.parse(dice).as_tuple()
    if double_offered and d != (0, 0):
        raise MatchIDError("no dice are rolled while a double is pending")
    p = player_on_roll
    owner = -1 if state.owner == CENTRED else (p if state.owner == ME else 1 - p)
    score = [0, 0]
    score[p], score[1 - p] = state.score
    return MatchState(
        cube_value=state.cube_value,
        cube_owner=owner,
        player_on_roll=p,
        crawford=state.crawford,
        game_state=1,
        turn=1 - p if double_offered else p,
        double_offered=double_offered,
        dice=d,
        match_length=state.match_length,
        score=(score[0], score[1]),
        jacoby=state.jacoby if state.is_money else True,
    ).validate()


def cube_state_from_xgid(st: XGIDState, *, where: str = "XGID") -> CubeState:
    """The :class:`CubeState` of an XGID's player named by ``turn`` (on roll, or the doubler before the double).

    Money play: the Jacoby bit of the rules field, and the cube limit ``2 ** max cube`` (XG's field; 0 means a
    limit of 1, i.e. no doubling, as GNU Backgammon reads it).

    Raises:
        XGIDError: a centred cube above 1, a cube above the money cube limit, a turned cube in the Crawford game.
    """
    if st.crawford and st.cube_value != 1:
        raise XGIDError(f"{where}: the cube was turned in the Crawford game")
    money = st.match_length == 0
    try:
        return CubeState(
            cube_value=st.cube_value,
            owner=st.cube_owner,
            match_length=st.match_length,
            score=(0, 0) if money else tuple(st.score),
            crawford=st.crawford,
            jacoby=st.jacoby if money else False,
            cube_limit=(1 << st.max_cube) if money else None,
        )
    except MatchStateError as exc:
        raise XGIDError(f"{where}: {exc}") from None


def xgid_state_from_cube_state(
    board: np.ndarray, state: CubeState, dice: Dice | tuple[int, int] | None = None, *,
    double_offered: bool = False,
) -> XGIDState:
    """The XGID fields of a position (``(2, 25)``, side on roll in row 0), its state and roll.

    Raises:
        XGIDError: an impossible board, dice with a pending double.
    """
    d = (0, 0) if dice is None else Dice.parse(dice).as_tuple()
    if double_offered and d != (0, 0):
        raise XGIDError("no dice are rolled while a double is pending")
    lim = state.cube_limit
    return XGIDState(
        board=np.asarray(board),
        cube_value=state.cube_value,
        cube_owner=state.owner,
        dice=d,
        double_offered=double_offered,
        score=state.score,
        match_length=state.match_length,
        crawford=state.crawford,
        jacoby=state.jacoby if state.is_money else False,
        max_cube=XGID_NO_LIMIT if lim is None else lim.bit_length() - 1,
    )


def cube_state_from_fibs(fs: FIBSState, *, jacoby: bool = True, crawford_rule: bool = True) -> CubeState:
    """The :class:`CubeState` of a FIBS board, from the view of its side to act (with a double pending: the
    player doubled, cube before the double).

    Args:
        fs: the interpreted board (:func:`bgai.formats.fibs.interpret_fibs_board`).
        jacoby: money play: the Jacoby rule of the session (a FIBS board does not carry it).
        crawford_rule: match play: the Crawford rule of the session; off, no game is the Crawford game.

    Raises:
        FIBSBoardError: a turned cube in the Crawford game, a state no game can have.
    """
    crawford = fs.crawford and crawford_rule
    if crawford and fs.cube_value != 1:
        raise FIBSBoardError("FIBS board: the cube was turned in the Crawford game")
    money = fs.match_length == 0
    try:
        return CubeState(
            cube_value=fs.cube_value,
            owner=fs.cube_owner,
            match_length=fs.match_length,
            score=(0, 0) if money else tuple(fs.score),
            crawford=crawford,
            jacoby=bool(jacoby) if money else False,
        )
    except MatchStateError as exc:
        raise FIBSBoardError(f"FIBS board: {exc}") from None


def fibs_state_from_cube_state(
    board: np.ndarray, state: CubeState, dice: Dice | tuple[int, int] | None = None, *, doubled: bool = False,
    names: tuple[str, str] = ("bgai", "opponent"),
) -> FIBSState:
    """The FIBS board fields of a position from the side to act's view (``doubled``: the player doubled), its
    state (same view) and roll (:func:`bgai.formats.fibs.format_fibs_board` writes the line).

    Raises:
        FIBSBoardError: an impossible board, dice with a pending double.
    """
    d = None if dice is None else Dice.parse(dice).as_tuple()
    if doubled and d is not None:
        raise FIBSBoardError("no dice are rolled while a double is pending")
    return FIBSState(
        board=np.asarray(board),
        dice=d,
        match_length=state.match_length,
        score=state.score,
        cube_value=state.cube_value,
        cube_owner=state.owner,
        doubled=doubled,
        crawford=state.crawford,
        names=names,
    )
