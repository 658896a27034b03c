"""Backgammon play notation: format and parse, following GNU Backgammon.

Steps are ``(from, to, hit)`` single-die moves from the mover's view: ``from`` 1..24 or 25 for the bar, ``to``
1..24 or 0 for borne off, ``hit`` true when the step hits a blot (see :class:`bgai.core.movegen.Play`).

Standard notation (:func:`format_play`) follows GNU Backgammon's ``FormatMove`` (``drawboard.c``):

* steps are sorted by source point, highest first (then destination, highest first);
* the steps of one checker are joined into one move: ``24/18 18/13`` -> ``24/13``; an intermediate point is
  written only when the checker hit there: ``24/18*/13``;
* identical moves are counted: ``8/2 8/2`` -> ``8/2(2)``;
* ``bar`` for 25, ``off`` for 0, ``*`` after a point where a blot was hit (once per point).

So the opening 6-5 run is ``24/13``, 3-1 is ``8/5 6/5``, and two checkers entering with 4-4 on a blot on the
21-point (the first one hits) is ``bar/21*(2)``.

Plain notation (:func:`format_play_plain`) is GNU Backgammon's ``FormatMovePlain``, the format its external
player protocol uses (test vectors in ``tests/test_notation.py``): the single-die steps in playing order, bar =
25, off = 0, ``*`` after the first landing on a blot, no grouping, and a space after every step but a fourth,
so a play of fewer than four steps ends in a space (``'24/22 13/8 '``).

:func:`parse_play` reads what GNU Backgammon's ``ParseMove`` reads: points 1..25, ``bar``/``b`` (25),
``off``/``o``/``-``/``0`` (off), ``/`` between points, chained moves ``24/18/13``, repeat counts ``13/10(2)``,
``*`` and ``,`` optional; and matches the result against the legal plays of the position.
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

from bgai.errors import NotationError
from bgai.util.integers import parse_int

__all__ = ["NO_LEGAL_PLAY", "format_play", "format_play_plain", "parse_moves"]

#: How every front end words a roll with no legal play (the turn passes): ``bgai hint``, the terminal game, the
#: HTTP ``/api/plays`` answer (its ``note``) and the web page that shows it.
NO_LEGAL_PLAY = "no legal play"


def _pt(n: int) -> str:
    return "off" if n == 0 else "bar" if n == 25 else str(n)


def format_play(steps: Sequence[tuple]) -> str:
    """Standard notation of a play (GNU Backgammon's ``FormatMove`` conventions, see the module docstring).

    Args:
        steps: ``(from, to, hit)`` single-die steps (``(from, to)`` pairs are accepted: no hits).

    Returns:
        e.g. ``'24/18 13/10'``, ``'bar/22*'``, ``'6/off'``, ``'8/2(2)'``, ``'24/18*/13'``; ``''`` for no play.
    """
    if type(steps) is tuple:  # a Play's steps: the same few plays recur from position to position
        try:
            return _format_recurring(steps)
        except TypeError:  # an unhashable step (a list)
            pass
    return _format(steps)


def _format(steps: Sequence[tuple]) -> str:
    moves = sorted(((int(s[0]), int(s[1])) for s in steps), reverse=True)
    hits = {int(s[1]) for s in steps if len(s) > 2 and s[2]}
    starred: set[int] = set()
    return " ".join(_path_text(path, count, hits, starred) for path, count in _grouped(_chained(moves, hits)))


@functools.lru_cache(maxsize=8192)
def _format_recurring(steps: tuple) -> str:
    """:func:`_format` of hashable steps, remembered (equal steps -- equal numbers, equal truth of ``hit`` --
    have the same notation)."""
    return _format(steps)


def _chained(moves: list[tuple[int, int]], hits: set[int]) -> list[list[int]]:
    """Single-die moves (sorted from the highest point) joined into checker paths: a move that starts where an
    earlier one ends continues it; the intermediate point is kept only where a blot was hit."""
    paths: list[list[int] | None] = [[f, t] for f, t in moves]
    for i in range(len(paths)):
        for j in range(i, len(paths)):
            pi, pj = paths[i], paths[j]
            if pi is None or pj is None or i == j:
                continue
            if pi[-1] == pj[0]:
                if pi[-1] in hits:
                    pi.append(pj[-1])  # hit on the way: keep the intermediate point
                else:
                    pi[-1] = pj[-1]
                paths[j] = None
    return [p for p in paths if p is not None]


def _grouped(paths: list[list[int]]) -> list[list]:
    """``[path, count]`` of equal paths, in order of first appearance."""
    grouped: list[list] = []
    for p in paths:
        for g in grouped:
            if g[0] == p:
                g[1] += 1
                break
        else:
            grouped.append([p, 1])
    return grouped


def _path_text(path: list[int], count: int, hits: set[int], starred: set[int]) -> str:
    """``'24/18*/13'``, ``'8/2(2)'``: a ``*`` after each hit point not starred yet (``starred`` is updated)."""
    text = _pt(path[0])
    for mid in path[1:-1]:
        text += f"/{_pt(mid)}*"
        starred.add(mid)
    dest = path[-1]
    text += f"/{_pt(dest)}"
    if dest and dest in hits and dest not in starred:
        text += "*"
        starred.add(dest)
    if count > 1:
        text += f"({count})"
    return text


def format_play_plain(steps: Sequence[tuple]) -> str:
    """GNU Backgammon's plain step format (``FormatMovePlain``): ``'24/22 13/8 '``, ``'25/22* 6/0 '``.

    The steps in the given (playing) order, bar = 25, off = 0, ``*`` after the first landing on a hit blot, a
    space after each step except a fourth (so fewer than four steps leave a trailing space).
    """
    parts = []
    landed: set[int] = set()
    for i, s in enumerate(steps):
        frm, to = int(s[0]), int(s[1])
        hit = len(s) > 2 and bool(s[2])
        text = f"{frm}/{to}"
        if to and hit and to not in landed:
            text += "*"
        landed.add(to)
        parts.append(text + (" " if i < 3 else ""))
    return "".join(parts)


_TOKEN = re.compile(r"\s*(?:([0-9]+)|(bar|ba|b)|(off|of|o|-)|(/)|(\*)|(,)|\(([0-9]*)\)?|(\S))", re.IGNORECASE)
#: Largest repeat count ``(n)``: a play has at most 4 steps, gnubg's ParseMove at most 8 points.
_MAX_REPEAT = 8


def parse_moves(text: str) -> list[tuple[list[int], set[int]]]:
    """Parse play notation into checker moves, without a position.

    Returns:
        A list of ``(points, marked_hits)``: ``points`` the path of one checker move as written
        (``'24/18*/13'`` -> ``[24, 18, 13]``; bar 25, off 0), ``marked_hits`` the points followed by ``*``.
        Repeat counts are expanded (``'13/10(2)'`` -> two moves).

    Raises:
        NotationError: quoting the text, for anything GNU Backgammon's ``ParseMove`` would refuse (points
            outside 0..25, a leading/trailing/double ``/``, a bad repeat count (outside 1..8), a move from off
            or to the bar, more than 8 points...).  Numbers are ASCII digits, read by
            :func:`bgai.util.integers.parse_int`.
    """
    if not isinstance(text, str):
        raise NotationError(f"play notation must be a string, got {type(text).__name__}")
    parser = _MoveParser(text)
    moves = parser.parse()
    _check_moves(moves, parser.err)
    return moves


class _MoveParser:
    """Tokens -> checker moves; one method per kind of token (see :func:`parse_moves`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.shown = repr(text) if len(text) <= 80 else repr(text[:80]) + f"... ({len(text)} characters)"
        self.moves: list[tuple[list[int], set[int]]] = []
        self.cur: list[int] = []
        self.marks: set[int] = set()
        self.pending_slash = False

    def err(self, why: str) -> NotationError:
        return NotationError(f"cannot parse play {self.shown}: {why}")

    def close(self) -> None:
        if self.cur:
            if len(self.cur) < 2:
                raise self.err(f"'{_pt(self.cur[0])}' is not a move (expected from/to)")
            self.moves.append((self.cur, self.marks))
        self.cur, self.marks = [], set()

    def point(self, n: int) -> None:
        if self.cur and not self.pending_slash:
            self.close()
        self.cur.append(n)
        self.pending_slash = False

    def slash(self) -> None:
        if not self.cur or self.pending_slash:
            raise self.err("'/' must stand between two points")
        self.pending_slash = True

    def star(self) -> None:
        if not self.cur or self.pending_slash:
            raise self.err("'*' must follow a point")
        self.marks.add(self.cur[-1])

    def comma(self) -> None:
        if self.pending_slash:
            raise self.err("'/' must stand between two points")
        self.close()

    def repeat(self, rep: str | None, token: str) -> None:
        if self.pending_slash or len(self.cur) < 2:
            raise self.err("a repeat count '(n)' must follow a complete move")
        if not rep or not token.rstrip().endswith(")"):
            raise self.err("bad repeat count")
        count = parse_int(rep, "repeat count", self.err, 1, _MAX_REPEAT)
        path = self.cur
        self.close()
        for _ in range(count - 1):
            self.moves.append((list(path), set()))

    def parse(self) -> list[tuple[list[int], set[int]]]:
        pos = 0
        stripped = self.text.strip()
        while pos < len(stripped):
            m = _TOKEN.match(stripped, pos)
            if m is None or m.end() == pos:
                break
            pos = m.end()
            num, bar, off, slash, star, comma, rep, other = m.groups()
            if other is not None:
                raise self.err(f"unexpected character {other!r}")
            if num is not None or bar is not None or off is not None:
                self.point(25 if bar is not None else 0 if off is not None else parse_int(num, "point", self.err, 0, 25))
            elif slash is not None:
                self.slash()
            elif star is not None:
                self.star()
            elif comma is not None:
                self.comma()
            else:
                self.repeat(rep, m.group(0))
        if self.pending_slash:
            raise self.err("trailing '/'")
        self.close()
        if not self.moves:
            raise self.err("no move found")
        return self.moves


def _check_moves(moves: list[tuple[list[int], set[int]]], err) -> None:
    """Refuse what GNU Backgammon's ``ParseMove`` refuses: moves from off, to the bar, backwards, through the bar
    or off, more than 8 steps."""
    total_steps = 0
    for path, _ in moves:
        for a, b in zip(path, path[1:]):
            if a == 0:
                raise err("cannot move from off the board")
            if b == 25:
                raise err("cannot move to the bar")
            if b >= a:
                raise err(f"{_pt(a)}/{_pt(b)} does not move forward")
        for mid in path[1:-1]:
            if mid in (0, 25):
                raise err("bar or off cannot be an intermediate point")
        total_steps += len(path) - 1
    if total_steps > 8:
        raise err("too many moves")
