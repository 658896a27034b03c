"""FIBS ``board:`` lines (FIBS "boardstyle 3" / ``rawboard``): parse and write.

This is the position format of the FIBS server and of GNU Backgammon's external-player protocol
(test vectors in ``tests/test_fibs.py``; sources: the FIBS CLIP documentation and GNU Backgammon's
``drawboard.c`` functions ``FIBSBoard`` (writer) and ``ProcessFIBSBoardInfo`` (reader)).

A line is ``board:`` followed by 52 colon-separated fields: two names and 50 integers (see
:data:`INT_FIELDS`).  Two steps, kept apart:

* :func:`parse_fibs_board` checks the **syntax** and returns the raw fields (:class:`FIBSBoard`); anything
  after the last number (GNU Backgammon's session options such as ``jacobyrule off``) is kept in
  :attr:`FIBSBoard.options_text`.
* :func:`interpret_fibs_board` turns the fields into a game state (:class:`FIBSState`) exactly as GNU
  Backgammon's ``ProcessFIBSBoardInfo`` does: the side that must act is derived from ``turn``, ``color`` and
  ``direction`` only (names are cosmetic); a pending double (``was doubled`` set, or -- gnubg's rule -- both
  may-double flags 0) means the side to act is the player who was doubled; the cube owner is whoever alone may
  double; the Crawford game is a match game with a side 1-away and neither the post-Crawford (field 51) nor
  the non-Crawford (field 52) flag set; match length 9999 (FIBS "unlimited") and 0 mean money play.

Geometry: positive numbers are O's checkers, negative X's.  The side moving from 24 to 1 (``direction`` -1)
has its point *p* at index *p*, its bar at index 25; the side moving from 1 to 24 has its point *p* at index
``25 - p`` and its bar at index 0.

:func:`format_fibs_board` writes a state the way GNU Backgammon's own writer does: ``color`` 1,
``direction`` -1, the side to act (or, with a double pending, the player doubled) as "you" = O.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Sequence

import numpy as np

from bgai.core.board import BAR, as_batch, validation_errors
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.errors import FIBSBoardError
from bgai.util.integers import parse_int

__all__ = [
    "INT_FIELDS",
    "FIBSBoard",
    "FIBSState",
    "parse_fibs_board",
    "interpret_fibs_board",
    "format_fibs_board",
    "FIBS_UNLIMITED",
    "SCORE_CONVENTIONS",
]

#: Match length FIBS uses for an unlimited match (read as money play, like GNU Backgammon).
FIBS_UNLIMITED = 9999

#: Names of the 50 integer fields after the two names, in order (FIBS CLIP "board" documentation).
INT_FIELDS = (
    ("match_length", 1),
    ("score", 1),
    ("opponent_score", 1),
    ("points", 26),
    ("turn", 1),
    ("dice", 2),
    ("opponent_dice", 2),
    ("cube", 1),
    ("may_double", 1),
    ("opponent_may_double", 1),
    ("was_doubled", 1),
    ("color", 1),
    ("direction", 1),
    ("home", 1),
    ("bar", 1),
    ("on_home", 1),
    ("opponent_on_home", 1),
    ("on_bar", 1),
    ("opponent_on_bar", 1),
    ("can_move", 1),
    ("forced_move", 1),
    ("post_crawford", 1),
    ("non_crawford", 1),
)
_N_INTS = sum(n for _, n in INT_FIELDS)  # 50


@dataclass(frozen=True)
class FIBSBoard:
    """The raw fields of one FIBS ``board:`` line (no interpretation beyond "these are integers").

    ``points`` is the 26-entry board array: index 1..24 the points, 0 and 25 the bars; positive = O's checkers,
    negative = X's.  ``dice`` / ``opponent_dice`` are ``(0, 0)`` when not rolled.  ``options_text`` holds what
    followed the last number (GNU Backgammon session/eval options), stripped.
    """

    player: str
    opponent: str
    match_length: int
    score: int
    opponent_score: int
    points: tuple[int, ...]
    turn: int
    dice: tuple[int, int]
    opponent_dice: tuple[int, int]
    cube: int
    may_double: int
    opponent_may_double: int
    was_doubled: int
    color: int
    direction: int
    home: int
    bar: int
    on_home: int
    opponent_on_home: int
    on_bar: int
    opponent_on_bar: int
    can_move: int
    forced_move: int
    post_crawford: int
    non_crawford: int
    options_text: str = ""

    def to_line(self) -> str:
        """The ``board:`` line of these fields (without options or line end)."""
        nums: list[int] = []
        for name, n in INT_FIELDS:
            v = getattr(self, name)
            nums.extend(v if n > 1 else [v])
        return "board:" + ":".join([_name(self.player), _name(self.opponent)] + [str(int(x)) for x in nums])


@dataclass(frozen=True, eq=False)
class FIBSState:
    """A game state read from (or to be written as) a FIBS board, from the view of the side that must act.

    Attributes:
        board: ``(2, 25)`` int8 in bgai's layout (:mod:`bgai.core.board`): row 0 the side that must act now (the
            player on roll, or the player who was doubled when ``doubled``), row 1 the other side.
        dice: ``(d1, d2)`` rolled dice of the side to act, or ``None`` before the roll.
        match_length: points to win; 0 for money play.
        score: ``(side to act, opponent)``.
        cube_value: 1, 2, 4, ...
        cube_owner: -1 centred, 0 the side to act owns it, 1 the opponent owns it.
        doubled: a double has been offered to the side to act, who must take, drop or beaver.
        crawford: this is the Crawford game.
        names: ``(side to act, opponent)`` names (cosmetic).

    :attr:`cube_state` / :meth:`to_cube_state` give the one :class:`~bgai.core.cube_state.CubeState` of these
    fields (the session's Jacoby and Crawford rules applied) and :meth:`from_cube_state` writes one; the fields
    stay as written (a FIBS "unlimited" match carries a running score that no money-play cube state has).
    """

    board: np.ndarray
    dice: tuple[int, int] | None = None
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    cube_value: int = 1
    cube_owner: int = -1
    doubled: bool = False
    crawford: bool = False
    names: tuple[str, str] = ("bgai", "opponent")

    def __post_init__(self) -> None:
        b = as_batch(np.array(self.board, copy=True))
        msg = validation_errors(b)[0]
        if msg is not None:
            raise FIBSBoardError(f"invalid position in FIBS board: {msg}")
        arr = b[0].copy()
        arr.setflags(write=False)
        object.__setattr__(self, "board", arr)
        if self.dice is not None:
            d = tuple(int(x) for x in self.dice)
            if len(d) != 2 or not all(1 <= x <= 6 for x in d):
                raise FIBSBoardError(f"dice must be two values 1..6, got {self.dice!r}")
            object.__setattr__(self, "dice", d)
        if self.cube_value < 1 or self.cube_value & (self.cube_value - 1):
            raise FIBSBoardError(f"cube value must be a power of two >= 1, got {self.cube_value}")
        if self.cube_owner not in (-1, 0, 1):
            raise FIBSBoardError(f"cube owner must be -1, 0 or 1, got {self.cube_owner}")
        if self.match_length < 0:
            raise FIBSBoardError(f"match length must be >= 0, got {self.match_length}")
        if self.match_length and max(self.score) >= self.match_length:
            raise FIBSBoardError(f"score {self.score[0]}-{self.score[1]} is not below the match length {self.match_length}")

    @property
    def is_money(self) -> bool:
        """True for money play (match length 0)."""
        return self.match_length == 0

    @property
    def cube_state(self) -> CubeState:
        """The :class:`~bgai.core.cube_state.CubeState` of the side to act, with the Jacoby and Crawford rules
        on (see :meth:`to_cube_state`)."""
        return self.to_cube_state()

    def to_cube_state(self, *, jacoby: bool = True, crawford_rule: bool = True) -> CubeState:
        """The :class:`~bgai.core.cube_state.CubeState` of the side to act (with a double pending: the player
        doubled, cube before the double).

        Args:
            jacoby: money play: the Jacoby rule of the session (a FIBS board does not carry it).
            crawford_rule: match play: the Crawford rule of the session; off, no game is the Crawford game.

        Raises:
            FIBSBoardError: a turned cube in the Crawford game, a state no game can have.
        """
        crawford = self.crawford and crawford_rule
        if crawford and self.cube_value != 1:
            raise FIBSBoardError("FIBS board: the cube was turned in the Crawford game")
        return CubeState.of_format(
            FIBSBoardError,
            "FIBS board",
            cube_value=self.cube_value,
            owner=self.cube_owner,
            match_length=self.match_length,
            score=self.score,
            crawford=crawford,
            jacoby=bool(jacoby),
        )

    @classmethod
    def from_cube_state(
        cls, board: np.ndarray, state: CubeState, dice: Dice | tuple[int, int] | None = None, *,
        doubled: bool = False, names: tuple[str, str] = ("bgai", "opponent"),
    ) -> "FIBSState":
        """The FIBS board fields of a position from the side to act's view (``doubled``: the player doubled), its
        state (same view) and roll (:func:`format_fibs_board` writes the line).

        Raises:
            FIBSBoardError: an impossible board, dice with a pending double.
            InvalidDiceError: bad dice.
        """
        d = None if dice is None else Dice.parse(dice).as_tuple()
        if doubled and d is not None:
            raise FIBSBoardError("no dice are rolled while a double is pending")
        return cls(
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


def _name(s: str) -> str:
    # gnubg writes ':' inside names as '_' (FIBSBoard); newlines would break the line protocol.
    return "".join("_" if c in ":\r\n\0" else c for c in s)


def parse_fibs_board(text: str) -> FIBSBoard:
    """Parse a FIBS ``board:`` line into its raw fields.

    NUL bytes (GNU Backgammon sends one after each board), surrounding whitespace and ``\\r``/``\\n`` are
    dropped.  Text after the last number (whitespace-separated session options) goes to ``options_text``.

    Args:
        text: ``'board:You:someplayer:3:0:0:0:-2:...'``.

    Returns:
        :class:`FIBSBoard`.

    Raises:
        FIBSBoardError: no ``board:`` prefix, not exactly 52 fields, or a field that is not an integer of at
            most 18 ASCII digits (surrounding spaces allowed; read by :func:`bgai.util.integers.parse_int`),
            naming the field.
    """
    if not isinstance(text, str):
        raise FIBSBoardError(f"a FIBS board must be text, got {type(text).__name__}")
    line = text.replace("\0", "").strip()
    if not line[:6].lower() == "board:":
        shown = line[:40] + ("..." if len(line) > 40 else "")
        raise FIBSBoardError(f"a FIBS board line must start with 'board:', got {shown!r}")
    parts = line[6:].split(":")
    options = ""
    if parts:
        last = parts[-1].split(None, 1)
        if len(last) == 2:
            parts[-1], options = last[0], last[1].strip()
    n_ints = len(parts) - 2
    if n_ints != _N_INTS:
        raise FIBSBoardError(
            f"a FIBS board has 52 fields after 'board:' (2 names and 50 numbers), got {len(parts)}"
        )
    nums = [
        parse_int(p.strip(), f"field {i + 3} ({_field_name(i)}) of the FIBS board", FIBSBoardError)
        for i, p in enumerate(parts[2:])
    ]
    values: dict[str, object] = {"player": parts[0], "opponent": parts[1], "options_text": options}
    k = 0
    for name, n in INT_FIELDS:
        values[name] = tuple(nums[k : k + n]) if n > 1 else nums[k]
        k += n
    return FIBSBoard(**values)  # type: ignore[arg-type]


def _field_name(i: int) -> str:
    """Name of integer field ``i`` (0-based among the 50 numbers)."""
    k = 0
    for name, n in INT_FIELDS:
        if i < k + n:
            return f"{name}[{i - k}]" if n > 1 else name
        k += n
    return "?"  # pragma: no cover


#: Score-field conventions accepted by :func:`interpret_fibs_board`.
SCORE_CONVENTIONS = ("fibs", "gnubg")


def interpret_fibs_board(fb: FIBSBoard | str, *, scores: str = "fibs") -> FIBSState:
    """The game state of a FIBS board, read the way GNU Backgammon's ``ProcessFIBSBoardInfo`` reads it.

    Args:
        fb: parsed fields, or the line itself.
        scores: how to assign the two score fields.  ``'fibs'`` (FIBS CLIP, and ``ProcessFIBSBoardInfo``): the
            first score is that of "you", the side of ``color``.  ``'gnubg'``: as GNU Backgammon's frontend
            (``set player N external``, ``play.c``) writes them -- in the order of the *names*, which is gnubg's
            player 0 first unless a double is pending, while the colours always make gnubg's player 1 "you"; so
            without a pending double the first score belongs to the side of ``-color`` (checked against gnubg
            1.07 in ``tests/test_serve_gnubg.py``; gnubg's own engine compensates in the same way when it
            evaluates).  With a double pending both conventions agree.

    Returns:
        :class:`FIBSState` from the view of the side that must act.

    Raises:
        FIBSBoardError: syntax errors (see :func:`parse_fibs_board`); ``turn``, ``color`` or ``direction`` 0
            (0 = game over; gnubg: "badly formed board"); a match length not above both scores; a point or bar
            with more than 15 checkers; checkers of the wrong sign on a bar; a pair of dice (``dice`` or
            ``opponent_dice``) that is neither ``0:0`` (not rolled) nor two values 1..6 -- ``0:3`` is as wrong
            as ``3:0``; a cube that is not a power of two; an impossible position (more than 15 checkers a
            side, ...).
    """
    if isinstance(fb, str):
        fb = parse_fibs_board(fb)
    _check_sides(fb)
    match_length = _match_length(fb)
    if scores not in SCORE_CONVENTIONS:
        raise ValueError(f"scores must be one of {SCORE_CONVENTIONS}, got {scores!r}")
    doubled = bool(fb.was_doubled) or (not fb.may_double and not fb.opponent_may_double)
    you_on_turn = fb.turn == fb.color
    names, (score, opp_score), cube_owner = _names_scores_owner(fb, doubled, you_on_turn, scores)
    board = _board_of_side_on_turn(fb, you_on_turn)
    if doubled:
        board = board[::-1].copy()  # the side to act is the player who was doubled
    dice = _dice_of_side_to_act(fb, doubled)
    crawford = bool(
        match_length
        and (match_length - score == 1 or match_length - opp_score == 1)
        and not (fb.post_crawford or fb.non_crawford)
    )
    if fb.cube < 1 or fb.cube & (fb.cube - 1):
        raise FIBSBoardError(f"FIBS board cube must be a power of two >= 1, got {fb.cube}")
    return FIBSState(
        board=board,
        dice=dice,
        match_length=match_length,
        score=(score, opp_score),
        cube_value=fb.cube,
        cube_owner=cube_owner,
        doubled=doubled,
        crawford=crawford,
        names=names,
    )


def _check_sides(fb: FIBSBoard) -> None:
    """``turn``, ``color`` and ``direction`` are -1 or 1 (turn 0: the game is over)."""
    for name in ("turn", "color", "direction"):
        v = getattr(fb, name)
        if v not in (-1, 1):
            if v == 0 and name == "turn":
                raise FIBSBoardError("FIBS board has turn 0 (game over): there is no decision to make")
            raise FIBSBoardError(f"FIBS board field {name} must be -1 or 1, got {v}")


def _match_length(fb: FIBSBoard) -> int:
    """The match length (0 for money play, also for FIBS's "unlimited"), checked with the scores."""
    match_length = fb.match_length
    if match_length == FIBS_UNLIMITED:
        match_length = 0
    if match_length < 0:
        raise FIBSBoardError(f"FIBS board has a negative match length {match_length}")
    if fb.score < 0 or fb.opponent_score < 0:
        raise FIBSBoardError(f"FIBS board has a negative score ({fb.score}, {fb.opponent_score})")
    if match_length and (match_length <= fb.score or match_length <= fb.opponent_score):
        raise FIBSBoardError(
            f"FIBS board score {fb.score}-{fb.opponent_score} is not below the match length {match_length}"
        )
    return match_length


def _names_scores_owner(
    fb: FIBSBoard, doubled: bool, you_on_turn: bool, scores: str
) -> tuple[tuple[str, str], tuple[int, int], int]:
    """(names, score, cube owner) from the view of the side to act: the cube owner is whoever alone may double
    (-1 centred, 0 the side to act, 1 the opponent); ``scores`` as in :func:`interpret_fibs_board`."""
    must_swap = doubled != (not you_on_turn)  # the side that must act is not "you"
    score, opp_score = fb.score, fb.opponent_score
    can_double, opp_can_double = bool(fb.may_double), bool(fb.opponent_may_double)
    names = (fb.player, fb.opponent)
    if must_swap:
        can_double, opp_can_double = opp_can_double, can_double
        names = (fb.opponent, fb.player)
    if must_swap != (scores == "gnubg" and not doubled):
        score, opp_score = opp_score, score
    cube_owner = -1 if can_double == opp_can_double else (0 if can_double else 1)
    return names, (score, opp_score), cube_owner


def _board_of_side_on_turn(fb: FIBSBoard, you_on_turn: bool) -> np.ndarray:
    """The ``(2, 25)`` int16 board with the side on turn (``fb.turn``'s colour) in row 0."""
    color = fb.turn
    direction = fb.direction if you_on_turn else -fb.direction
    pts = fb.points
    for i, v in enumerate(pts):
        if not -15 <= v <= 15:
            raise FIBSBoardError(f"FIBS board point {i} holds {v} checkers (at most 15 a point)")
    board = np.zeros((2, 25), dtype=np.int16)
    for p in range(1, 25):
        v = pts[p] if direction < 0 else pts[25 - p]
        if v * color > 0:  # on-turn side's checker on its point p
            board[0, p - 1] = abs(v)
        elif v * color < 0:  # the other side's checker: its point 25 - p
            board[1, 24 - p] = abs(v)
    turn_bar, other_bar = (pts[25], pts[0]) if direction < 0 else (pts[0], pts[25])
    for who, v in ((0, turn_bar), (1, other_bar)):
        if v * (color if who == 0 else -color) < 0:
            raise FIBSBoardError(
                f"FIBS board: checkers of the wrong colour on the {'on-turn' if who == 0 else 'other'} side's bar ({v})"
            )
        board[who, BAR] = abs(v)
    return board


def _dice_of_side_to_act(fb: FIBSBoard, doubled: bool) -> tuple[int, int] | None:
    """Both dice fields checked; the rolled dice, or None (not rolled, or a double pending)."""
    for name, pair in (("dice", fb.dice), ("opponent dice", fb.opponent_dice)):
        if tuple(pair) != (0, 0) and not all(1 <= d <= 6 for d in pair):
            raise FIBSBoardError(
                f"FIBS board {name} must be two values 1..6 or 0:0 (not rolled), got {pair[0]}:{pair[1]}"
            )
    dice_raw = fb.dice if fb.dice[0] else fb.opponent_dice
    return None if doubled or not dice_raw[0] else (int(dice_raw[0]), int(dice_raw[1]))


def format_fibs_board(state: FIBSState, *, scores: str = "fibs") -> str:
    """Write a state as a FIBS ``board:`` line, in GNU Backgammon's writer convention.

    "You" (the first name, O, positive numbers, ``color`` 1, ``direction`` -1) is the side to act; with a
    double pending, "you" is the player doubled and ``turn`` is the doubler's colour (-1), as on FIBS.
    :func:`interpret_fibs_board` with the same ``scores`` convention reads the line back to an equal state.

    Args:
        state: the state from the side to act's view.
        scores: ``'fibs'`` (the first score is "you"'s) or ``'gnubg'`` (without a pending double the first
            score is the other side's, as GNU Backgammon's frontend writes it; see :func:`interpret_fibs_board`).

    Returns:
        The line, without a line end.
    """
    b = np.asarray(state.board, dtype=np.int16)
    pts = [0] * 26
    for p in range(1, 25):
        if b[0, p - 1]:
            pts[p] = int(b[0, p - 1])
        elif b[1, 24 - p]:
            pts[p] = -int(b[1, 24 - p])
    pts[25] = int(b[0, BAR])
    pts[0] = -int(b[1, BAR])
    off = 15 - b.sum(axis=1)
    dice = state.dice or (0, 0)
    can_double = state.cube_owner in (-1, 0) and not state.crawford
    opp_can_double = state.cube_owner in (-1, 1) and not state.crawford
    if state.crawford:  # FIBS sets both flags in the Crawford game; Crawford comes from the score
        can_double = opp_can_double = True
    one_away = state.match_length and (state.match_length - 1 in state.score)
    post_crawford = int(bool(one_away and not state.crawford))
    if scores not in SCORE_CONVENTIONS:
        raise ValueError(f"scores must be one of {SCORE_CONVENTIONS}, got {scores!r}")
    swap_scores = scores == "gnubg" and not state.doubled
    fb = FIBSBoard(
        player=state.names[0],
        opponent=state.names[1],
        match_length=state.match_length,
        score=state.score[1] if swap_scores else state.score[0],
        opponent_score=state.score[0] if swap_scores else state.score[1],
        points=tuple(pts),
        turn=-1 if state.doubled else 1,
        dice=tuple(dice),  # type: ignore[arg-type]
        opponent_dice=tuple(dice),  # type: ignore[arg-type]
        cube=state.cube_value,
        may_double=int(can_double),
        opponent_may_double=int(opp_can_double),
        was_doubled=int(state.doubled),
        color=1,
        direction=-1,
        home=0,
        bar=25,
        on_home=int(off[0]),
        opponent_on_home=int(off[1]),
        on_bar=int(b[0, BAR]),
        opponent_on_bar=int(b[1, BAR]),
        can_move=0,
        forced_move=0,
        post_crawford=post_crawford,
        non_crawford=0,
    )
    return fb.to_line()


def board_fields() -> Sequence[str]:
    """Names of :class:`FIBSBoard`'s fields (for documentation and error messages)."""
    return [f.name for f in fields(FIBSBoard)]
