"""XGID, eXtreme Gammon's position string: decode and encode.

Format (sources: GNU Backgammon's reader ``SetXGID`` in ``set.c`` and ``PositionFromXG`` in ``positionid.c``,
cross-checked with independent parsers; test vectors in ``tests/test_xgid.py``):
``XGID=`` (optional) then 10 colon-separated fields

===  ===============  ======================================================================================
 1   position         26 characters: char 0 = the **top** player's bar, chars 1..24 = points 1..24 from the
                      **bottom** player's view (bottom moves 24 -> 1), char 25 = the **bottom** player's bar;
                      ``-`` empty, ``A``..``P`` 1..16 bottom checkers, ``a``..``p`` 1..16 top checkers
 2   cube             log2 of the cube value
 3   cube position    1 bottom owns, 0 centred, -1 top owns
 4   turn             1 bottom on roll, -1 top on roll (the board string does not change with the turn)
 5   dice             ``00`` to roll or double, two digits 1..6 = the rolled dice, ``D`` = the player named
                      by ``turn`` has doubled (the cube fields are the cube before the double, so it is
                      centred or owned by the doubler); XG's ``B`` and ``R`` (beaver, raccoon) are refused,
                      as by GNU Backgammon
 6   score bottom
 7   score top
 8   rules            match: 1 = Crawford game, 0 = not; money: bit 0 Jacoby, bit 1 beaver (0..3)
 9   match length     0 = money game
10   max cube         log2 of the money-game cube limit (often 8 or 10): a money cube may be turned only up to
                      ``2 ** max cube`` (:attr:`XGIDState.cube_limit`); GNU Backgammon reads and ignores it
===  ===============  ======================================================================================

A 1-point match has no Crawford game: GNU Backgammon's ``SetXGID`` goes through ``SetMatchID``, which clears the
Crawford flag when the match length is 1, and :func:`decode_xgid` does the same (:func:`encode_xgid` refuses
it).  Numbers are read with :func:`bgai.util.integers.parse_int` (ASCII digits, at most 18).

Off counts are implicit (15 minus the checkers shown).  :class:`XGIDState` holds everything relative to the
player named by ``turn`` (the side on roll, or the doubler when a double is pending): its board is in bgai's
layout from that player's view (row 0 = that player), its cube owner and score are "that player first".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bgai.core.board import BAR, validation_errors
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.errors import XGIDError
from bgai.formats.match_id import crawford_fault
from bgai.util.integers import is_int, parse_int

__all__ = ["XGIDState", "XGID_NO_LIMIT", "decode_xgid", "encode_xgid"]

_FIELD_NAMES = (
    "position",
    "cube",
    "cube position",
    "turn",
    "dice",
    "score bottom",
    "score top",
    "rules",
    "match length",
    "max cube",
)
_MAX_CUBE_LOG2 = 15
#: XGID "max cube" (log2 of the money cube limit) written for a state without a cube limit (XG's usual 10).
XGID_NO_LIMIT = 10
_SHOWN = 80  # characters of the XGID quoted in an error message


@dataclass(frozen=True, eq=False)
class XGIDState:
    """The contents of an XGID, relative to the player named by its ``turn`` field.

    Attributes:
        board: ``(2, 25)`` ``int8`` board in bgai's layout, row 0 = the player named by ``turn`` (on roll, or
            the doubler when ``double_offered``), row 1 = the other player; read-only.
        cube_value: cube value 1, 2, 4, ... (before the double when ``double_offered``).
        cube_owner: -1 centred, 0 = row 0's player owns it, 1 = row 1's player owns it.
        dice: rolled dice ``(d1, d2)`` in the order written, or ``(0, 0)`` when not rolled.
        double_offered: the dice field is ``D``.
        score: ``(row 0's player, row 1's player)`` points.
        match_length: 0 = money game.
        crawford: the Crawford game (match play).
        jacoby: Jacoby rule (money play).
        beaver: beavers allowed (money play).
        max_cube: log2 of the money-game cube limit, as written (e.g. 10 -> 1024); see :attr:`cube_limit`.
        bottom_on_roll: True when the XGID's ``turn`` is 1 (row 0 is the bottom player); encoding keeps the
            same orientation.

    :attr:`cube_state` is the one :class:`~bgai.core.cube_state.CubeState` of the cube and score fields (row
    0's view) and :meth:`from_cube_state` writes one; the fields stay as written (a centred cube above 1 or a
    money-play score decode, and are refused only by :attr:`cube_state`; max cube and beaver are XG's own).
    """

    board: np.ndarray
    cube_value: int = 1
    cube_owner: int = -1
    dice: tuple[int, int] = (0, 0)
    double_offered: bool = False
    score: tuple[int, int] = (0, 0)
    match_length: int = 0
    crawford: bool = False
    jacoby: bool = False
    beaver: bool = False
    max_cube: int = 10
    bottom_on_roll: bool = field(default=True)

    def __post_init__(self) -> None:
        arr = np.array(self.board, dtype=np.int16, copy=True)
        if arr.shape != (2, 25):
            raise XGIDError(f"board must have shape (2, 25), got {arr.shape}")
        msg = validation_errors(arr)[0]
        if msg is not None:
            raise XGIDError(f"position: impossible position: {msg}")
        arr = arr.astype(np.int8)
        arr.setflags(write=False)
        object.__setattr__(self, "board", arr)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, XGIDState):
            return NotImplemented
        return np.array_equal(self.board, other.board) and all(
            getattr(self, k) == getattr(other, k)
            for k in (
                "cube_value",
                "cube_owner",
                "dice",
                "double_offered",
                "score",
                "match_length",
                "crawford",
                "jacoby",
                "beaver",
                "max_cube",
                "bottom_on_roll",
            )
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def cube_limit(self) -> int | None:
        """Money play: the highest cube value allowed, ``2 ** max_cube`` (a cube at the limit cannot be doubled;
        pass it as :attr:`bgai.game.cube.CubeState.cube_limit`); match play: None (the field applies to money only)."""
        return (1 << int(self.max_cube)) if self.match_length == 0 else None

    @property
    def cube_state(self) -> CubeState:
        """The :class:`~bgai.core.cube_state.CubeState` of the player named by ``turn`` (see :meth:`to_cube_state`)."""
        return self.to_cube_state()

    def to_cube_state(self, *, where: str = "XGID") -> CubeState:
        """The :class:`~bgai.core.cube_state.CubeState` of the player named by ``turn`` (on roll, or the doubler
        before the double).

        Money play: the Jacoby bit of the rules field, and the cube limit :attr:`cube_limit` (``2 ** max cube``;
        max cube 0 means a limit of 1, i.e. no doubling, as GNU Backgammon reads it).  Match play: no Jacoby
        rule, no cube limit.

        Raises:
            XGIDError: ``"<where>: ..."``: a centred cube above 1, a cube above the money cube limit, a turned
                cube in the Crawford game.
        """
        if self.crawford and self.cube_value != 1:
            raise XGIDError(f"{where}: the cube was turned in the Crawford game")
        return CubeState.of_format(
            XGIDError,
            where,
            cube_value=self.cube_value,
            owner=self.cube_owner,
            match_length=self.match_length,
            score=self.score,
            crawford=self.crawford,
            jacoby=self.jacoby,
            cube_limit=self.cube_limit,
        )

    @classmethod
    def from_cube_state(
        cls, board: np.ndarray, state: CubeState, dice: Dice | tuple[int, int] | None = None, *,
        double_offered: bool = False,
    ) -> "XGIDState":
        """The XGID fields of a position (``(2, 25)``, side on roll in row 0), its state (same view) and roll.

        Max cube is ``log2`` of the state's money cube limit, or :data:`XGID_NO_LIMIT` without one; match play
        writes no Jacoby bit.

        Raises:
            XGIDError: an impossible board, dice with a pending double.
            InvalidDiceError: bad dice.
        """
        d = (0, 0) if dice is None else Dice.parse(dice).as_tuple()
        if double_offered and d != (0, 0):
            raise XGIDError("no dice are rolled while a double is pending")
        lim = state.cube_limit
        return cls(
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


def decode_xgid(xgid: str) -> XGIDState:
    """Decode an XGID such as ``'XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10'``.

    The ``XGID=`` prefix is optional and surrounding whitespace is ignored.  With ``turn`` = -1 the sides are
    swapped so that the board is from the top player's view.

    Returns:
        :class:`XGIDState`, relative to the player named by ``turn``.

    A Crawford flag in a 1-point match is cleared, as GNU Backgammon does (see the module docstring).

    Raises:
        XGIDError: naming the field at fault: wrong number of fields, a position of the wrong length or with a
            bad character (quoted), a checker of the wrong colour on a bar, an impossible position, a field
            that is not an ASCII integer of at most 18 digits, a cube that is not 0..15, a cube position or turn
            outside its values, dice that are not ``00``, ``D`` or two digits 1..6, a double (``D``) by the
            player who does not own the cube, negative scores, scores not below the match length, a rules value
            out of range, a Crawford game with neither player 1-away, a money cube above the cube limit.
    """
    text, parts = _split_xgid(xgid)
    bad = _error_quoting(text)
    bottom, top = _parse_position(parts[0], bad)
    cube_log2, cube_pos, turn = _read_cube_and_turn(parts, bad)
    dice, double_offered = _read_dice(parts[4], bad)
    score_bottom, score_top = _read_int(parts, 5, bad), _read_int(parts, 6, bad)
    for name, v in (("score bottom", score_bottom), ("score top", score_top)):
        if v < 0:
            raise bad(f"{name} field {v} is negative")
    rules = _read_int(parts, 7, bad)
    match_length, max_cube = _read_length_and_max_cube(parts, bad)
    if match_length > 0:
        crawford, jacoby, beaver = _match_rules(rules, score_bottom, score_top, match_length, bad)
    else:
        crawford, jacoby, beaver = _money_rules(rules, cube_log2, max_cube, bad)
    if double_offered and cube_pos == -turn:
        raise bad(_double_by_non_owner(turn, cube_pos))
    bottom_first = turn == 1
    try:
        return XGIDState(
            board=np.stack([bottom, top] if bottom_first else [top, bottom]),
            cube_value=1 << cube_log2,
            cube_owner=_OWNER_FROM_CUBE_POSITION[bottom_first][cube_pos],
            dice=dice,
            double_offered=double_offered,
            score=(score_bottom, score_top) if bottom_first else (score_top, score_bottom),
            match_length=match_length,
            crawford=crawford,
            jacoby=jacoby,
            beaver=beaver,
            max_cube=max_cube,
            bottom_on_roll=bottom_first,
        )
    except XGIDError as exc:
        raise bad(str(exc)) from None


#: XGID cube position (1 bottom owns, 0 centred, -1 top owns) -> XGIDState.cube_owner, by "bottom player is row 0".
_OWNER_FROM_CUBE_POSITION = {True: {1: 0, 0: -1, -1: 1}, False: {1: 1, 0: -1, -1: 0}}
#: The inverse: XGIDState.cube_owner -> XGID cube position, by "bottom player is row 0".
_CUBE_POSITION_FROM_OWNER = {True: {-1: 0, 0: 1, 1: -1}, False: {-1: 0, 0: -1, 1: 1}}


def _split_xgid(xgid: object) -> tuple[str, list[str]]:
    """The stripped XGID text and its 10 fields (``XGID=`` prefix removed)."""
    if not isinstance(xgid, str):
        raise XGIDError(f"XGID must be a string, got {type(xgid).__name__}")
    text = xgid.strip()
    body = text[5:] if text[:5].upper() == "XGID=" else text
    parts = body.split(":")
    if len(parts) != len(_FIELD_NAMES):
        raise XGIDError(
            f"XGID {text!r}: {len(parts)} colon-separated fields, expected {len(_FIELD_NAMES)} "
            f"({', '.join(_FIELD_NAMES)})"
        )
    return text, parts


def _error_quoting(text: str) -> Callable[[str], XGIDError]:
    """A function that makes the XGIDError ``"XGID '<text>': <what>"`` (long text shortened)."""
    shown = repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + f"... ({len(text)} characters)"

    def bad(what: str) -> XGIDError:
        return XGIDError(f"XGID {shown}: {what}")

    return bad


def _read_int(parts: list[str], idx: int, bad: Callable[[str], XGIDError]) -> int:
    """Integer field ``idx`` (0-based), read by :func:`bgai.util.integers.parse_int`."""
    return parse_int(parts[idx], f"{_FIELD_NAMES[idx]} field", bad)


def _read_cube_and_turn(parts: list[str], bad: Callable[[str], XGIDError]) -> tuple[int, int, int]:
    """Fields 2-4: (log2 of the cube value, cube position, turn)."""
    cube_log2 = _read_int(parts, 1, bad)
    if not 0 <= cube_log2 <= _MAX_CUBE_LOG2:
        raise bad(f"cube field {cube_log2} is not 0..{_MAX_CUBE_LOG2} (log2 of the cube value)")
    cube_pos = _read_int(parts, 2, bad)
    if cube_pos not in (-1, 0, 1):
        raise bad(f"cube position field {cube_pos} must be 1 (bottom owns), 0 (centred) or -1 (top owns)")
    turn = _read_int(parts, 3, bad)
    if turn not in (1, -1):
        raise bad(f"turn field {turn} must be 1 (bottom on roll) or -1 (top on roll)")
    return cube_log2, cube_pos, turn


def _read_dice(dice_text: str, bad: Callable[[str], XGIDError]) -> tuple[tuple[int, int], bool]:
    """Field 5: (dice, double offered); ``(0, 0)`` when not rolled or with a double (``D``)."""
    if dice_text == "D":
        return (0, 0), True
    if dice_text in ("B", "R"):
        kind = "beaver" if dice_text == "B" else "raccoon"
        raise bad(f"dice field {dice_text!r} ({kind}) is not supported; expected 00, two dice 1..6 or D")
    if not re.fullmatch(r"[0-9]{2}", dice_text):
        raise bad(f"dice field {dice_text!r} must be 00, two dice 1..6 (e.g. 52) or D")
    dice = (int(dice_text[0]), int(dice_text[1]))
    if dice != (0, 0) and not all(1 <= d <= 6 for d in dice):
        raise bad(f"dice field {dice_text!r} must be 00 or two dice 1..6")
    return dice, False


def _read_length_and_max_cube(parts: list[str], bad: Callable[[str], XGIDError]) -> tuple[int, int]:
    """Fields 9-10: (match length, max cube)."""
    match_length = _read_int(parts, 8, bad)
    if match_length < 0:
        raise bad(f"match length field {match_length} is negative")
    max_cube = _read_int(parts, 9, bad)
    if not 0 <= max_cube <= _MAX_CUBE_LOG2:
        raise bad(f"max cube field {max_cube} is not 0..{_MAX_CUBE_LOG2} (log2 of the cube limit)")
    return match_length, max_cube


def _match_rules(
    rules: int, score_bottom: int, score_top: int, match_length: int, bad: Callable[[str], XGIDError]
) -> tuple[bool, bool, bool]:
    """Match play: the rules field (Crawford game) checked with the score -> (crawford, jacoby, beaver)."""
    if rules not in (0, 1):
        raise bad(f"rules field {rules} must be 0 or 1 (Crawford game) in match play")
    if max(score_bottom, score_top) >= match_length:
        raise bad(f"score {score_bottom}-{score_top} is not below the match length {match_length}")
    # a 1-point match has no Crawford game: gnubg's SetMatchID clears the flag
    crawford = bool(rules) and match_length > 1
    if crawford and match_length - 1 not in (score_bottom, score_top):
        raise bad(
            f"rules field says Crawford game but neither player is 1-away "
            f"(score {score_bottom}-{score_top}, match length {match_length})"
        )
    return crawford, False, False


def _money_rules(
    rules: int, cube_log2: int, max_cube: int, bad: Callable[[str], XGIDError]
) -> tuple[bool, bool, bool]:
    """Money play: the rules field (bit 0 Jacoby, bit 1 beaver), and the cube checked against the cube limit ->
    (crawford, jacoby, beaver)."""
    if not 0 <= rules <= 3:
        raise bad(f"rules field {rules} must be 0..3 in money play (bit 0 Jacoby, bit 1 beaver)")
    if cube_log2 > max_cube:
        raise bad(f"cube {1 << cube_log2} is above the money cube limit {1 << max_cube} (max cube field {max_cube})")
    return False, bool(rules & 1), bool(rules & 2)


def _double_by_non_owner(turn: int, cube_pos: int) -> str:
    doubler, owner_name = ("bottom", "top") if turn == 1 else ("top", "bottom")
    return (
        f"dice field 'D' says the {doubler} player (turn {turn}) doubled, but the {owner_name} player owns "
        f"the cube (cube position {cube_pos}): only the cube's owner, or either player with a centred cube, "
        "may double"
    )


def encode_xgid(state: XGIDState) -> str:
    """The XGID (with the ``XGID=`` prefix) of an :class:`XGIDState`.

    Row 0 of the board becomes the bottom player when ``state.bottom_on_roll`` (turn 1), else the top player
    (turn -1).  Dice are written in the order given.

    Raises:
        XGIDError: a field out of range (cube not a power of two up to 2**15, cube owner not -1/0/1, dice not
            1..6 or (0, 0), dice together with a double, a double by the player who does not own the cube,
            negative scores or scores not below the match length, Crawford in a money game, in a 1-point match
            or with neither player 1-away, max cube not 0..15, a money cube above ``2 ** max_cube``).
    """
    if not isinstance(state, XGIDState):
        raise XGIDError(f"encode_xgid takes an XGIDState, got {type(state).__name__}")
    cv = _check_cube(state)
    dice = _check_dice(state)
    score, ml = _check_score(state)
    if state.crawford:
        fault = crawford_fault(ml, score, "Crawford game")
        if fault is not None:
            raise XGIDError(fault)
    _check_max_cube(state, cv, ml)
    if state.double_offered and state.cube_owner == 1:
        raise XGIDError("a double is pending but the doubler (row 0's player) does not own the cube")

    board = state.board.astype(np.int16)
    bottom_first = bool(state.bottom_on_roll)
    bottom, top = (board[0], board[1]) if bottom_first else (board[1], board[0])
    score_bottom, score_top = score if bottom_first else score[::-1]
    rules = int(state.crawford) if ml > 0 else int(state.jacoby) | (int(state.beaver) << 1)
    fields = [
        _position_text(bottom, top),
        str(int(cv).bit_length() - 1),
        str(_CUBE_POSITION_FROM_OWNER[bottom_first][state.cube_owner]),
        "1" if bottom_first else "-1",
        "D" if state.double_offered else f"{dice[0]}{dice[1]}",
        str(score_bottom),
        str(score_top),
        str(rules),
        str(ml),
        str(state.max_cube),
    ]
    return "XGID=" + ":".join(fields)


def _check_cube(state: XGIDState) -> int:
    """The cube value (checked) and owner; returns the value."""
    cv = state.cube_value
    if not is_int(cv) or cv < 1 or cv > 1 << _MAX_CUBE_LOG2 or cv & (cv - 1):
        raise XGIDError(f"cube value {cv!r} is not a power of two from 1 to 2**{_MAX_CUBE_LOG2}")
    if not is_int(state.cube_owner) or state.cube_owner not in (-1, 0, 1):
        raise XGIDError(f"cube owner {state.cube_owner!r} must be -1 (centred), 0 or 1")
    return cv


def _check_dice(state: XGIDState) -> tuple:
    """The dice (checked, also against a pending double) as a tuple."""
    dice = tuple(state.dice)
    if len(dice) != 2 or not all(is_int(d) for d in dice) or (
        dice != (0, 0) and not all(1 <= d <= 6 for d in dice)
    ):
        raise XGIDError(f"dice {state.dice!r} must be two dice 1..6 or (0, 0)")
    if state.double_offered and dice != (0, 0):
        raise XGIDError(f"dice {dice!r} given together with a pending double (the dice field would be D)")
    return dice


def _check_score(state: XGIDState) -> tuple[tuple, int]:
    """(score, match length), checked: non-negative, the score below the match length."""
    score = tuple(state.score)
    if len(score) != 2 or not all(is_int(s) and s >= 0 for s in score):
        raise XGIDError(f"score {state.score!r} must be two non-negative integers")
    ml = state.match_length
    if not is_int(ml) or ml < 0:
        raise XGIDError(f"match length {ml!r} must be a non-negative integer")
    if ml > 0 and max(score) >= ml:
        raise XGIDError(f"score {score[0]}-{score[1]} is not below the match length {ml}")
    return score, ml


def _check_max_cube(state: XGIDState, cv: int, ml: int) -> None:
    """Max cube 0..15, and a money cube within ``2 ** max cube``."""
    if not is_int(state.max_cube) or not 0 <= state.max_cube <= _MAX_CUBE_LOG2:
        raise XGIDError(f"max cube {state.max_cube!r} is not 0..{_MAX_CUBE_LOG2} (log2 of the cube limit)")
    if ml == 0 and cv > 1 << state.max_cube:
        raise XGIDError(f"cube {cv} is above the money cube limit {1 << state.max_cube} (max cube {state.max_cube})")


def _position_text(bottom: np.ndarray, top: np.ndarray) -> str:
    """The 26-character position field of the bottom and top players' rows (each in its own numbering)."""
    chars = ["-"] * 26
    for i in range(1, 25):
        nb, nt = int(bottom[i - 1]), int(top[24 - i])
        if nb:
            chars[i] = chr(ord("A") + nb - 1)
        elif nt:
            chars[i] = chr(ord("a") + nt - 1)
    if top[BAR]:
        chars[0] = chr(ord("a") + int(top[BAR]) - 1)
    if bottom[BAR]:
        chars[25] = chr(ord("A") + int(bottom[BAR]) - 1)
    return "".join(chars)


def _parse_position(pos: str, bad) -> tuple[np.ndarray, np.ndarray]:
    """Board string -> (bottom row, top row), each in bgai's per-side layout (own point numbers)."""
    if len(pos) != 26:
        raise bad(f"position field has {len(pos)} characters, expected 26")
    bottom = np.zeros(25, dtype=np.int16)
    top = np.zeros(25, dtype=np.int16)
    for i, c in enumerate(pos):
        if c == "-":
            continue
        if "A" <= c <= "P":
            n, is_bottom = ord(c) - ord("A") + 1, True
        elif "a" <= c <= "p":
            n, is_bottom = ord(c) - ord("a") + 1, False
        else:
            raise bad(f"position field: bad character {c!r} at position {i + 1} (expected -, A-P or a-p)")
        if i == 0:
            if is_bottom:
                raise bad(f"position field: character 1 is the top player's bar but holds bottom checkers {c!r}")
            top[BAR] = n
        elif i == 25:
            if not is_bottom:
                raise bad(f"position field: character 26 is the bottom player's bar but holds top checkers {c!r}")
            bottom[BAR] = n
        elif is_bottom:
            bottom[i - 1] = n
        else:
            top[24 - i] = n
    for name, row in (("bottom", bottom), ("top", top)):
        if row.sum() > 15:
            raise bad(f"position field: the {name} player has {row.sum()} checkers (max 15)")
    return bottom, top

