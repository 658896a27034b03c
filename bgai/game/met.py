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
``bgai/data/met_kazaross_xg2.json``.  It covers matches up to 25 points; longer matches raise
:class:`~bgai.errors.MatchStateError` (GNU Backgammon extends its tables with a normal-distribution model; bgai
does not).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from bgai.errors import MatchStateError

__all__ = ["MatchEquityTable", "load_met", "DEFAULT_MET"]

#: Name of the table used when none is given.
DEFAULT_MET = "kazaross-xg2"

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
    """

    name: str
    pre_crawford: np.ndarray
    post_crawford: np.ndarray
    source: str = ""

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

    @property
    def length(self) -> int:
        """The longest match (in points) the table covers."""
        return int(self.pre_crawford.shape[0])

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
    ``bgai/data/met_kazaross_xg2.json``.  Built-in tables are cached.

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
    return _from_json(data, key)


@lru_cache(maxsize=None)
def _load_builtin(name: str) -> MatchEquityTable:
    text = resources.files("bgai.data").joinpath(_BUILTIN[name]).read_text(encoding="utf-8")
    return _from_json(json.loads(text), name)


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
