"""The :class:`CubeState` value type: the doubling cube and the score, seen from the side on roll.

One state for every part of bgai: the format records carry it (``.cube_state`` of
:class:`bgai.formats.match_id.MatchState`, :class:`bgai.formats.xgid.XGIDState` and
:class:`bgai.formats.fibs.FIBSState`, each with a ``from_cube_state`` constructor), the request parser
(:mod:`bgai.formats.request`) reads it from a Match ID, an XGID or a FIBS board, the cube and match logic
(:mod:`bgai.game.cube`, :mod:`bgai.game.match`) and the analysis functions (:mod:`bgai.analysis.api`) take it.
It only checks itself against the rules; everything that needs a match equity table is in :mod:`bgai.game.cube`.

Rules checked (the standard rules of backgammon, as GNU Backgammon applies them): the cube is a power of two,
a centred cube is on 1, a match score is below the match length, the Crawford game has a side 1-away and
exists only in match play, money play has no score, the cube is within the money-play cube limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bgai.errors import BgaiError, MatchStateError
from bgai.util.integers import is_int

__all__ = ["CubeState", "CENTRED", "ME", "OPPONENT", "DEFAULT_MET"]

#: Cube owner values, relative to the side on roll.
CENTRED, ME, OPPONENT = -1, 0, 1

#: Name of the match equity table a state uses unless told otherwise (the one :mod:`bgai.game.met` loads by
#: default; ``tests/test_request.py`` checks that the two agree).
DEFAULT_MET = "kazaross-xg2"


@dataclass(frozen=True)
class CubeState:
    """Cube and score seen from the **side on roll** ("me"), before it rolls.

    Attributes:
        cube_value: present cube value, a power of two >= 1.
        owner: :data:`CENTRED` (-1), :data:`ME` (0, the side on roll) or :data:`OPPONENT` (1).
        match_length: points to win the match; 0 = money game.
        score: ``(side on roll, opponent)`` points won so far (match play).
        crawford: this game is the Crawford game (match play; a side is 1-away).
        jacoby: Jacoby rule (money play only): gammons count only after the cube has been turned.
        cube_limit: money play: the highest cube value allowed (a power of two), or None for no limit.
        met_name: match equity table name or JSON path (:func:`bgai.game.met.load_met`; the table itself is
            :func:`bgai.game.cube.met_for` of the state).

    Raises:
        MatchStateError: a cube that is not a power of two, an owner other than -1/0/1, a negative or too long
            match, a score not below the match length, a Crawford flag with no 1-away side or in money play, a
            cube limit that is not a power of two or below the cube.
    """

    cube_value: int = 1
    owner: int = CENTRED
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = True
    cube_limit: int | None = None
    met_name: str = field(default=DEFAULT_MET, compare=True)

    def __post_init__(self) -> None:
        self._check_cube()
        score = self._check_length_and_score()
        object.__setattr__(self, "score", (int(score[0]), int(score[1])))
        if self.match_length > 0:
            self._check_match_score(score)
        else:
            self._check_money_score(score)
        self._check_cube_limit()

    def _check_cube(self) -> None:
        """Cube value and owner."""
        cv = self.cube_value
        if not is_int(cv) or cv < 1 or (int(cv) & (int(cv) - 1)):
            raise MatchStateError(f"cube value {cv!r} is not a power of two (1, 2, 4, 8, ...)")
        if not is_int(self.owner) or self.owner not in (CENTRED, ME, OPPONENT):
            raise MatchStateError(f"cube owner {self.owner!r} must be -1 (centred), 0 (side on roll) or 1 (opponent)")
        if self.owner == CENTRED and cv != 1:
            raise MatchStateError(f"a centred cube must be on 1, not {cv} (a turned cube has an owner)")

    def _check_length_and_score(self) -> tuple:
        """Match length and score types; returns the score as given, as a tuple."""
        ml = self.match_length
        if not is_int(ml) or ml < 0:
            raise MatchStateError(f"match length {ml!r} must be 0 (money) or a positive number of points")
        score = tuple(self.score)
        if len(score) != 2 or not all(is_int(s) and s >= 0 for s in score):
            raise MatchStateError(f"score {self.score!r} must be two non-negative integers")
        return score

    def _check_match_score(self, score: tuple) -> None:
        """Match play: the score below the match length, a Crawford game with a side 1-away."""
        ml = self.match_length
        if max(score) >= ml:
            raise MatchStateError(f"score {score[0]}-{score[1]} is not below the match length {ml}")
        if self.crawford and ml - 1 not in score:
            raise MatchStateError(
                f"Crawford game flag set but neither side is 1-away (score {score[0]}-{score[1]}, length {ml})"
            )

    def _check_money_score(self, score: tuple) -> None:
        """Money play: no Crawford game, no score."""
        if self.crawford:
            raise MatchStateError("Crawford game flag set in a money game (match length 0)")
        if score != (0, 0):
            raise MatchStateError(f"money game with a score {score}: give match_length for match play")

    def _check_cube_limit(self) -> None:
        """A cube limit is a power of two, not below the cube."""
        if self.cube_limit is not None:
            lim = self.cube_limit
            if not is_int(lim) or lim < 1 or (int(lim) & (int(lim) - 1)):
                raise MatchStateError(f"cube limit {lim!r} is not a power of two")
            if lim < self.cube_value:
                raise MatchStateError(f"cube value {self.cube_value} is above the cube limit {lim}")

    @classmethod
    def of_format(
        cls, error: type[BgaiError], where: str, *, cube_value: int, owner: int, match_length: int,
        score: tuple[int, int], crawford: bool, jacoby: bool, cube_limit: int | None = None,
    ) -> "CubeState":
        """The state of one position format's cube and score fields, already seen from the side on roll.

        Money play keeps the Jacoby flag and drops the score (a money session's running total is no part of the
        state); match play keeps the score and has no Jacoby rule (a money-play rule: GNU Backgammon's
        ``NewGame`` in ``play.c`` starts every match game with ``fJacoby`` off).

        Raises:
            error: ``"<where>: <what>"`` for a state no game can have (the checks of :class:`CubeState`).
        """
        money = match_length == 0
        try:
            return cls(
                cube_value=cube_value,
                owner=owner,
                match_length=match_length,
                score=(0, 0) if money else tuple(score),
                crawford=crawford,
                jacoby=bool(jacoby) if money else False,
                cube_limit=cube_limit,
            )
        except MatchStateError as exc:
            raise error(f"{where}: {exc}") from None

    # -- derived -----------------------------------------------------------------------------------------------
    @property
    def is_money(self) -> bool:
        """True for money play."""
        return self.match_length == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points needed ``(side on roll, opponent)`` (match play)."""
        return self.match_length - self.score[0], self.match_length - self.score[1]

    @property
    def post_crawford(self) -> bool:
        """A match game after the Crawford game: one side 1-away, not the Crawford game."""
        return self.match_length > 0 and not self.crawford and (self.match_length - 1) in self.score

    def swapped(self) -> "CubeState":
        """The same state seen by the opponent."""
        owner = self.owner if self.owner == CENTRED else 1 - self.owner
        return replace(self, owner=owner, score=(self.score[1], self.score[0]))

    def doubled(self) -> "CubeState":
        """The state after the side on roll doubles and the opponent takes (cube x2, owned by the opponent)."""
        return replace(self, cube_value=2 * self.cube_value, owner=OPPONENT)

    def may_double(self) -> bool:
        """Whether the side on roll has a cube to use: GNU Backgammon's ``GetDPEq`` availability.

        Money: cube centred or owned by the side on roll, and doubling stays within the cube limit.  Match: also
        not the Crawford game, the present cube does not already win the side the match, and it is not the
        post-Crawford leader.  (The rules allow a pointless double; bgai's cube policy never makes one.)
        """
        if self.owner == OPPONENT:
            return False
        if self.is_money:
            return self.cube_limit is None or 2 * self.cube_value <= self.cube_limit
        if self.crawford:
            return False
        if self.score[0] + self.cube_value >= self.match_length:
            return False
        if self.post_crawford and self.score[0] == self.match_length - 1:
            return False
        return True

    def cube_is_dead(self) -> bool:
        """Match play: the cube has no value (GNU Backgammon's ``fDoCubeful`` is false)."""
        if self.is_money:
            return False
        ml, (s0, s1), c = self.match_length, self.score, self.cube_value
        if s0 + c >= ml and s1 + c >= ml:
            return True
        if s0 == ml - 2 and s1 == ml - 2:
            return True
        return bool(self.crawford)
