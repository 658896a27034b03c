"""bgai's one request parser: a position in any exchange format, its cube and score, and the roll.

Every front end reads "a position to analyse" through here (``bgai hint``, ``bgai moves``, the HTTP API), so
they accept the same formats and give the same error messages.  Accepted position text
(:func:`read_position_request`):

* a GNU Backgammon **Position ID** (``4HPwATDgc/ABMA``), optionally with its **Match ID**
  (``4HPwATDgc/ABMA:cAkAAAAAAAAA``, GNU Backgammon's combined form) -- or the Match ID given separately;
* an **XGID** (``XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10``, the ``XGID=`` prefix optional);
* a **wildbg board**: ``p0`` .. ``p25`` as ``key=value`` pairs separated by ``&``, ``,`` or spaces
  (``p24=2&p19=-5&p17=-3&p13=5&p12=-5&p8=3&p6=5&p1=-2``);
* a **FIBS board line** (``board:You:someone:...``, FIBS's score convention).

The answer is a :class:`PositionRequest`: the board from the view of the side on roll (with a double pending:
the doubler), its :class:`~bgai.core.cube_state.CubeState` (default: money play, centred cube, Jacoby rule,
GNU Backgammon's default) and the roll (:class:`~bgai.core.dice.Dice`, or None before the roll).  Dice come
from the ``dice`` argument or from the position (a Match ID, XGID or FIBS board with a rolled roll); given
both ways they must be the same roll.

Checks, in this order, so that a message names the first thing wrong on the line: the position (its
decoder's message), a finished game (``the game is over: ...``), the cube and score (the Match ID against the
position: a centred cube above 1, a turned cube in the Crawford game, a pending double with dice, ...), the
dice.  Input quoted in a message is cut to :data:`bgai.errors.MAX_QUOTE` characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from bgai.core.board import flip, off_counts
from bgai.core.cube_state import CENTRED, ME, OPPONENT, CubeState
from bgai.core.dice import Dice
from bgai.core.position_id import decode_position_id, encode_position_id
from bgai.errors import (
    BgaiError,
    InvalidDiceError,
    InvalidPositionError,
    MatchStateError,
    PositionRequestError,
    quote_input,
    shorten_message,
)
from bgai.formats.fibs import interpret_fibs_board, parse_fibs_board
from bgai.formats.match_id import decode_match_id
from bgai.formats.wildbg import board_from_wildbg
from bgai.formats.xgid import decode_xgid
from bgai.util.integers import parse_int

__all__ = [
    "PositionRequest",
    "FORMATS",
    "read_position_request",
    "parse_position_request",
    "read_request_params",
    "detect_format",
    "game_over_message",
    "check_game_not_over",
]

#: Names of the position formats, as :attr:`PositionRequest.source` gives them.
FORMATS = ("position_id", "xgid", "wildbg", "fibs")

_WILDBG_KEYS = tuple(f"p{i}" for i in range(26))
_WILDBG_TEXT_RE = re.compile(r"\s*p\d+\s*=", re.IGNORECASE)
_WILDBG_SPLIT_RE = re.compile(r"[&,\s]+")
_OWNERS = {"centred": CENTRED, "centered": CENTRED, "on_roll": ME, "opponent": OPPONENT}
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


@dataclass(frozen=True, eq=False)
class PositionRequest:
    """A position to analyse, read and checked (:func:`read_position_request`).

    Attributes:
        board: ``(2, 25)`` int8, read-only, bgai's layout from the view of the side on roll (with a double
            pending: the doubler, who is on roll before the take/pass).
        cube_state: the cube and score from the same side's view.
        dice: the roll, or None (before the roll: a cube decision).
        source: the format of the position, one of :data:`FORMATS`.
        match_id: the Match ID given with a Position ID or wildbg board, or None.
        cube_given: the request carried cube and score fields (Match ID, XGID, FIBS board, or explicit cube
            parameters); False means the default money state was assumed.
        double_offered: a double is pending (Match ID, XGID ``D``, FIBS ``was doubled``): the opponent of the
            side on roll must take or pass.
        rolled: the roll came with the position (a Match ID, XGID or FIBS board with dice).
    """

    board: np.ndarray
    cube_state: CubeState
    dice: Dice | None
    source: str
    match_id: str | None = None
    cube_given: bool = False
    double_offered: bool = False
    rolled: bool = False

    @property
    def position_id(self) -> str:
        """The Position ID of :attr:`board` (side on roll's view)."""
        return encode_position_id(self.board)


def game_over_message(board: np.ndarray) -> str | None:
    """``None`` while the game is on; otherwise why there is nothing to play or decide (a side has borne off all
    15 checkers).  ``board`` is ``(2, 25)`` from the side on roll's view."""
    b = np.asarray(board)
    if b.dtype == np.int8 and b.shape == (2, 25):  # (one int8 board: Python sums, cheaper than numpy's)
        me, opp = b.tolist()
        off = (15 - sum(me), 15 - sum(opp))
    else:
        off = off_counts(b[None])[0]
    if off[1] == 15:
        return "the game is over: the opponent of the side on roll has borne off all 15 checkers"
    if off[0] == 15:
        return "the game is over: the side on roll has borne off all 15 checkers"
    return None


def check_game_not_over(board: np.ndarray) -> None:
    """Raise :class:`bgai.errors.InvalidPositionError` for a finished game (see :func:`game_over_message`)."""
    msg = game_over_message(board)
    if msg is not None:
        raise InvalidPositionError(msg)


def detect_format(text: str) -> str:
    """Which of :data:`FORMATS` a position text is in (by its shape; the decoder then checks it): ``board:`` ->
    ``'fibs'``; ``XGID=`` or ten ``:``-separated fields with a 26-character first field -> ``'xgid'``;
    ``p<n>=`` -> ``'wildbg'``; anything else is read as a Position ID (optionally ``:MATCH_ID``)."""
    t = text.strip()
    if t[:6].lower() == "board:":
        return "fibs"
    if t[:5].upper() == "XGID=":
        return "xgid"
    parts = t.split(":")
    if len(parts) == 10 and len(parts[0]) == 26:
        return "xgid"
    if _WILDBG_TEXT_RE.match(t):
        return "wildbg"
    return "position_id"


def _wildbg_pairs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in filter(None, _WILDBG_SPLIT_RE.split(text.strip())):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq:
            raise PositionRequestError(
                f"wildbg board: expected key=value pairs such as p24=2, got {quote_input(item)}")
        if key in out:
            raise PositionRequestError(f"wildbg board: {quote_input(key)} is given twice")
        if key not in _WILDBG_KEYS:
            raise PositionRequestError(f"unknown board parameter {quote_input(key)}: a wildbg board has p0 .. p25")
        out[key] = value.strip()
    return out


def _parse_dice(dice: object) -> Dice | None:
    if dice is None or (isinstance(dice, str) and not dice.strip()):
        return None
    return Dice.parse(dice)


def _merge_dice(given: Dice | None, carried: tuple[int, int] | None, where: str) -> tuple[Dice | None, bool]:
    """The roll of a request: ``given`` (the dice argument) and ``carried`` (the position's own roll) must be
    the same roll when both are there; ``given``'s order wins.  Returns ``(dice, rolled)``."""
    if carried is None or tuple(carried) == (0, 0):
        return given, False
    c = Dice(int(carried[0]), int(carried[1]))
    if given is None:
        return c, True
    if not given.same_roll(c):
        raise InvalidDiceError(f"dice {given} disagree with the roll {c} in {where}: give the dice once")
    return given, True


def _from_match_id(board: np.ndarray, match_id: str) -> tuple[CubeState, bool, tuple[int, int]]:
    """Cube state, pending double and roll of a Match ID checked against its position."""
    ms = decode_match_id(match_id)
    where = f"Match ID {quote_input(match_id.strip())}"
    ms.check(board, where=where)
    return ms.to_cube_state(where=where), bool(ms.double_offered), tuple(ms.dice)


def read_position_request(
    text: str,
    dice: object = None,
    *,
    match_id: str | None = None,
    fibs_scores: str = "fibs",
) -> PositionRequest:
    """Read a position (any of the formats in the module docstring), its cube state and its roll.

    Args:
        text: the position text.
        dice: the roll (anything :meth:`bgai.core.dice.Dice.parse` reads), or None / ``''`` for none.
        match_id: a Match ID given apart from a Position ID or wildbg board (not with ``POSITION_ID:MATCH_ID``,
            an XGID or a FIBS board, which carry their own).
        fibs_scores: score-field convention of FIBS board lines (:func:`bgai.formats.fibs.interpret_fibs_board`).

    Returns:
        The :class:`PositionRequest`.

    Raises:
        PositionIDError, MatchIDError, XGIDError, FIBSBoardError, FormatError: malformed or inconsistent
            position text (naming the format, quoting the text cut to a short prefix).
        InvalidPositionError: an impossible board or a finished game (``the game is over: ...``).
        PositionRequestError: the Match ID given twice, or beside an XGID / FIBS board; dice with a pending
            double.
        InvalidDiceError: bad dice, or dice that disagree with the position's roll.
    """
    try:
        return _read(text, dice, match_id, fibs_scores)
    except BgaiError as exc:  # the decoders quote their input whole: cut it to a short prefix
        short = shorten_message(str(exc))
        if short == str(exc):
            raise
        raise type(exc)(short) from None


def _read(text: str, dice: object, match_id: str | None, fibs_scores: str) -> PositionRequest:
    if not isinstance(text, str):
        raise PositionRequestError(f"a position must be text, got {type(text).__name__}")
    fmt = detect_format(text)
    given_mid = match_id.strip() if isinstance(match_id, str) and match_id.strip() else None
    if fmt in ("xgid", "fibs") and given_mid:
        name = "the XGID" if fmt == "xgid" else "the FIBS board"
        raise PositionRequestError(f"give the cube and score either in {name} or as a Match ID, not both")
    if fmt == "position_id":
        pid, sep, mid = text.strip().partition(":")
        if sep:
            if given_mid:
                raise PositionRequestError("give the Match ID once: POSITION_ID:MATCH_ID or --match-id, not both")
            given_mid = mid.strip()
        return _complete(decode_position_id(pid), fmt, dice, given_mid)
    if fmt == "wildbg":
        return _complete(board_from_wildbg(_wildbg_pairs(text)), fmt, dice, given_mid)
    if fmt == "xgid":
        xs = decode_xgid(text)
        check_game_not_over(xs.board)
        state = xs.to_cube_state(where=f"XGID {quote_input(text.strip())}")
        return _complete(xs.board, fmt, dice, None, (state, xs.double_offered, xs.dice, "the XGID"))
    fs = interpret_fibs_board(parse_fibs_board(text), scores=fibs_scores)
    check_game_not_over(fs.board)
    board, state = fs.board, fs.cube_state
    if fs.doubled:  # the side to act is the player doubled: turn to the doubler's view
        board, state = flip(board), state.swapped()
    return _complete(board, fmt, dice, None, (state, fs.doubled, fs.dice, "the FIBS board"))


#: The state of a position given without one (money, centred cube, Jacoby); frozen, so shared (making one costs
#: several microseconds of checks).
_NO_CUBE_STATE = CubeState()


def _complete(board: np.ndarray, fmt: str, dice: object, match_id: str | None, carried=None) -> PositionRequest:
    """The checks after the board is read: finished game, the Match ID (or the format's own cube fields,
    ``carried`` = ``(state, double offered, roll, where)``), the dice."""
    check_game_not_over(board)
    state, cube_given, double_offered, roll, where = _NO_CUBE_STATE, False, False, None, ""
    if carried is not None:
        state, double_offered, roll, where = carried
        cube_given = True
    elif match_id:
        state, double_offered, roll = _from_match_id(board, match_id)
        cube_given, where = True, f"Match ID {quote_input(match_id)}"
    d, rolled = _merge_dice(_parse_dice(dice), roll, where)
    if double_offered and d is not None:
        raise PositionRequestError(
            f"a double is pending in {where}: there is no roll before the take or pass (leave the dice out)"
        )
    board = np.array(board, dtype=np.int8)
    board.setflags(write=False)
    return PositionRequest(
        board=board, cube_state=state, dice=d, source=fmt, match_id=match_id, cube_given=cube_given,
        double_offered=bool(double_offered), rolled=rolled,
    )


def parse_position_request(
    text: str, dice: object = None, *, match_id: str | None = None
) -> tuple[np.ndarray, CubeState, Dice | None]:
    """``(board (2, 25) int8, CubeState, Dice or None)`` of a position text: :func:`read_position_request`
    without the details.

    Raises:
        see :func:`read_position_request`.
    """
    r = read_position_request(text, dice, match_id=match_id)
    return r.board, r.cube_state, r.dice


def read_request_params(params: Mapping[str, str]) -> PositionRequest:
    """Read a position request given as ``key=value`` parameters (the query string of bgai's HTTP API).

    Keys: the position as exactly one of ``position_id`` (any text :func:`read_position_request` reads, e.g.
    ``POSITION_ID:MATCH_ID``), ``xgid``, or ``p0`` .. ``p25`` (wildbg board); the dice as ``dice=31`` (any
    spelling of :meth:`Dice.parse`) or ``die1=3&die2=1``; the cube and score as ``match_id``, or for money play
    ``cube_value=2&cube_owner=on_roll|opponent|centred[&jacoby=false]``.  Other keys are ignored.

    Raises:
        PositionRequestError: no position, two forms of it, the Match ID in ``position_id`` and as ``match_id``,
            an unknown ``p<n>`` key, the cube given twice
            (XGID or Match ID and cube parameters), bad cube parameters; and everything
            :func:`read_position_request` raises.
        InvalidDiceError: bad dice, dice given twice, one die only.
    """
    stray = [k for k in params if re.fullmatch(r"p\d+", k) and k not in _WILDBG_KEYS]
    if stray:
        raise PositionRequestError(f"unknown board parameter {quote_input(stray[0])}: a wildbg board has p0 .. p25")
    pid, xgid, mid = params.get("position_id"), params.get("xgid"), params.get("match_id")
    wild = {k: params[k] for k in _WILDBG_KEYS if k in params}
    forms = [n for n, present in (("position_id", pid is not None), ("xgid", xgid is not None),
                                  ("p0..p25", bool(wild))) if present]
    if len(forms) > 1:
        raise PositionRequestError(f"give the position in one form only, got {' and '.join(forms)}")
    if not forms:
        raise PositionRequestError("no position given: use position_id=..., xgid=... or p0..p25 (wildbg board)")
    if pid is not None and ":" in pid and mid is not None and mid.strip():
        raise PositionRequestError(
            "give the Match ID once: position_id=POSITION_ID:MATCH_ID or match_id=MATCH_ID, not both")
    dice = _params_dice(params)
    if xgid is not None:
        if detect_format(xgid) != "xgid":
            decode_xgid(xgid)  # raises its own message, naming what is wrong
            raise PositionRequestError(f"xgid {quote_input(xgid)} is not an XGID")  # pragma: no cover
        req = read_position_request(xgid, dice, match_id=mid)
    elif pid is not None:
        req = read_position_request(pid, dice, match_id=mid)
    else:
        req = _complete(board_from_wildbg(wild), "wildbg", dice, mid.strip() if mid and mid.strip() else None)
    cube_keys = [k for k in ("cube_value", "cube_owner", "jacoby") if params.get(k) is not None]
    if cube_keys:
        if req.cube_given:
            raise PositionRequestError(
                f"give the cube either as {'/'.join(cube_keys)} or in the XGID / match_id, not both")
        req = replace(req, cube_state=_params_cube(params), cube_given=True)
    return req


def _plain_int(text: str) -> int:
    """``text`` as a decimal integer written with ASCII digits only (an optional sign), nothing around it
    (:func:`bgai.util.integers.parse_int`); Python's ``int`` would also take ``3_0`` as 30, `` 3 `` and other
    scripts' digits.

    Raises:
        ValueError: anything else.
    """
    return parse_int(str(text), "parameter", ValueError)


def _params_dice(params: Mapping[str, str]) -> Dice | None:
    text, d1, d2 = params.get("dice"), params.get("die1"), params.get("die2")
    if text is not None and (d1 is not None or d2 is not None):
        raise InvalidDiceError("give the dice either as dice=31 or as die1=3&die2=1, not both")
    if text is not None:
        return Dice.parse(text)
    if d1 is None and d2 is None:
        return None
    if d1 is None or d2 is None:
        raise InvalidDiceError("give both die1 and die2")
    try:
        pair = (_plain_int(d1), _plain_int(d2))
    except ValueError:
        raise InvalidDiceError(
            f"dice must be integers 1..6, got die1={quote_input(d1)}, die2={quote_input(d2)}") from None
    return Dice.parse(pair)


def _params_cube(params: Mapping[str, str]) -> CubeState:
    cv = params.get("cube_value", "1")
    try:
        value = _plain_int(cv)
    except ValueError:
        raise PositionRequestError(f"cube_value: expected an integer 1, 2, 4, 8, ..., got {quote_input(cv)}") from None
    owner_text = params.get("cube_owner", "centred")
    if owner_text not in _OWNERS:
        raise PositionRequestError(
            f"cube_owner: expected centred, on_roll or opponent, got {quote_input(owner_text)}")
    jac = str(params.get("jacoby", "true")).lower()
    if jac not in _TRUE + _FALSE:
        raise PositionRequestError(f"jacoby: expected true or false, got {quote_input(jac)}")
    try:
        return CubeState(cube_value=value, owner=_OWNERS[owner_text], jacoby=jac in _TRUE)
    except MatchStateError as exc:
        raise PositionRequestError(f"cube_value: {exc}") from None

