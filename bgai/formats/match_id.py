"""GNU Backgammon Match ID: the cube, score and turn that go with a Position ID.

Format (source: the GNU Backgammon manual, "A technical description of the Match ID", and gnubg's
``matchid.c``; the bit table is below, test vectors in ``tests/test_match_id.py``): a 9-byte key,
little-endian by bit (bit *k* is bit *k* mod 8 of byte *k* // 8), written as standard Base64 (12 characters,
no padding).  Bit fields, 0-based:

======  ==========================================================================================
0-3     cube: log2 of the cube value (0..15)
4-5     cube owner: 0 = player 0, 1 = player 1, 3 = centred
6       player on roll ("dice owner", gnubg's ``fMove``)
7       Crawford game
8-10    game state: 0 no game, 1 playing, 2 over, 3 resigned, 4 ended by a dropped cube
11      turn: the player who must act now (gnubg's ``fTurn``; differs from bit 6 while a double or a
        resignation is pending)
12      a double is offered
13-14   resignation offered: 0 none, 1 single, 2 gammon, 3 backgammon
15-17   die 1 (0 = not rolled; gnubg writes the higher die first, and so does :func:`encode_match_id`;
        either order is accepted when decoding)
18-20   die 2
21-35   match length (0 = money game)
36-50   score of player 0
51-65   score of player 1
66      Jacoby rule **off** (newer gnubg; 0 keeps old IDs valid, so 0 means Jacoby on)
67-71   unused (must be 0)
======  ==========================================================================================

What GNU Backgammon 1.07 writes (``MatchID`` in ``matchid.c``, checked with ``gnubg -t`` in
``tests/test_formats_defects.py``): the higher die in bits 15-17; bit 66 = ``!fJacoby`` of its match state,
which a new money session takes from ``set jacoby`` (on by default) and a new **match** starts off, so the
Match IDs of a match gnubg starts have bit 66 set.  :class:`MatchState`'s ``jacoby`` defaults the same way (on
for money, off for a match).  When gnubg reads a Match ID (``SetMatchID`` in ``play.c``) it keeps bit 66 as
written, clears the Crawford flag of a 1-point match and of a score with nobody 1-away; :func:`decode_match_id`
clears it in a 1-point match and refuses the other case.

Players 0 and 1 are gnubg's fixed players, not "on roll / not on roll"; the Position ID that goes with a Match
ID is from the view of the player in bit 6.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

import numpy as np

from bgai.core.board import as_batch, is_game_over
from bgai.core.cube_state import CENTRED, ME, OPPONENT, CubeState
from bgai.core.dice import Dice
from bgai.errors import MatchIDError
from bgai.util.integers import is_int

__all__ = ["MATCH_ID_LENGTH", "GAME_STATES", "MatchState", "crawford_fault", "encode_match_id", "decode_match_id"]

#: Length of a Match ID in characters.
MATCH_ID_LENGTH = 12

#: Names of the game-state values of bits 8-10.
GAME_STATES = {0: "no game", 1: "playing", 2: "game over", 3: "resigned", 4: "dropped cube"}

_MAX_15BIT = (1 << 15) - 1
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]")

# (name, first bit, width)
_FIELDS = (
    ("cube", 0, 4),
    ("cube_owner", 4, 2),
    ("player_on_roll", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("double_offered", 12, 1),
    ("resign", 13, 2),
    ("die1", 15, 3),
    ("die2", 18, 3),
    ("match_length", 21, 15),
    ("score0", 36, 15),
    ("score1", 51, 15),
    ("jacoby_off", 66, 1),
    ("unused", 67, 5),
)


@dataclass(frozen=True)
class MatchState:
    """The match/cube state that a GNU Backgammon Match ID encodes.

    Attributes:
        cube_value: cube value, a power of two 1..2**15.
        cube_owner: -1 centred, 0 or 1 = gnubg's player 0 or 1 owns the cube.
        player_on_roll: 0 or 1, the player whose turn it is (who has rolled or is about to roll); the Position
            ID is from this player's view.
        crawford: True in the Crawford game (match play only, one side 1-away).
        game_state: 0 no game, 1 playing, 2 over, 3 resigned, 4 ended by a dropped cube.
        turn: 0 or 1, the player who must act now (differs from ``player_on_roll`` while a double or
            resignation is pending).
        double_offered: a double is offered and awaits take/drop.
        resign: resignation on offer: 0 none, 1 single, 2 gammon, 3 backgammon.
        dice: the rolled dice ``(d1, d2)`` 1..6 each, or ``(0, 0)`` if not rolled; kept in the given order
            (the Match ID holds the higher die first).
        match_length: points to win the match; 0 = money game.
        score: ``(player 0, player 1)`` points won so far.
        jacoby: the Jacoby flag of GNU Backgammon's match state (bit 66 clear); None (the default) resolves to
            True in money play and False in match play, as gnubg starts a money session (Jacoby on by default)
            or a match.

    The fields are the Match ID's, as written; :attr:`cube_state` is the one
    :class:`~bgai.core.cube_state.CubeState` they stand for (the player on roll's view) and
    :meth:`from_cube_state` writes one.  The fields stay: a Match ID can hold what no cube state is (a money
    session's running score, a finished match, a centred cube above 1 set with gnubg's ``set cube value``).
    """

    cube_value: int = 1
    cube_owner: int = -1
    player_on_roll: int = 0
    crawford: bool = False
    game_state: int = 1
    turn: int = 0
    double_offered: bool = False
    resign: int = 0
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool | None = None

    def __post_init__(self) -> None:
        if self.jacoby is None:
            object.__setattr__(self, "jacoby", self.match_length == 0)

    def validate(self) -> "MatchState":
        """Check every field; returns ``self``.

        Raises:
            MatchIDError: naming the field at fault, e.g. a cube that is not a power of two up to 2**15, a
                cube owner other than -1/0/1, dice out of 1..6 or only one die rolled, a score not below the
                match length in a match still being played, Crawford in a money game, in a 1-point match or
                with neither side 1-away, ``jacoby`` not a bool.
        """
        self._check_cube()
        self._check_players()
        self._check_dice()
        self._check_length_and_score()
        if not isinstance(self.jacoby, bool):
            raise MatchIDError(f"jacoby {self.jacoby!r} must be True or False")
        if self.crawford:
            fault = crawford_fault(self.match_length, tuple(self.score))
            if fault is not None:
                raise MatchIDError(fault)
        return self

    def check(self, board: np.ndarray | None = None, *, where: str = "match state") -> "MatchState":
        """Check the fields together, and with the position, as a game in progress requires; returns ``self``.

        :meth:`validate` checks each field; this also checks that a centred cube shows 1, the cube is never
        turned in the Crawford game, a pending double has the turn with the player who must answer, no dice are
        rolled while a double is pending, nobody doubles a cube the opponent owns, and a game "being played" is
        not on a finished position.

        Args:
            board: optional ``(2, 25)`` position of the Position ID that goes with it (from the view of the
                player on roll).
            where: how messages name the Match ID (e.g. ``"Match ID 'cAkAAAAAAAAA'"``).

        Raises:
            MatchIDError: ``"<where>: <what is inconsistent>"`` (a field out of range: :meth:`validate`'s message).
        """
        self.validate()
        if self.cube_owner == CENTRED and self.cube_value != 1:
            raise MatchIDError(f"{where}: the cube is centred but shows {self.cube_value} (a turned cube has an owner)")
        if self.crawford and (self.cube_value != 1 or self.double_offered):
            raise MatchIDError(f"{where}: the cube was turned in the Crawford game")
        if self.double_offered:
            if self.turn == self.player_on_roll:
                raise MatchIDError(f"{where}: a double is pending but the turn is not with the player who must answer")
            if tuple(self.dice) != (0, 0):
                raise MatchIDError(f"{where}: dice {self.dice} rolled while a double is pending")
            if self.cube_owner not in (CENTRED, self.player_on_roll):
                raise MatchIDError(f"{where}: player {self.player_on_roll} doubled a cube owned by the opponent")
        if board is not None and self.game_state == 1 and bool(is_game_over(as_batch(board))[0]):
            raise MatchIDError(f"{where}: says the game is being played but the position is a finished game")
        return self

    @property
    def cube_state(self) -> CubeState:
        """The :class:`~bgai.core.cube_state.CubeState` of the player on roll (see :meth:`to_cube_state`)."""
        return self.to_cube_state()

    def to_cube_state(self, *, where: str = "match state") -> CubeState:
        """The :class:`~bgai.core.cube_state.CubeState` of the player on roll (with a double pending: the
        doubler, cube before the double).

        Money play keeps the Jacoby bit and drops the score (a money session's running total); match play has
        ``jacoby=False`` and the score as ``(player on roll, opponent)``.

        Raises:
            MatchIDError: fields no game can have (a score not below the match length, a Crawford flag without a
                1-away side, ...), as ``"<where>: ..."``.
        """
        p = self.player_on_roll
        return CubeState.of_format(
            MatchIDError,
            where,
            cube_value=self.cube_value,
            owner=CENTRED if self.cube_owner == CENTRED else (ME if self.cube_owner == p else OPPONENT),
            match_length=self.match_length,
            score=(self.score[p], self.score[1 - p]),
            crawford=self.crawford,
            jacoby=bool(self.jacoby),
        )

    @classmethod
    def from_cube_state(
        cls, state: CubeState, *, player_on_roll: int = 0, dice: Dice | tuple[int, int] | None = None,
        double_offered: bool = False,
    ) -> "MatchState":
        """The Match ID fields of a state, with ``player_on_roll`` (GNU Backgammon's player 0 or 1) on roll.

        A pending double is written as GNU Backgammon does: the doubler on roll, the turn with the taker.  Match
        play writes the Jacoby bit off (bit 66 set), as GNU Backgammon does for every match (``NewGame`` in
        ``play.c``: ``fJacoby && !nMatchTo``), whatever ``state.jacoby`` says; money play writes
        ``state.jacoby``.  The cube limit is not part of a Match ID.

        Args:
            state: the state of the player on roll (the doubler, cube before the double, when ``double_offered``).
            player_on_roll: 0 or 1.
            dice: the roll, or None / ``(0, 0)`` when not rolled.
            double_offered: the player on roll has doubled and the opponent must answer.

        Raises:
            MatchIDError: ``player_on_roll`` not 0/1, dice with a pending double, a field out of range.
            InvalidDiceError: bad dice.
        """
        if player_on_roll not in (0, 1):
            raise MatchIDError(f"player on roll {player_on_roll!r} must be 0 or 1")
        d = (0, 0) if dice is None or tuple(dice) == (0, 0) else Dice.parse(dice).as_tuple()
        if double_offered and d != (0, 0):
            raise MatchIDError("no dice are rolled while a double is pending")
        p = player_on_roll
        owner = CENTRED if state.owner == CENTRED else (p if state.owner == ME else 1 - p)
        score = [0, 0]
        score[p], score[1 - p] = state.score
        return cls(
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
            jacoby=bool(state.jacoby) if state.is_money else False,
        ).validate()

    def _check_cube(self) -> None:
        cv = self.cube_value
        if not is_int(cv) or cv < 1 or cv > 1 << 15 or cv & (cv - 1):
            raise MatchIDError(f"cube value {cv!r} is not a power of two from 1 to 2**15 (32768)")
        if not is_int(self.cube_owner) or self.cube_owner not in (-1, 0, 1):
            raise MatchIDError(f"cube owner {self.cube_owner!r} must be -1 (centred), 0 or 1")

    def _check_players(self) -> None:
        """Player on roll, turn, game state and resignation."""
        for name in ("player_on_roll", "turn"):
            v = getattr(self, name)
            if not is_int(v) or v not in (0, 1):
                raise MatchIDError(f"{name.replace('_', ' ')} {v!r} must be player 0 or 1")
        if not is_int(self.game_state) or self.game_state not in GAME_STATES:
            raise MatchIDError(f"game state {self.game_state!r} must be 0..4 ({GAME_STATES})")
        if not is_int(self.resign) or not 0 <= self.resign <= 3:
            raise MatchIDError(f"resignation {self.resign!r} must be 0 (none), 1, 2 or 3")

    def _check_dice(self) -> None:
        dice = tuple(self.dice)
        if len(dice) != 2 or not all(is_int(d) for d in dice):
            raise MatchIDError(f"dice {self.dice!r} must be two integers")
        if dice != (0, 0) and not all(1 <= d <= 6 for d in dice):
            raise MatchIDError(f"dice {dice!r} must both be 1..6, or (0, 0) when not rolled")

    def _check_length_and_score(self) -> None:
        ml = self.match_length
        if not is_int(ml) or not 0 <= ml <= _MAX_15BIT:
            raise MatchIDError(f"match length {ml!r} must be 0 (money) .. {_MAX_15BIT}")
        score = tuple(self.score)
        if len(score) != 2 or not all(is_int(s) and 0 <= s <= _MAX_15BIT for s in score):
            raise MatchIDError(f"score {self.score!r} must be two integers 0..{_MAX_15BIT}")
        if ml > 0 and self.game_state in (0, 1) and max(score) >= ml:
            raise MatchIDError(
                f"score {score[0]}-{score[1]} is not below the match length {ml} (the match would be over)"
            )


def crawford_fault(match_length: int, score: tuple[int, int], flag: str = "Crawford game flag set") -> str | None:
    """Why a game flagged as the Crawford game cannot be one, or None when it can.

    The Crawford game (the standard Crawford rule; GNU Backgammon's ``SetMatchID`` applies it the same way) is a
    match game in which one side is 1-away; a 1-point match has none.  Shared by the Match ID and XGID checks.

    Args:
        match_length: points to win, 0 for money play.
        score: the two players' points (either order).
        flag: how the message names the flag (the start of the message).

    Returns:
        A one-line message starting with ``flag``, or None.
    """
    if match_length == 0:
        return f"{flag} in a money game (match length 0)"
    if match_length == 1:
        return f"{flag} in a 1-point match (a 1-point match has no Crawford game)"
    if match_length - 1 not in score:
        return (
            f"{flag} but neither player is 1-away (score {score[0]}-{score[1]}, match length {match_length})"
        )
    return None


def encode_match_id(state: MatchState) -> str:
    """The 12-character Match ID of a :class:`MatchState`.

    Writes what GNU Backgammon writes for the same state (its ``MatchID``): the higher die first, bit 66 =
    not ``state.jacoby``.

    Raises:
        MatchIDError: a field out of range (see :meth:`MatchState.validate`).
    """
    if not isinstance(state, MatchState):
        raise MatchIDError(f"encode_match_id takes a MatchState, got {type(state).__name__}")
    state.validate()
    values = {
        "cube": int(state.cube_value).bit_length() - 1,
        "cube_owner": 3 if state.cube_owner == -1 else state.cube_owner,
        "player_on_roll": state.player_on_roll,
        "crawford": int(bool(state.crawford)),
        "game_state": state.game_state,
        "turn": state.turn,
        "double_offered": int(bool(state.double_offered)),
        "resign": state.resign,
        "die1": max(state.dice),
        "die2": min(state.dice),
        "match_length": state.match_length,
        "score0": state.score[0],
        "score1": state.score[1],
        "jacoby_off": int(not state.jacoby),
        "unused": 0,
    }
    key = 0
    for name, start, _width in _FIELDS:
        key |= int(values[name]) << start
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def decode_match_id(match_id: str) -> MatchState:
    """Decode a 12-character Match ID, e.g. ``'cAkAAAAAAAAA'`` (surrounding whitespace is ignored).

    Returns:
        The :class:`MatchState`; dice are kept in the order written (``'cIgUAAAAAAAA'`` gives ``(1, 5)``); the
        Crawford flag of a 1-point match is cleared, as GNU Backgammon's ``SetMatchID`` does.

    Raises:
        MatchIDError: naming the fault: wrong length, a character outside the Base64 alphabet (quoted), or a
            field with an impossible value (cube owner bits 2, game state 5..7, a die of 7, only one die,
            score not below the match length, Crawford without a 1-away side, unused bits set).
    """
    if not isinstance(match_id, str):
        raise MatchIDError(f"Match ID must be a string, got {type(match_id).__name__}")
    s = match_id.strip()
    if len(s) != MATCH_ID_LENGTH:
        raise MatchIDError(f"Match ID {s!r}: wrong length {len(s)} (a Match ID has {MATCH_ID_LENGTH} characters)")
    for j, c in enumerate(s):
        if not _BASE64_RE.fullmatch(c):
            raise MatchIDError(f"Match ID {s!r}: bad character {c!r} at position {j + 1} (not in the Base64 alphabet)")
    try:
        key = int.from_bytes(base64.b64decode(s, validate=True), "little")
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - excluded by the character check
        raise MatchIDError(f"Match ID {s!r}: not valid Base64 ({exc})") from None
    f = {name: (key >> start) & ((1 << width) - 1) for name, start, width in _FIELDS}

    def bad(what: str) -> MatchIDError:
        return MatchIDError(f"Match ID {s!r}: {what}")

    if f["unused"]:
        raise bad(f"unused bits 67-71 are set (value {f['unused']})")
    if f["cube_owner"] == 2:
        raise bad("cube owner bits are 2 (must be 0 = player 0, 1 = player 1 or 3 = centred)")
    if f["game_state"] not in GAME_STATES:
        raise bad(f"game state {f['game_state']} is not one of 0..4")
    for name in ("die1", "die2"):
        if f[name] == 7:
            raise bad(f"{name.replace('die', 'die ')} is 7")
    if (f["die1"] == 0) != (f["die2"] == 0):
        raise bad(f"only one die is rolled (dice {f['die1']}, {f['die2']})")
    state = MatchState(
        cube_value=1 << f["cube"],
        cube_owner=-1 if f["cube_owner"] == 3 else f["cube_owner"],
        player_on_roll=f["player_on_roll"],
        crawford=bool(f["crawford"]) and f["match_length"] != 1,
        game_state=f["game_state"],
        turn=f["turn"],
        double_offered=bool(f["double_offered"]),
        resign=f["resign"],
        dice=(f["die1"], f["die2"]),
        match_length=f["match_length"],
        score=(f["score0"], f["score1"]),
        jacoby=not f["jacoby_off"],
    )
    try:
        return state.validate()
    except MatchIDError as exc:
        raise bad(str(exc)) from None
