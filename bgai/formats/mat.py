"""JellyFish ``.mat`` match files, as GNU Backgammon exports and imports them: read and write.

The format (no formal specification exists; this follows what GNU Backgammon's ``export match mat`` writes,
``ExportGameJF``/``ExportMatchMat`` in ``export.c``, and what its importer ``ImportMat`` in ``import.c``
accepts, checked against files written by GNU Backgammon 1.07)::

    ; [Site "FIBS"]                                  header: optional comment lines ';' or '#',
    ; [EventDate "2026.12.01"]                       '[Tag "value"]' tags or free comment text
                                                    
     3 point match                                   match length (0 = money session)
                                                    
     Game 1                                          games, numbered 1, 2, ...
     gnubg : 0                      root : 0         player 0 (left) and 1 (right) with the score
      1)                             64: 24/18 13/9  numbered lines, two columns: player 0, player 1
      2) 62: 24/22 22/16*            51: 25/24 13/8  roll ('62:') and play, bar 25, off 0
     10) 63:                          Doubles => 2   a roll with no play: a dance (or, when a play was
     11)  Takes                      62: 13/7 13/11  possible, a roll the player did not play: he resigned)
      ...
                                      Wins 2 points  the result, in the winner's column

Cube actions: ``Doubles => 4``, ``Takes``, ``Drops`` (beavers are refused).  A game ends with ``Wins N
point(s)`` (``and the match`` may follow) in the winner's column: after the last checker is borne off, after a
drop, or on its own after a resignation (the loser resigned ``N / cube`` x single game; a ``.mat`` file does not
record rejected offers).  XG's ``???`` (rolled, then resigned) and ``Cannot Move`` are read.  Columns: a cell
starting before column 20 of its line is player 0's, one further right is player 1's; with two cells on a line
the first is player 0's.  Plays may be written as single-die steps in playing order (``13/7 7/2``, as GNU
Backgammon writes them; the order is kept) or in any notation :func:`bgai.core.notation.parse_play` reads
(``24/13``, ``bar/20*``, ``6/off``, ``8/5(2)``).  Header tags read: ``Site``, ``Event``, ``Round``,
``EventDate`` (``YYYY.MM.DD``), ``Transcriber``, ``Crawford`` / ``Jacoby`` (``"On"``/``"Off"``; a match
without the tag uses the Crawford rule and a money session the Jacoby rule, as GNU Backgammon assumes),
``Variation`` (only ``Backgammon``); any other tag is kept in :attr:`MatchRecord.extra`.  Crawford games are
derived from the scores (the first game in which one side is 1-away).

:func:`format_mat` writes what GNU Backgammon writes (same columns, move numbers, plain step notation, ``Wins``
lines), so a match exported by GNU Backgammon is written back byte for byte (up to header tags it does not
write); points on ``Wins`` lines are cube x kind as GNU Backgammon writes them (before the Jacoby rule).
Everything read is replayed and checked (:mod:`bgai.formats.matchrecord`); any problem raises
:class:`~bgai.formats.matchrecord.MatchRecordError` naming the line.
"""

from __future__ import annotations

import re

from bgai.core.notation import format_play_plain
from bgai.formats.matchrecord import (
    DROPPED,
    AcceptResign,
    Action,
    Double,
    Drop,
    GameRecord,
    GameReplay,
    MatchRecord,
    MatchRecordError,
    Move,
    RejectResign,
    Resign,
    Roll,
    Take,
    check_record,
)

__all__ = ["format_mat", "parse_mat"]

_LENGTH_RE = re.compile(r"^\s*(\d+)\s+point\s+match\s*$", re.IGNORECASE)
_GAME_RE = re.compile(r"^\s*Game\s+(\d+)\b(.*)$", re.IGNORECASE)
_SCORE_RE = re.compile(r"^\s*(.*?)\s*:\s*(\d+)\s+(.*?)\s*:\s*(\d+)\s*$")
_TAG_RE = re.compile(r'^\[\s*([A-Za-z][A-Za-z0-9 _]*?)\s+"(.*)"\s*\]$')
_NUMBER_RE = re.compile(r"^\s*(\d+)\)")
_CELL_RE = re.compile(
    r"(?<![\w/*])(?:([1-6])([1-6]):|(doubles?|takes?|drops?|wins?|beavers?|raccoons?)\b)", re.IGNORECASE
)
_WINS_RE = re.compile(r"^wins?\s+(\d+)\s+points?(?:\s+and\s+the\s+match)?\s*\.?$", re.IGNORECASE)
_DOUBLE_RE = re.compile(r"^doubles?(?:\s*=>\s*(\d+))?$", re.IGNORECASE)
_RIGHT_COLUMN = 20  # a cell starting at this column or further right is player 1's


def _err(line: int, what: str) -> MatchRecordError:
    return MatchRecordError(f"line {line}: {what}", line=line)


def _on_off(line: int, tag: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("on", "yes", "true", "1"):
        return True
    if v in ("off", "no", "false", "0"):
        return False
    raise _err(line, f'header tag [{tag} "{value}"] must be "On" or "Off"')


def parse_mat(text: str) -> MatchRecord:
    """Read a ``.mat`` match or session (the format in the module docstring) and check it by replaying it.

    Args:
        text: the file's text.

    Returns:
        The :class:`~bgai.formats.matchrecord.MatchRecord` (players, length, rules, header information,
        games with their actions and results).

    Raises:
        MatchRecordError: naming the line: no ``N point match`` line, a bad game or score line, an
            unrecognised cell, unparsable or illegal play notation, a cube action against the rules, a result
            that does not follow from the play, a wrong score, a finished game without its ``Wins`` line...
    """
    if not isinstance(text, str):
        raise MatchRecordError(f".mat text must be a string, got {type(text).__name__}")
    lines = text.lstrip("\ufeff").splitlines()
    k, length, info, flags = _read_header(lines)
    rule_crawford, rule_jacoby = _match_rules(k, length, flags)
    shell = MatchRecord(length=length, crawford=rule_crawford, jacoby=rule_jacoby, **info)
    games, players = _read_games(lines, k, shell)
    if players is None:
        players = ("Player 0", "Player 1")
    record = MatchRecord(players=players, length=length, games=tuple(games), crawford=rule_crawford,
                         jacoby=rule_jacoby, **info)
    return check_record(record)


# header tags copied as they are into MatchRecord fields
_INFO_TAGS = {"site": "site", "event": "event", "round": "round", "transcriber": "annotator"}


def _read_header(lines: list[str]) -> tuple[int, int, dict, dict]:
    """Read up to the ``N point match`` line: ``(next line index, length, info fields, rule flags)``."""
    n = len(lines)
    k = 0
    info: dict = {"extra": []}
    comments: list[str] = []
    flags: dict[str, bool | None] = {"crawford": None, "jacoby": None}
    while k < n:
        raw = lines[k]
        s = raw.strip()
        k += 1
        if not s:
            continue
        if s[0] in ";#":
            _read_header_comment(s[1:].strip(), k, info, comments, flags)
            continue
        m = _LENGTH_RE.match(raw)
        if not m:
            raise _err(k, f"expected the 'N point match' line, found {s[:60]!r}")
        if comments:
            info["comment"] = "\n".join(comments)
        info["extra"] = tuple(info["extra"])
        return k, int(m.group(1)), info, flags
    raise MatchRecordError(f"line {max(n, 1)}: no 'N point match' line (not a .mat file, or truncated)",
                           line=max(n, 1))


def _read_header_comment(body: str, k: int, info: dict, comments: list[str], flags: dict) -> None:
    """One ``; ...`` header line: a ``[Tag "value"]`` goes into ``info`` or ``flags``, other text into comments."""
    m = _TAG_RE.match(body)
    if not m:
        if body:
            comments.append(body)
        return
    tag, value = m.group(1).strip(), m.group(2)
    key = tag.lower()
    if key in _INFO_TAGS:
        info[_INFO_TAGS[key]] = value
    elif key == "eventdate":
        info["date"] = _event_date(k, value)
    elif key in flags:
        flags[key] = _on_off(k, tag, value)
    elif key == "variation":
        if value.strip().lower() != "backgammon":
            raise _err(k, f"variation {value!r} is not supported (only standard backgammon)")
    else:
        info["extra"].append((tag, value))


def _event_date(k: int, value: str) -> str:
    dm = re.match(r"^(\d{4})[.\-/](\d{1,2})[.\-/](\d{1,2})$", value.strip())
    if not dm:
        raise _err(k, f'header tag [EventDate "{value}"] is not a date YYYY.MM.DD')
    return f"{int(dm.group(1)):04d}-{int(dm.group(2)):02d}-{int(dm.group(3)):02d}"


def _match_rules(k: int, length: int, flags: dict) -> tuple[bool, bool]:
    """``(crawford, jacoby)`` from the header tags; Crawford only in matches, Jacoby only in sessions."""
    crawford, jacoby = flags["crawford"], flags["jacoby"]
    if length > 0:
        if jacoby:
            raise _err(k, "the Jacoby rule is for money sessions, but this is a match")
        return (True if crawford is None else crawford), False
    if crawford:
        raise _err(k, "the Crawford rule is for matches, but this is a money session (0 point match)")
    return False, (True if jacoby is None else jacoby)


def _read_games(lines: list[str], k: int, shell: MatchRecord) -> tuple[list[GameRecord], tuple[str, str] | None]:
    """Read every game from line index ``k`` on: ``(games, player names or None when there is no game)``."""
    n = len(lines)
    games: list[GameRecord] = []
    players: tuple[str, str] | None = None
    crawford_done = False
    while k < n:
        raw = lines[k]
        k += 1
        s = raw.strip()
        if not s or s[0] in ";#":
            continue
        m = _GAME_RE.match(raw)
        if not m:
            raise _err(k, f"expected 'Game {len(games) + 1}', found {s[:60]!r}")
        number = int(m.group(1))
        game_line = k
        if number != len(games) + 1:
            raise _err(k, f"expected game {len(games) + 1}, found 'Game {number}'")
        k, names, score = _read_score_line(lines, k, number)
        if games:
            _check_start_score(games[-1], number, score, game_line, k, shell.length)
        if players is None:
            players = names
        elif names != players:
            raise _err(k, f"player names {names} differ from game 1's {players}")
        cflag, crawford_done = _crawford_flag(shell, score, crawford_done)
        r = GameReplay(shell, number, score, cflag)
        k = _read_game_body(lines, k, r, number)
        games.append(GameRecord(number=number, score=score, crawford=cflag, actions=tuple(r.actions),
                                result=r.result, line=game_line))
    return games, players


def _read_score_line(lines: list[str], k: int, number: int) -> tuple[int, tuple[str, str], tuple[int, int]]:
    """The ``name : score   name : score`` line after ``Game N``: ``(next line index, names, score)``."""
    n = len(lines)
    while k < n and not lines[k].strip():
        k += 1
    if k >= n:
        raise _err(k, f"game {number} has no player/score line (truncated file?)")
    sm = _SCORE_RE.match(lines[k])
    k += 1
    if not sm:
        raise _err(k, f"expected 'name : score   name : score', found {lines[k - 1].strip()[:60]!r}")
    names = (sm.group(1), sm.group(3))
    score = (int(sm.group(2)), int(sm.group(4)))
    if not names[0] or not names[1]:
        raise _err(k, "a player name is empty")
    return k, names, score


def _check_start_score(prev: GameRecord, number: int, score: tuple[int, int], game_line: int, k: int,
                       length: int) -> None:
    """The previous game must be finished and the match not over; ``score`` must follow from its result."""
    if prev.result is None:
        raise _err(game_line, f"game {prev.number} is unfinished, but game {number} follows")
    want = list(prev.score)
    want[prev.result.winner] += prev.result.points
    if length > 0 and max(want) >= length:
        raise _err(game_line, f"game {number} follows the end of the match ({want[0]}-{want[1]})")
    if score != tuple(want):
        raise _err(k, f"the score at the start of game {number} should be {want[0]}-{want[1]}, the file "
                      f"says {score[0]}-{score[1]}")


def _crawford_flag(shell: MatchRecord, score: tuple[int, int], crawford_done: bool) -> tuple[bool, bool]:
    """``(this game is the Crawford game, the Crawford game has been reached)`` for a game starting at ``score``."""
    length = shell.length
    if not (length > 0 and shell.crawford and not crawford_done):
        return False, crawford_done
    at = [x == length - 1 for x in score]
    if at[0] != at[1]:
        return True, True
    return False, bool(at[0])


def _read_game_body(lines: list[str], k: int, r: GameReplay, number: int) -> int:
    """Apply the move lines of one game to ``r`` up to the next ``Game N`` line; returns that line's index."""
    n = len(lines)
    result_line: int | None = None
    last_line = k
    while k < n:
        raw = lines[k]
        if _GAME_RE.match(raw):
            break
        k += 1
        if not raw.strip():
            continue
        if raw.strip()[0] in ";#":
            continue
        last_line = k
        result_line = _read_move_line(raw, k, r, result_line)
    if r.result is not None and result_line is None:
        raise _err(last_line, f"game {number} is over (player {r.result.winner} wins) but has no "
                              "'Wins N points' line (truncated file?)")
    return k


def _cells(raw: str, line: int) -> list[tuple[int, int, str]]:
    """Split a move line into ``(player, start column, text)`` cells."""
    m = _NUMBER_RE.match(raw)
    start = m.end() if m else 0
    found = list(_CELL_RE.finditer(raw, start))
    rest = raw[start:].strip()
    if not found:
        if rest:
            raise _err(line, f"unrecognised move line {raw.strip()[:60]!r}")
        return []
    lead = raw[start:found[0].start()].strip()
    if lead:
        raise _err(line, f"unrecognised text {lead[:40]!r} in move line")
    cells = []
    for i, f in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(raw)
        cells.append((f.start(), raw[f.start():end].strip()))
    if len(cells) > 2:
        raise _err(line, f"more than two entries on one move line: {raw.strip()[:60]!r}")
    if len(cells) == 2:
        return [(0, cells[0][0], cells[0][1]), (1, cells[1][0], cells[1][1])]
    col, txt = cells[0]
    return [(0 if col < _RIGHT_COLUMN else 1, col, txt)]


def _read_move_line(raw: str, line: int, r: GameReplay, result_line: int | None) -> int | None:
    for player, _, cell in _cells(raw, line):
        if result_line is not None:
            raise _err(line, f"{cell!r} after the end of the game")
        if _read_cell(player, cell, line, r):
            result_line = line
    return result_line


def _read_cell(player: int, cell: str, line: int, r: GameReplay) -> bool:
    """Apply one move-line cell to ``r``; True when it is the game's ``Wins N points`` cell."""
    m = re.match(r"^([1-6])([1-6]):\s*(.*)$", cell)
    if m:
        _read_roll_cell(player, (int(m.group(1)), int(m.group(2))), m.group(3).strip(), line, r)
        return False
    word = cell.split()[0].lower()
    if word.startswith("double"):
        _read_double_cell(player, cell, line, r)
    elif word.startswith("take"):
        r.apply(Take(player, line=line))
    elif word.startswith("drop"):
        r.apply(Drop(player, line=line))
    elif word.startswith(("beaver", "raccoon")):
        raise _err(line, f"{cell!r}: beavers and raccoons are not supported")
    else:
        _read_wins_cell(player, cell, line, r)
        return True
    return False


def _read_roll_cell(player: int, dice: tuple[int, int], body: str, line: int, r: GameReplay) -> None:
    """A ``DD: play`` cell: a play, a roll not yet played (``???`` or empty), or no possible play."""
    if body.lower().startswith("illegal play"):
        raise _err(line, "Snowie 'Illegal play' records (edited positions) are not supported")
    if body.startswith("???"):
        r.apply(Roll(player, dice, line=line))
        return
    if body.lower() == "cannot move":
        body = ""
    if not body:
        plays = r.plays(player, dice)
        if len(plays) == 1 and not plays[0].steps:
            r.apply(Move(player, dice, (), line=line))
        else:
            r.apply(Roll(player, dice, line=line))
        return
    steps = r.steps_from_text(player, dice, body, line)
    r.apply(Move(player, dice, steps, line=line))


def _read_double_cell(player: int, cell: str, line: int, r: GameReplay) -> None:
    dm = _DOUBLE_RE.match(cell)
    if not dm:
        raise _err(line, f"unrecognised cube action {cell!r}")
    if dm.group(1) is not None and int(dm.group(1)) != 2 * r.cube_value:
        raise _err(line, f"{cell!r}: the cube is at {r.cube_value}, a double takes it to "
                         f"{2 * r.cube_value}")
    r.apply(Double(player, line=line))


def _read_wins_cell(player: int, cell: str, line: int, r: GameReplay) -> None:
    """A ``Wins N points`` cell: checked against the replayed result (an accepted resignation when none yet)."""
    wm = _WINS_RE.match(cell)
    if not wm:
        raise _err(line, f"unrecognised result {cell!r} (expected 'Wins N points')")
    pts = int(wm.group(1))
    if r.result is None:
        _apply_accepted_resignation(player, cell, pts, line, r)
    res = r.result
    assert res is not None
    if res.winner != player:
        raise _err(line, f"{cell!r} is in player {player}'s column, but player {res.winner} won the game")
    ok = {res.points} if res.how == DROPPED else {res.points, res.kind * r.cube_value}
    if pts not in ok:
        raise _err(line, f"{cell!r}: player {res.winner} wins {res.points} point"
                         f"{'s' if res.points != 1 else ''} ({res.how})")


def _apply_accepted_resignation(player: int, cell: str, pts: int, line: int, r: GameReplay) -> None:
    """A win of ``pts`` not reached by play: a resignation by the other player, accepted."""
    if r.pending_double is not None:
        raise _err(line, f"{cell!r} while a double awaits an answer")
    kind = next((kk for kk in (1, 2, 3) if pts == kk * r.cube_value), None)
    if kind is None:
        raise _err(line, f"{cell!r} is not 1, 2 or 3 times the cube value {r.cube_value}")
    r.apply(Resign(1 - player, kind, line=line))
    r.apply(AcceptResign(player, line=line))


# ------------------------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------------------------


def _wins(points: int) -> str:
    return f"Wins {points} point{'s' if points != 1 else ''}"


def format_mat(record: MatchRecord) -> str:
    """Write ``record`` as a ``.mat`` file in GNU Backgammon's layout (see the module docstring).

    The record is replayed first (cube values, game ends).  Not representable, so refused: games starting from
    a set-up position.  Not written (the format has no place for them): comments on actions, ratings,
    rejected resignation offers.

    Raises:
        MatchRecordError: the record breaks the rules (see :func:`bgai.formats.matchrecord.replay`), or a game
            starts from a set-up position.
    """
    check_record(record)
    out: list[str] = []
    for tag, value in (("Site", record.site), ("Event", record.event), ("Round", record.round)):
        if value is not None:
            out.append(f'; [{tag} "{value}"]\n')
    if record.date is not None:
        out.append(f'; [EventDate "{record.date.replace("-", ".")}"]\n')
    if record.annotator is not None:
        out.append(f'; [Transcriber "{record.annotator}"]\n')
    for tag, value in record.extra:
        out.append(f'; [{tag} "{value}"]\n')
    if record.length > 1 and not record.crawford:
        out.append('; [Crawford "Off"]\n')
    if record.length == 0 and not record.jacoby:
        out.append('; [Jacoby "Off"]\n')
    if record.comment:
        out.append("\n; " + record.comment.replace("\n", "\n; ") + "\n")
    out.append("\n")
    out.append(f" {record.length} point match\n\n")
    names = record.players
    for g in record.games:
        if g.setup is not None:
            raise MatchRecordError(f"game {g.number}: a .mat file cannot hold a game that starts from a set-up "
                                   "position (use .sgf)", game=g.number)
        out.append(f" Game {g.number}\n")
        left = f"{names[0]} : {g.score[0]}"
        out.append(f" {left:<31}{names[1]} : {g.score[1]}\n")
        out.append(_format_game(record, g))
    return "".join(out)


def _format_game(record: MatchRecord, g: GameRecord) -> str:
    r = GameReplay(record, g.number, g.score, g.crawford)
    acts = g.actions
    out: list[str] = []
    i = 0
    dice_rolled = False
    for k, a in enumerate(acts):
        cube = r.cube_value
        r.apply(a)
        if not _written(acts, k):
            continue
        if k == 0 and a.player == 1:
            out.append(f"{1:3d}) {'':<27} ")
            i = 1
        if isinstance(a, (Move, Roll)):
            dice_rolled = isinstance(a, Roll)
        _place_entry(out, a, _mat_entry(a, cube, i, dice_rolled), i)
        if isinstance(a, Move) and r.result is not None:
            pad = " " * 34 if i & 1 else "\n      "
            out.append(f"{pad}{_wins(r.result.kind * cube)}\n\n")
        i += 1
    return "".join(out)


def _written(acts: tuple[Action, ...], k: int) -> bool:
    """Whether ``acts[k]`` gets an entry: answers to resignations and rejected (or unanswered) offers do not."""
    a = acts[k]
    if isinstance(a, (AcceptResign, RejectResign)):
        return False
    return not isinstance(a, Resign) or (k + 1 < len(acts) and isinstance(acts[k + 1], AcceptResign))


def _mat_entry(a: Action, cube: int, i: int, dice_rolled: bool) -> str:
    """The text of one entry (``cube``: the cube value before ``a``; ``i``: its half-move index)."""
    if isinstance(a, Move):
        return f"{a.dice[0]}{a.dice[1]}: " + format_play_plain(a.steps)
    if isinstance(a, Roll):
        return f"{a.dice[0]}{a.dice[1]}: "
    if isinstance(a, Double):
        return f" Doubles => {2 * cube}"
    if isinstance(a, Take):
        return " Takes"
    if isinstance(a, Drop):
        return " Drops" + ("\n      " if i & 1 else " " * 23) + _wins(cube)
    # accepted resignation
    pts = a.kind * cube
    odd = bool(i & 1) ^ dice_rolled
    if a.player == 1:
        return ("\n" if odd else "") + "      " + _wins(pts) + "\n"
    if i & 1:
        return (" " if odd else " " * 24) + _wins(pts) + "\n"
    return (" " if odd else " " * 34) + _wins(pts) + "\n"


def _place_entry(out: list[str], a: Action, sz: str, i: int) -> None:
    """Append entry ``sz`` in its column: the right one ends the line, the left one starts it with the number."""
    if (i & 1) or isinstance(a, Resign):
        out.append(sz)
        if not isinstance(a, Roll):
            out.append("\n")
    elif isinstance(a, Roll):
        out.append(f"{(i >> 1) + 1:3d}) {sz:<3}")
    else:
        out.append(f"{(i >> 1) + 1:3d}) {sz:<27} ")
    if isinstance(a, Drop):
        out.append("\n")
        if not i & 1:
            out.append("\n")
