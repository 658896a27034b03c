"""Cube and match state, and the rules that move it: offers, take/pass, scoring, Crawford, match end.

Rules (the standard rules of backgammon, e.g. the WBF/USBGF rules, and GNU Backgammon's handling):

* The cube starts centred on 1.  A player may offer a double only at the start of his own turn, before rolling,
  and only while the cube is centred or his own.  The opponent **takes** (the cube is doubled and now his) or
  **passes** (he loses the game at once, scoring the cube value *before* the double).  Redoubles have no limit
  (the physical cube shows 2..64; bgai goes on doubling), except the money-play **cube limit** option.
* A finished game scores cube value x 1, 2 or 3 (single, gammon, backgammon).  With the money-play **Jacoby
  rule** a gammon or backgammon counts as a single game while the cube is still centred (never turned).
* Matches to ``N`` points: the first player to reach ``N`` wins.  Gammons count.  **Crawford rule**: in the one
  game after a player first reaches ``N - 1`` (the Crawford game) nobody may double; in later games
  (post-Crawford) doubling is allowed again.

Players are absolute: 0 and 1 (as GNU Backgammon's players 0/1 of a Match ID).  :class:`Match` is immutable;
every rule returns a new one.  Bad requests raise :class:`~bgai.errors.MatchStateError`; an inconsistent Match
ID raises :class:`~bgai.errors.MatchIDError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bgai.errors import MatchIDError, MatchStateError
from bgai.formats.match_id import MatchState, decode_match_id
from bgai.game.cube import CENTRED, CubeState, met_for

__all__ = ["MatchRules", "Match", "GameOutcome", "match_from_match_id", "cube_state_from_match_id"]

SINGLE, GAMMON, BACKGAMMON = 1, 2, 3


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


@dataclass(frozen=True)
class MatchRules:
    """The rules of a money session or a match.

    Attributes:
        length: match length in points; 0 = money play (a session of independent games).
        jacoby: money play: gammons and backgammons count only after the cube has been turned.
        cube_limit: money play: highest cube value allowed (a power of two, e.g. 64), None = no limit.
        crawford: match play: use the Crawford rule (standard; True).
        met_name: match equity table for cube decisions (:func:`bgai.game.met.load_met`).

    Raises:
        MatchStateError: a negative length, a cube limit that is not a power of two, money options in a match.
    """

    length: int = 0
    jacoby: bool = True
    cube_limit: int | None = None
    crawford: bool = True
    met_name: str = "kazaross-xg2"

    def __post_init__(self) -> None:
        if not _is_int(self.length) or self.length < 0:
            raise MatchStateError(f"match length {self.length!r} must be a positive number of points (0 = money)")
        if self.cube_limit is not None:
            lim = self.cube_limit
            if not _is_int(lim) or lim < 1 or (int(lim) & (int(lim) - 1)):
                raise MatchStateError(f"cube limit {lim!r} is not a power of two (1, 2, 4, ...)")

    @classmethod
    def match(cls, length: int, *, crawford: bool = True, met_name: str = "kazaross-xg2") -> "MatchRules":
        """Rules of a ``length``-point match.

        Raises:
            MatchStateError: ``length`` below 1 (a match to 0 points is no match).
        """
        if not _is_int(length) or length < 1:
            raise MatchStateError(f"match length must be at least 1 point, got {length!r}")
        return cls(length=int(length), jacoby=False, crawford=crawford, met_name=met_name)

    @classmethod
    def money(cls, *, jacoby: bool = True, cube_limit: int | None = None) -> "MatchRules":
        """Rules of money play."""
        return cls(length=0, jacoby=jacoby, cube_limit=cube_limit)

    @property
    def is_money(self) -> bool:
        return self.length == 0


@dataclass(frozen=True)
class GameOutcome:
    """How a game ended.

    Attributes:
        winner: player 0 or 1.
        points: points scored (cube value x kind; a pass scores the cube before the double).
        kind: 1 single, 2 gammon, 3 backgammon as played on the board (before the Jacoby rule); 0 for a pass.
        cube_value: cube value when the game ended (before the refused double for a pass).
        passed: the game ended with a refused double.
    """

    winner: int
    points: int
    kind: int
    cube_value: int
    passed: bool


@dataclass(frozen=True)
class Match:
    """The cube and score of a money session or a match, between or during games.

    Attributes:
        rules: :class:`MatchRules`.
        score: ``(player 0, player 1)`` points won so far.
        cube_value: present cube value (power of two).
        cube_owner: -1 centred, or the player (0/1) who owns it.
        crawford: the game in progress is the Crawford game.
        crawford_done: the Crawford game has been played (later games are post-Crawford).
        offered_by: the player whose double awaits a take/pass, or None.
        games: games finished so far.

    Raises:
        MatchStateError: inconsistent fields (a cube not a power of two, a centred cube above 1, a turned cube in
            the Crawford game, a Crawford flag with no side 1-away, cube above the cube limit ...).
    """

    rules: MatchRules = MatchRules()
    score: tuple[int, int] = (0, 0)
    cube_value: int = 1
    cube_owner: int = CENTRED
    crawford: bool = False
    crawford_done: bool = False
    offered_by: int | None = None
    games: int = 0

    def __post_init__(self) -> None:
        cv = self.cube_value
        if not _is_int(cv) or cv < 1 or (int(cv) & (int(cv) - 1)):
            raise MatchStateError(f"cube value {cv!r} is not a power of two (1, 2, 4, 8, ...)")
        if self.cube_owner not in (CENTRED, 0, 1):
            raise MatchStateError(f"cube owner {self.cube_owner!r} must be -1 (centred), 0 or 1")
        if self.cube_owner == CENTRED and cv != 1:
            raise MatchStateError(f"a centred cube must be on 1, not {cv}")
        score = tuple(self.score)
        if len(score) != 2 or not all(_is_int(s) and s >= 0 for s in score):
            raise MatchStateError(f"score {self.score!r} must be two non-negative integers")
        object.__setattr__(self, "score", (int(score[0]), int(score[1])))
        if self.offered_by not in (None, 0, 1):
            raise MatchStateError(f"offered_by {self.offered_by!r} must be None, 0 or 1")
        r = self.rules
        if r.cube_limit is not None and cv > r.cube_limit:
            raise MatchStateError(f"cube value {cv} is above the cube limit {r.cube_limit}")
        if r.is_money:
            if self.crawford or self.crawford_done:
                raise MatchStateError("Crawford flags set in money play")
        elif self.crawford:
            if not r.crawford:
                raise MatchStateError("Crawford game flag set but the Crawford rule is off")
            if r.length - 1 not in self.score:
                raise MatchStateError(
                    f"Crawford game flag set but neither player is 1-away (score {self.score}, length {r.length})"
                )
            if cv != 1 or self.offered_by is not None:
                raise MatchStateError("no doubling in the Crawford game")

    # -- queries -----------------------------------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        """Match play: a player has reached the match length (money play: never)."""
        return not self.rules.is_money and max(self.score) >= self.rules.length

    @property
    def winner(self) -> int | None:
        """The player who won the match, or None."""
        if not self.is_over:
            return None
        return 0 if self.score[0] >= self.rules.length else 1

    @property
    def post_crawford(self) -> bool:
        """A match game after the Crawford game (someone 1-away, Crawford game already played or rule off)."""
        r = self.rules
        return (not r.is_money) and not self.crawford and (r.length - 1 in self.score) and not self.is_over

    def can_double(self, player: int) -> bool:
        """Whether the rules let ``player`` (0/1), about to roll, offer a double now.

        No pending double, the match not over, the cube centred or ``player``'s, not the Crawford game, and the
        doubled cube within the money cube limit.  (A double that cannot gain anything, such as the
        post-Crawford leader's, is legal; :meth:`CubeState.may_double` is the cube policy's test.)
        """
        if player not in (0, 1):
            raise MatchStateError(f"player {player!r} must be 0 or 1")
        if self.offered_by is not None or self.is_over or self.crawford:
            return False
        if self.cube_owner not in (CENTRED, player):
            return False
        lim = self.rules.cube_limit
        return lim is None or 2 * self.cube_value <= lim

    def cube_state(self, player: int) -> CubeState:
        """The :class:`bgai.game.cube.CubeState` seen by ``player`` (as the side on roll), for cube decisions.

        Raises:
            MatchStateError: the match is over.
        """
        if self.is_over:
            raise MatchStateError("the match is over")
        owner = CENTRED if self.cube_owner == CENTRED else (0 if self.cube_owner == player else 1)
        r = self.rules
        if r.is_money:
            return CubeState(
                cube_value=self.cube_value, owner=owner, jacoby=r.jacoby, cube_limit=r.cube_limit
            )
        score = (self.score[player], self.score[1 - player])
        return CubeState(
            cube_value=self.cube_value,
            owner=owner,
            match_length=r.length,
            score=score,
            crawford=self.crawford,
            jacoby=False,
            met_name=r.met_name,
        )

    def doubling_state(self, player: int) -> CubeState | None:
        """The cube state of ``player`` (about to roll) when he may double and the cube has a use for him, else None.

        :meth:`can_double` (the rules) and :meth:`CubeState.may_double` (a double that can gain something): the
        test before a cube policy is asked to double, in :func:`bgai.game.play.play` and :mod:`bgai.game.table`.
        """
        if not self.can_double(player):
            return None
        state = self.cube_state(player)
        return state if state.may_double() else None

    # -- rules ------------------------------------------------------------------------------------------------
    def offer_double(self, player: int) -> "Match":
        """``player`` doubles (before rolling).

        Raises:
            MatchStateError: the rules do not allow it (see :meth:`can_double`), with the reason.
        """
        if not self.can_double(player):
            if self.offered_by is not None:
                why = "a double is already pending"
            elif self.is_over:
                why = "the match is over"
            elif self.crawford:
                why = "no doubling in the Crawford game"
            elif self.cube_owner not in (CENTRED, player):
                why = f"player {1 - player} owns the cube"
            else:
                why = f"the cube would exceed the cube limit {self.rules.cube_limit}"
            raise MatchStateError(f"player {player} may not double: {why}")
        return replace(self, offered_by=player)

    def take(self) -> "Match":
        """The opponent takes the pending double: the cube is doubled and owned by the taker.

        Raises:
            MatchStateError: no double pending.
        """
        if self.offered_by is None:
            raise MatchStateError("no double to take")
        return replace(self, cube_value=2 * self.cube_value, cube_owner=1 - self.offered_by, offered_by=None)

    def pass_double(self) -> tuple["Match", GameOutcome]:
        """The opponent passes: the doubler wins the cube value before the double; the next game starts.

        Returns:
            ``(match at the start of the next game, outcome)``.

        Raises:
            MatchStateError: no double pending.
        """
        if self.offered_by is None:
            raise MatchStateError("no double to pass")
        out = GameOutcome(
            winner=self.offered_by, points=self.cube_value, kind=0, cube_value=self.cube_value, passed=True
        )
        return self._next_game(out), out

    def answer_double(self, took: bool) -> tuple["Match", GameOutcome | None]:
        """The opponent of the pending double's doubler takes (``took``: :meth:`take`) or passes
        (:meth:`pass_double`).

        Returns:
            ``(match, None)`` after a take; ``(match at the start of the next game, outcome)`` after a pass.

        Raises:
            MatchStateError: no double pending.
        """
        if took:
            return self.take(), None
        return self.pass_double()

    def end_game(self, winner: int, kind: int) -> tuple["Match", GameOutcome]:
        """The game was played to the end: ``winner`` bore off all checkers with result ``kind``.

        Args:
            winner: player 0 or 1.
            kind: 1 single, 2 gammon, 3 backgammon (:func:`bgai.core.board.result_kind`).

        Returns:
            ``(match at the start of the next game, outcome)``; points = cube x kind, except money play with the
            Jacoby rule and a centred cube, where every win scores 1.

        Raises:
            MatchStateError: a pending double, a bad winner or kind, the match already over.
        """
        if self.offered_by is not None:
            raise MatchStateError("a double is pending: take or pass first")
        if winner not in (0, 1):
            raise MatchStateError(f"winner {winner!r} must be player 0 or 1")
        if kind not in (SINGLE, GAMMON, BACKGAMMON):
            raise MatchStateError(f"result kind {kind!r} must be 1 (single), 2 (gammon) or 3 (backgammon)")
        if self.is_over:
            raise MatchStateError("the match is already over")
        counted = kind
        if self.rules.is_money and self.rules.jacoby and self.cube_owner == CENTRED:
            counted = SINGLE
        out = GameOutcome(
            winner=int(winner), points=self.cube_value * counted, kind=int(kind), cube_value=self.cube_value,
            passed=False,
        )
        return self._next_game(out), out

    def _next_game(self, out: GameOutcome) -> "Match":
        score = list(self.score)
        score[out.winner] += out.points
        r = self.rules
        crawford, done = False, self.crawford_done
        if not r.is_money:
            if self.crawford:
                done = True
            elif r.crawford and not done and max(score) < r.length and (r.length - 1) in score:
                crawford = True
        return Match(
            rules=r,
            score=(score[0], score[1]),
            cube_value=1,
            cube_owner=CENTRED,
            crawford=crawford,
            crawford_done=done,
            offered_by=None,
            games=self.games + 1,
        )

    # -- cube states ------------------------------------------------------------------------------------------
    @classmethod
    def from_cube_state(cls, state: CubeState, player: int = 0, *, double_offered: bool = False) -> "Match":
        """The match of a :class:`~bgai.core.cube_state.CubeState` seen by ``player`` (0/1, the side on roll).

        Money play: the state's Jacoby rule and cube limit, score 0-0.  Match play: its length, score, Crawford
        game and table; ``crawford_done`` is inferred (a side 1-away outside the Crawford game: the Crawford game
        has been played).  ``double_offered``: ``player`` has doubled and awaits the answer.

        Raises:
            MatchStateError: a state the rules refuse (e.g. a turned cube in the Crawford game).
        """
        if player not in (0, 1):
            raise MatchStateError(f"player {player!r} must be 0 or 1")
        if state.is_money:
            rules = MatchRules.money(jacoby=state.jacoby, cube_limit=state.cube_limit)
            score = (0, 0)
        else:
            rules = MatchRules.match(state.match_length, met_name=state.met_name)
            score = state.score if player == 0 else (state.score[1], state.score[0])
        length = state.match_length
        owner = CENTRED if state.owner == CENTRED else (player if state.owner == 0 else 1 - player)
        return cls(
            rules=rules,
            score=score,
            cube_value=state.cube_value,
            cube_owner=owner,
            crawford=state.crawford,
            crawford_done=bool(length) and not state.crawford and (length - 1) in state.score,
            offered_by=player if double_offered else None,
        )

    # -- Match ID ---------------------------------------------------------------------------------------------
    def to_match_state(self, player_on_roll: int, *, dice: tuple[int, int] = (0, 0)) -> MatchState:
        """The :class:`bgai.formats.match_id.MatchState` of this state with ``player_on_roll`` to act
        (:meth:`bgai.formats.match_id.MatchState.from_cube_state` of :meth:`cube_state`).

        A pending double is written as GNU Backgammon does: the doubler on roll, the turn with the taker.  A money
        session's running score and its cube limit are no part of a Match ID; a match writes the Jacoby bit off.

        Raises:
            MatchStateError: the match is over, ``player_on_roll`` not 0/1.
            MatchIDError: dice with a pending double.
        """
        if player_on_roll not in (0, 1):
            raise MatchStateError(f"player {player_on_roll!r} must be 0 or 1")
        doubler = self.offered_by
        player = player_on_roll if doubler is None else doubler
        state = self.cube_state(player)
        return MatchState.from_cube_state(state, player_on_roll=player, dice=dice, double_offered=doubler is not None)

def match_from_match_id(match_id, board: np.ndarray | None = None) -> tuple[Match, int]:
    """Read the cube and match state of a GNU Backgammon Match ID.

    Args:
        match_id: the 12-character Match ID, or a decoded :class:`bgai.formats.match_id.MatchState`.
        board: optional ``(2, 25)`` position of the Position ID that goes with it (from the view of the Match
            ID's player on roll), checked for consistency.

    Returns:
        ``(match, player_on_roll)``.  ``crawford_done`` is inferred: a side 1-away outside the Crawford game
        means the Crawford game has been played.

    Raises:
        MatchIDError: a malformed Match ID, or one inconsistent with itself or the position: a centred cube
            above 1, a turned cube or a pending double in the Crawford game, a pending double with the turn not
            on the taker, dice rolled while a double is pending, a game in play on a finished position.
    """

    ms = match_id if isinstance(match_id, MatchState) else decode_match_id(match_id)
    where = f"Match ID {match_id!r}" if isinstance(match_id, str) else "match state"
    ms.check(board, where=where)
    length = ms.match_length
    if length == 0:
        rules = MatchRules.money(jacoby=ms.jacoby)
        score = (0, 0)
        crawford_done = False
    else:
        rules = MatchRules.match(length)
        score = ms.score
        crawford_done = (not ms.crawford) and (length - 1) in score
    try:
        match = Match(
            rules=rules,
            score=score,
            cube_value=ms.cube_value,
            cube_owner=ms.cube_owner,
            crawford=ms.crawford,
            crawford_done=crawford_done,
            offered_by=ms.player_on_roll if ms.double_offered else None,
        )
    except MatchStateError as exc:
        raise MatchIDError(f"{where}: {exc}") from None
    return match, ms.player_on_roll


def cube_state_from_match_id(match_id, board: np.ndarray | None = None) -> CubeState:
    """The :class:`bgai.game.cube.CubeState` of the Match ID's player on roll (the doubler, when a double is pending):
    :meth:`bgai.formats.match_id.MatchState.to_cube_state` after :meth:`~bgai.formats.match_id.MatchState.check`.

    Args:
        match_id: the 12-character Match ID, or a decoded :class:`bgai.formats.match_id.MatchState`.
        board: optional ``(2, 25)`` position that goes with it (the player on roll's view), checked with it.

    Raises:
        MatchIDError: see :func:`match_from_match_id` (a finished match too); also a match longer than the
            match equity table.
    """
    ms = match_id if isinstance(match_id, MatchState) else decode_match_id(match_id)
    where = f"Match ID {match_id!r}" if isinstance(match_id, str) else "match state"
    state = ms.check(board, where=where).to_cube_state(where=where)
    met = None if state.is_money else met_for(state)
    if met is not None and state.match_length > met.length:
        raise MatchIDError(
            f"{where}: a {state.match_length}-point match is longer than the {met.name} table ({met.length})"
        )
    return state
