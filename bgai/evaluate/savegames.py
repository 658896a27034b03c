"""The games of a series saved as match files (``bgai eval --save-games DIR``), for GNU Backgammon or XG to analyse.

The game loop's records (:class:`bgai.game.play.GameRecord`: dice, afterstates and cube actions of every ply) are
turned into a :class:`bgai.formats.matchrecord.MatchRecord` by replaying them action by action with
:class:`bgai.formats.matchrecord.GameReplay` (each afterstate is matched to the legal play that reaches it, so
every play, cube action, score and result in a file is checked against the rules as it is built), then written
as GNU Backgammon / JellyFish ``.mat`` text (:func:`bgai.formats.mat.format_mat`) and / or GNU Backgammon
``.sgf`` (:func:`bgai.formats.sgf.format_sgf`): the same writers ``bgai play --save`` uses.

Files.  Player 0 (the left column of a ``.mat`` file, White in ``.sgf``) is agent A, player 1 agent B, named by
:func:`player_names`.  Money play (cubeless series and ``--cube`` sessions): a money session per block of up to
:data:`SESSION_GAMES` games of a work unit, ``games-NNNNNNNNN.mat`` (``NNNNNNNNN`` the series index of its first
game, counted from 0, as the series numbers its dice), holding those games in series order as games 1, 2, ...,
with the score carried from game to game as GNU Backgammon keeps it in a session; a cubeless series is written as
a session without the Jacoby rule in which nobody turns the cube (a game scores 1, 2 or 3 points, as the series counts it).  Matches
(``--match N``): one file per match, ``match-NNNNNN.mat`` (the match's index in the series, from 0).  The names
depend only on the series (seed, count, unit size), never on the workers or the backend, and so do the files:
the same series writes the same bytes.  The file's comment names the series (agents, seed, dice, the games or
match it holds).

Where the work runs.  A work unit builds its files' text itself (in the worker process or Ray actor that played
the games: :class:`SavedUnit`); the driver writes them atomically (:class:`GameSaver`, through
:func:`bgai.util.fileio.atomic_write_bytes`) as each unit's result arrives, so a series stopped by Ctrl-C keeps
the files of its finished units and never leaves a half-written one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bgai.errors import BgaiError
from bgai.formats.mat import format_mat
from bgai.formats.matchrecord import (
    Double,
    Drop,
    GameRecord,
    GameReplay,
    GameResult,
    MatchRecord,
    Move,
    Take,
)
from bgai.formats.sgf import format_sgf
from bgai.game import play as game_play
from bgai.game.match import MatchRules
from bgai.util.fileio import atomic_write_bytes

__all__ = ["FORMATS", "SESSION_GAMES", "SaveSpec", "SavedUnit", "GameSaver", "player_names", "to_match_record",
           "unit_files", "parse_formats"]

#: The formats ``--save-format`` takes, and the extension each writes.
FORMATS = {"mat": ".mat", "sgf": ".sgf"}

_WRITERS = {"mat": format_mat, "sgf": format_sgf}

#: Money games per saved session file at most.  Building a file replays and checks it a few times (the match-file
#: writers check the record too); the legal plays of its positions are memoised for up to 8192 positions
#: (:mod:`bgai.formats.matchrecord`), which 100 games (about 6,000 plies) stay within.
SESSION_GAMES = 100


def parse_formats(text: str) -> tuple[str, ...]:
    """``'mat'``, ``'sgf'`` or ``'mat,sgf'`` as a tuple of formats (order kept, duplicates dropped).

    Raises:
        BgaiError: an empty list or an unknown format.
    """
    out: list[str] = []
    for part in str(text).split(","):
        f = part.strip().lower()
        if f not in FORMATS:
            raise BgaiError(f"unknown match file format {part.strip()!r}: use mat, sgf or mat,sgf")
        if f not in out:
            out.append(f)
    if not out:
        raise BgaiError("no match file format given: use mat, sgf or mat,sgf")
    return tuple(out)


def _name(spec: str) -> str:
    base = os.path.basename(spec.split(":", 1)[0]) or spec
    rest = spec[len(spec.split(":", 1)[0]):]
    name = re.sub(r"[^A-Za-z0-9._=+-]+", "-", (base + rest).replace(":", "-")).strip("-")
    return name or "player"


def player_names(agent_a: str, agent_b: str) -> tuple[str, str]:
    """The players' names in saved files: each agent's spec with a checkpoint's folder dropped and every character
    other than letters, digits and ``. _ = + -`` written as ``-`` (``runs/x/best.pt:ply=1`` -> ``best.pt-ply=1``;
    a ``.mat`` file separates a name from the score with ``:``); ``-A`` / ``-B`` added when they are equal."""
    a, b = _name(agent_a), _name(agent_b)
    return (f"{a}-A", f"{b}-B") if a == b else (a, b)


@dataclass(frozen=True)
class SaveSpec:
    """What a work unit saves (small and picklable: it travels with each unit).

    Attributes:
        formats: ``('mat',)``, ``('sgf',)`` or both.
        names: the players' names (:func:`player_names`).
        rules: the rules played (cubeless series: money without the Jacoby rule).
        comment: the series, for the files' comment (e.g. ``'bgai eval pubeval vs racer, seed 7, duplicate dice'``).
    """

    formats: tuple[str, ...]
    names: tuple[str, str]
    rules: MatchRules
    comment: str


@dataclass
class SavedUnit:
    """A work unit's results with its match files.

    Attributes:
        results: what the unit returns without saving (:class:`~bgai.game.play.GameResults` or
            :class:`~bgai.game.play.PlayResults`, without per-game records).
        files: file name -> text, in the order they are to be written.
        games: games in the files.
    """

    results: Any
    files: dict[str, str] = field(default_factory=dict)
    games: int = 0


def _crawford_game(length: int, crawford: bool, score: tuple[int, int], done: bool) -> tuple[bool, bool]:
    """(this game is the Crawford game, the Crawford game has been played) -- the first game in which exactly one
    side is 1-away (GNU Backgammon's rule, as :func:`bgai.formats.matchrecord.replay` checks it)."""
    if length <= 1 or not crawford or done:
        return False, done
    at = [s == length - 1 for s in score]
    if at[0] != at[1]:
        return True, True
    return False, at[0] and at[1]


def _game(record: MatchRecord, number: int, score: tuple[int, int], crawford: bool,
          g: game_play.GameRecord) -> GameRecord:
    """One game of the loop replayed into match-record actions (player 0 = A)."""
    r = GameReplay(record, number, score, crawford)
    seat_a = int(g.a_seat)
    cube: dict[int, list[tuple[int, bool]]] = {}
    for ply, seat, took in g.cube_actions:
        cube.setdefault(int(ply), []).append((int(seat) ^ seat_a, bool(took)))
    n = len(g.movers)
    for k in range(n + 1):
        for player, took in cube.get(k, ()):
            r.apply(Double(player))
            r.apply(Take(1 - player) if took else Drop(1 - player))
        if k == n:
            break
        player = int(g.movers[k]) ^ seat_a
        dice = (int(g.dice[k, 0]), int(g.dice[k, 1]))
        key = g.afterstates[k].tobytes()
        play = next((p for p in r.plays(player, dice) if p.afterstate.tobytes() == key), None)
        if play is None:
            raise BgaiError(f"game {number}, ply {k + 1}: the recorded afterstate is not a legal play of "
                            f"{dice[0]}{dice[1]}")
        r.apply(Move(player, dice, play.steps))
    winner = int(g.winner_seat) ^ seat_a
    if r.result is None or r.result.winner != winner or r.result.points != int(g.points):
        raise BgaiError(f"game {number}: the replayed result {r.result} is not the game's ({winner} wins "
                        f"{g.points})")
    return GameRecord(number=number, score=score, crawford=crawford, actions=tuple(r.actions),
                      result=GameResult(r.result.winner, r.result.points, r.result.how, r.result.kind))


def to_match_record(games: Sequence[game_play.GameRecord], *, names: tuple[str, str], rules: MatchRules,
                    comment: str | None = None) -> MatchRecord:
    """A money session (``rules`` money) or one match (``rules`` a match: the games of that match, in order) from the
    game loop's records, checked by replaying every action.

    Args:
        games: :class:`bgai.game.play.GameRecord` in the order they were played (A is player 0).
        names: players 0 and 1.
        rules: the rules the games were played under.
        comment: the file's comment.

    Raises:
        BgaiError: a record that does not replay (a bug in the game loop), or no games.
    """
    if not games:
        raise BgaiError("no games to save")
    shell = MatchRecord(players=names, length=rules.length, crawford=None if rules.is_money else rules.crawford,
                        jacoby=rules.jacoby if rules.is_money else False, comment=comment)
    score, done, out = (0, 0), False, []
    for i, g in enumerate(games):
        crawford, done = _crawford_game(rules.length, bool(shell.crawford), score, done)
        rec = _game(shell, i + 1, score, crawford, g)
        out.append(rec)
        s = list(score)
        s[rec.result.winner] += rec.result.points
        score = (s[0], s[1])
    return MatchRecord(players=shell.players, length=shell.length, games=tuple(out), crawford=shell.crawford,
                       jacoby=shell.jacoby, comment=comment)


def unit_files(records: Sequence[game_play.GameRecord], spec: SaveSpec, *, unit: int, first: int,
               total: int) -> dict[str, str]:
    """The match files of one work unit (module docstring): file name -> text.

    Args:
        records: the unit's game records; each one's ``unit`` is its slot in the unit (a money game, or a match).
        spec: :class:`SaveSpec`.
        unit: the work unit's index; first: the series index of its first money game or match; total: money games
            or matches in the series.

    Raises:
        BgaiError: a record that does not replay (a bug).
    """
    slots: dict[int, list[game_play.GameRecord]] = {}
    for g in records:
        slots.setdefault(int(g.unit), []).append(g)  # a slot's games in the order it played them
    out: dict[str, str] = {}
    if spec.rules.is_money:
        games = [slots[s][0] for s in sorted(slots)]
        for b in range(0, len(games), SESSION_GAMES):
            block = games[b : b + SESSION_GAMES]
            start = first + b
            note = (f"{spec.comment}: games {start}..{start + len(block) - 1} of {total} (numbered from 0), "
                    f"work unit {unit}")
            rec = to_match_record(block, names=spec.names, rules=spec.rules, comment=note)
            for f in spec.formats:
                out[f"games-{start:09d}{FORMATS[f]}"] = _WRITERS[f](rec)
        return out
    for s in sorted(slots):
        index = first + s
        note = f"{spec.comment}: match {index} of {total} (numbered from 0)"
        rec = to_match_record(slots[s], names=spec.names, rules=spec.rules, comment=note)
        for f in spec.formats:
            out[f"match-{index:06d}{FORMATS[f]}"] = _WRITERS[f](rec)
    return out


#: Names of the files a series writes (``games-NNNNNNNNN.mat``, ``match-NNNNNN.sgf`` ...).
SAVED_NAME = re.compile(r"^(games|match)-\d+\.(mat|sgf)$")


class GameSaver:
    """Writes the files of finished work units into a folder, atomically, in the driver.

    Args:
        directory: the folder (made if missing; its parent must exist).
        formats: :func:`parse_formats`'s tuple.

    Attributes:
        files_written, games: counts so far.

    Raises:
        BgaiError: the folder cannot be made or written to, or already holds saved games of a series (one line
            naming it).
    """

    def __init__(self, directory: str | os.PathLike, formats: Sequence[str] = ("mat",)) -> None:
        self.directory = os.fspath(directory)
        self.formats = tuple(formats)
        for f in self.formats:
            if f not in FORMATS:
                raise BgaiError(f"unknown match file format {f!r}: use mat or sgf")
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise BgaiError(f"--save-games {self.directory!r}: not a folder")
        try:
            os.makedirs(self.directory, exist_ok=True)
        except OSError as exc:
            raise BgaiError(f"--save-games {self.directory!r}: cannot make the folder: {exc.strerror or exc}") from None
        if not os.access(self.directory, os.W_OK | os.X_OK):
            raise BgaiError(f"--save-games {self.directory!r}: the folder is not writable")
        old = sorted(f for f in os.listdir(self.directory) if SAVED_NAME.match(f))
        if old:  # a second series would overwrite some files of the first and leave the others: mixed runs
            raise BgaiError(f"--save-games {self.directory!r} already holds saved games ({old[0]} ...); "
                            "give an empty or new folder")
        self.files_written = 0
        self.games = 0

    def spec(self, agent_a: str, agent_b: str, rules: MatchRules, comment: str) -> SaveSpec:
        """The :class:`SaveSpec` the units of a series get."""
        return SaveSpec(formats=self.formats, names=player_names(agent_a, agent_b), rules=rules, comment=comment)

    def write(self, unit: SavedUnit) -> Any:
        """Write ``unit``'s files; returns its results.

        Raises:
            BgaiError: a file cannot be written (names it).
        """
        for name, text in unit.files.items():
            atomic_write_bytes(os.path.join(self.directory, name), text.encode("utf-8"))
            self.files_written += 1
        self.games += unit.games
        return unit.results

    def summary(self) -> str:
        """One line: games and files written, and where."""
        return f"saved {self.games} game(s) in {self.files_written} file(s) to {self.directory}"
