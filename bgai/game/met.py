"""Match equity tables (MET): the chance of winning a match from a score, before a game starts.

A match equity table gives, for a player who needs ``a`` more points against an opponent who needs ``b``, the
probability of winning the match ("match-winning chance", MWC, a probability in [0, 1]) at the start of a game
with the cube at 1.  Scores are written as points *away* (needed to win): at 7-point match score 4-2 the
players are 3-away and 5-away.

Two tables (GNU Backgammon's layout, source ``matchequity.c`` of GNU Backgammon):

* the **pre-Crawford** table ``pre_crawford[a-1][b-1]`` for games before and including the Crawford game; its
  row/column for 1-away holds the chances at the start of the Crawford game;
* the **post-Crawford** table ``post_crawford[b-1]``: the trailer's chance, ``b``-away against a 1-away leader,
  once the Crawford game has been played (the trailer doubles at once; the leader may drop for free).

The shipped table is **Kazaross-XG2** (Neil Kazaross, 2011; XG rollouts to 9 points, GNU Backgammon rollouts to
15, extrapolated to 25), the de-facto standard and GNU Backgammon's default table; its numbers are the public
figures of GNU Backgammon's data file ``met/Kazaross-XG2.xml``, stored unchanged with the copyright notice in
``bgai/data/met_kazaross_xg2.json``.

**Extension to 64 points.**  Like GNU Backgammon (``InitMatchEquity`` in ``matchequity.c``, which extends every
table it loads to ``MAXSCORE`` = 64 points), :func:`load_met` extends a table shorter than
:data:`MAX_MATCH_LENGTH` when it is loaded (:meth:`MatchEquityTable.extended`); the table's own entries are kept
and :attr:`MatchEquityTable.native_length` says how far they go:

* pre-Crawford, David Montgomery's normal-distribution model (gnubg's ``ExtendMET``): for a player ``a``-away
  against ``b``-away with ``a >= b`` and ``a`` beyond the table, the match is ``(a + b) / 2`` games of a
  random walk whose per-game standard deviation is ``s(n)`` for a player ``n``-away (``s`` = 1.24, 1.27, 1.47,
  1.50, 1.60, 1.61, 1.66, 1.68, 1.70, 1.72 for n = 1..10, 1.77 above), so
  ``sigma = sqrt(s(a)^2 + s(b)^2) * sqrt((a + b) / 2)`` and the trailer's chance is the normal area from
  ``a - b`` to ``6 sigma`` (0 when ``6 sigma <= a - b``); the other half is ``1 -`` that.  Every entry of a row
  beyond the table is computed this way, including its columns inside the table.  Values are rounded to single
  precision, as gnubg stores them.
* post-Crawford, Zadeh's recursion (N. Zadeh, Management Science 23, 986 (1977); gnubg's
  ``initPostCrawfordMET`` with gammon rate ``GAMMONRATE`` = 0.25): the trailer ``n``-away wins
  ``0.25 * 0.5 * P(n - 4) + 0.75 * 0.5 * P(n - 2)`` (``P`` = 1 below 1-away; less 0.015 at 2-away and 0.004 at
  4-away, the free drops, which only a table shorter than 4 points leaves to the formula), starting at ``n`` =
  the table length (gnubg ignores the table's own last post-Crawford entry: a post-Crawford trailer in an
  ``L``-point match is at most ``(L - 1)``-away).

``tests/test_formats_defects.py`` checks the extended table against ``gnubg -t``'s ``show matchequitytable 64``.
Longer matches raise :class:`~bgai.errors.MatchStateError`.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from bgai.errors import MatchStateError

__all__ = ["MatchEquityTable", "load_met", "DEFAULT_MET", "MAX_MATCH_LENGTH"]

#: Name of the table used when none is given.
DEFAULT_MET = "kazaross-xg2"

#: Longest match (points) a loaded table covers: GNU Backgammon's ``MAXSCORE``.
MAX_MATCH_LENGTH = 64

# gnubg's ExtendMET: per-game standard deviation of a player n-away (index n; 1.77 beyond 10).
_STDDEV = (0.0, 1.24, 1.27, 1.47, 1.50, 1.60, 1.61, 1.66, 1.68, 1.70, 1.72)
_STDDEV_FAR = 1.77
# gnubg's GAMMONRATE: the post-Crawford trailer's gammon rate used to extend the post-Crawford table, and the
# free-drop values InitMatchEquity passes with it (taken off the 2-away and 4-away entries).
_POST_CRAWFORD_GAMMON_RATE = 0.25
_FREE_DROP_2 = 0.015
_FREE_DROP_4 = 0.004

_BUILTIN = {"kazaross-xg2": "met_kazaross_xg2.json"}


@dataclass(frozen=True, eq=False)
class MatchEquityTable:
    """A match equity table (pre- and post-Crawford), read-only.

    Attributes:
        name: short name, e.g. ``'Kazaross-XG2'``.
        pre_crawford: ``(L, L)`` float64; ``[a-1, b-1]`` = MWC of a player ``a``-away against ``b``-away, in a
            game that is not post-Crawford (the 1-away row/column is the Crawford game).
        post_crawford: ``(L,)`` float64; ``[b-1]`` = MWC of the trailer ``b``-away against a 1-away leader in a
            post-Crawford game (``[0]`` = 0.5, double match point).
        source: where the numbers come from.
        native_length: how many points of the table come from its source; entries beyond were computed by
            :meth:`extended` (0 when constructing: the whole table is native).
    """

    name: str
    pre_crawford: np.ndarray
    post_crawford: np.ndarray
    source: str = ""
    native_length: int = 0

    def __post_init__(self) -> None:
        pre = np.array(self.pre_crawford, dtype=np.float64)
        post = np.array(self.post_crawford, dtype=np.float64)
        if pre.ndim != 2 or pre.shape[0] != pre.shape[1] or pre.shape[0] < 1:
            raise MatchStateError(f"MET {self.name!r}: pre-Crawford table must be square, got shape {pre.shape}")
        if post.shape != (pre.shape[0],):
            raise MatchStateError(
                f"MET {self.name!r}: post-Crawford table must have {pre.shape[0]} entries, got shape {post.shape}"
            )
        if not (np.all((pre >= 0) & (pre <= 1)) and np.all((post >= 0) & (post <= 1))):
            raise MatchStateError(f"MET {self.name!r}: match-winning chances must lie in [0, 1]")
        pre.setflags(write=False)
        post.setflags(write=False)
        object.__setattr__(self, "pre_crawford", pre)
        object.__setattr__(self, "post_crawford", post)
        native = self.native_length
        if isinstance(native, bool) or not isinstance(native, (int, np.integer)) or not 0 <= native <= pre.shape[0]:
            raise MatchStateError(f"MET {self.name!r}: native length {native!r} must be 0..{pre.shape[0]}")
        object.__setattr__(self, "native_length", int(native) or pre.shape[0])

    @property
    def length(self) -> int:
        """The longest match (in points) the table covers."""
        return int(self.pre_crawford.shape[0])

    def extended(self, length: int = MAX_MATCH_LENGTH) -> "MatchEquityTable":
        """This table extended to ``length`` points the way GNU Backgammon extends its tables.

        Pre-Crawford entries beyond the table come from gnubg's ``ExtendMET`` (David Montgomery's normal model),
        post-Crawford entries from gnubg's ``initPostCrawfordMET`` (Zadeh's recursion, gammon rate 0.25); see the
        module docstring.  A table already ``length`` points or longer is returned unchanged.

        Args:
            length: points to cover, at least 1 (GNU Backgammon: 64).

        Returns:
            A new :class:`MatchEquityTable` with ``native_length`` = this table's ``native_length``.

        Raises:
            MatchStateError: ``length`` not a positive integer.
        """
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
            raise MatchStateError(f"MET length {length!r} must be a positive integer")
        n = self.length
        if length <= n:
            return self
        pre = np.zeros((length, length), dtype=np.float64)
        pre[:n, :n] = self.pre_crawford
        for i in range(n, length):  # gnubg ExtendMET: rows beyond the table, all columns up to the diagonal
            a = i + 1
            s0 = _STDDEV[a] if a <= 10 else _STDDEV_FAR
            for j in range(i + 1):
                b = j + 1
                s1 = _STDDEV[b] if b <= 10 else _STDDEV_FAR
                sigma = math.hypot(s0, s1) * math.sqrt((a + b) / 2.0)
                if 6.0 * sigma > a - b:
                    area = _normal_area(a - b, 6.0 * sigma, sigma)
                else:
                    area = 0.0
                pre[i, j] = float(np.float32(area))
        for i in range(length):  # the other half: 1 - the mirrored entry
            for j in range(max(n, i + 1), length):
                pre[i, j] = 1.0 - pre[j, i]
        post = np.zeros(length, dtype=np.float64)
        post[: n - 1] = self.post_crawford[: n - 1]
        g = _POST_CRAWFORD_GAMMON_RATE
        for i in range(n - 1, length):  # gnubg initPostCrawfordMET from iStart = n - 1
            four = post[i - 4] if i >= 4 else 1.0
            two = post[i - 2] if i >= 2 else 1.0
            value = np.float32(g * 0.5 * four + (1.0 - g) * 0.5 * two)
            if i == 1:  # gnubg: the leader's free drop at 1-away vs 2-away ...
                value -= np.float32(_FREE_DROP_2)
            elif i == 3:  # ... and vs 4-away (reached only by tables shorter than 4 points)
                value -= np.float32(_FREE_DROP_4)
            post[i] = float(value)
        return MatchEquityTable(
            name=self.name,
            pre_crawford=pre,
            post_crawford=post,
            source=self.source,
            native_length=self.native_length,
        )

    def _check_away(self, away: int, who: str) -> int:
        if isinstance(away, bool) or not isinstance(away, (int, np.integer)):
            raise MatchStateError(f"{who} points away must be an integer, got {away!r}")
        away = int(away)
        if away < 1:
            raise MatchStateError(f"{who} is {away}-away: a player still in the match needs at least 1 point")
        if away > self.length:
            raise MatchStateError(
                f"{who} is {away}-away but the {self.name} table covers matches up to {self.length} points"
            )
        return away

    def mwc(self, away_me: int, away_opp: int, *, post_crawford: bool = False) -> float:
        """Match-winning chance at the start of a game at this score, cube at 1.

        Args:
            away_me: points the player needs (>= 1).
            away_opp: points the opponent needs (>= 1).
            post_crawford: the game is post-Crawford (one side 1-away, the Crawford game already played).

        Returns:
            Probability in [0, 1].

        Raises:
            MatchStateError: an away value below 1 or beyond the table; ``post_crawford`` with no 1-away side.
        """
        a = self._check_away(away_me, "player")
        b = self._check_away(away_opp, "opponent")
        if post_crawford:
            if a != 1 and b != 1:
                raise MatchStateError(f"post-Crawford needs a 1-away player, got {a}-away vs {b}-away")
            return 1.0 - float(self.post_crawford[b - 1]) if a == 1 else float(self.post_crawford[a - 1])
        return float(self.pre_crawford[a - 1, b - 1])

    def mwc_after(self, away_me: int, away_opp: int, points: int, *, crawford: bool = False) -> float:
        """Match-winning chance after the current game ends with ``points`` to the player (negative: lost).

        This is GNU Backgammon's ``getME``: the next game is post-Crawford when this game is the Crawford game
        or a player is already 1-away, otherwise it is a pre-Crawford game (or the Crawford game).

        Args:
            away_me, away_opp: points needed now (>= 1).
            points: points the player wins (> 0) or loses (< 0) in this game (cube x result).
            crawford: this game is the Crawford game.

        Returns:
            Probability in [0, 1]; 1.0 / 0.0 when the result ends the match.
        """
        a = self._check_away(away_me, "player")
        b = self._check_away(away_opp, "opponent")
        return _mwc_after(self.pre_crawford, self.post_crawford, a, b, int(points), bool(crawford))


def _normal_area(lo: float, hi: float, sigma: float) -> float:
    """Area under the normal curve with mean 0 and deviation ``sigma`` from ``lo`` to ``hi`` (gnubg's
    ``NormalDistArea``)."""
    return (math.erf(hi / sigma / math.sqrt(2.0)) - math.erf(lo / sigma / math.sqrt(2.0))) / 2.0


def _mwc_after(pre: np.ndarray, post: np.ndarray, a: int, b: int, points: int, crawford: bool) -> float:
    na = a - max(points, 0)
    nb = b - max(-points, 0)
    if na <= 0:
        return 1.0
    if nb <= 0:
        return 0.0
    if crawford or a == 1 or b == 1:
        # the next game is post-Crawford
        return 1.0 - float(post[nb - 1]) if na == 1 else float(post[na - 1])
    return float(pre[na - 1, nb - 1])


def load_met(name_or_path: str = DEFAULT_MET) -> MatchEquityTable:
    """Load a match equity table by name (``'kazaross-xg2'``) or from a JSON file in the same format.

    The JSON file holds ``name``, ``source``, ``pre_crawford`` (L x L list) and ``post_crawford`` (L list); see
    ``bgai/data/met_kazaross_xg2.json``.  Like GNU Backgammon, the table is extended to
    :data:`MAX_MATCH_LENGTH` (64) points (:meth:`MatchEquityTable.extended`); ``native_length`` is L.  Built-in
    tables are cached.

    Raises:
        MatchStateError: unknown name, unreadable or malformed file.
    """
    key = str(name_or_path)
    if key.lower() in _BUILTIN:
        return _load_builtin(key.lower())
    if not os.path.isfile(key):
        raise MatchStateError(
            f"unknown match equity table {key!r}: not a built-in ({', '.join(sorted(_BUILTIN))}) nor a file"
        )
    try:
        with open(key, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise MatchStateError(f"cannot read match equity table {key!r}: {exc}") from None
    return _from_json(data, key).extended(MAX_MATCH_LENGTH)


@lru_cache(maxsize=None)
def _load_builtin(name: str) -> MatchEquityTable:
    text = resources.files("bgai.data").joinpath(_BUILTIN[name]).read_text(encoding="utf-8")
    return _from_json(json.loads(text), name).extended(MAX_MATCH_LENGTH)


def _from_json(data: object, where: str) -> MatchEquityTable:
    if not isinstance(data, dict) or "pre_crawford" not in data or "post_crawford" not in data:
        raise MatchStateError(f"match equity table {where!r} lacks 'pre_crawford'/'post_crawford'")
    try:
        return MatchEquityTable(
            name=str(data.get("name", where)),
            pre_crawford=np.asarray(data["pre_crawford"], dtype=np.float64),
            post_crawford=np.asarray(data["post_crawford"], dtype=np.float64),
            source=str(data.get("source", "")),
        )
    except (TypeError, ValueError) as exc:
        if isinstance(exc, MatchStateError):
            raise
        raise MatchStateError(f"match equity table {where!r} is malformed: {exc}") from None
