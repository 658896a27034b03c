"""``bgai moves``: list the legal plays of a position.

``bgai moves POSITION_ID DICE [--json]`` prints every legal play (one per distinct resulting position) in standard
notation with the Position ID of the resulting position; ``bgai moves --batch FILE`` (``-`` = stdin) reads lines
``POSITION_ID DICE`` and writes one JSON object per line (GNU Backgammon's ``POSITION_ID:MATCH_ID`` is accepted
too: the Match ID is checked against the position and its roll used when DICE is left out)::

    {"position_id": "4HPwATDgc/ABMA", "dice": [3, 1], "plays": [{"play": "8/5 6/5", "position_id": "..."}, ...]}

Resulting Position IDs are from the **mover's** view (sides not swapped: flip the board to get the opponent's
turn).  When no play is legal the list holds one entry with ``"play": ""`` and the unchanged position (the turn
passes).  A bad batch line gives ``{"line": n, "error": "..."}`` (1-based line numbers; blank lines are skipped)
and the rest are still processed; the exit status is then 1.  A line's Position ID is checked first, so an error
names the field that is wrong.  A finished game (a side has borne off all 15 checkers) is an error: there is
nothing to play.  Dice are written ``31``, ``3-1``, ``3,1`` or
``3 1``; bad dice or a bad Position ID on the command line give ``bgai: error: ...`` and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Iterable, TextIO

import numpy as np

from bgai.errors import BgaiError, InvalidDiceError

_DICE_RE = re.compile(r"\s*([0-9])\s*[-,\s]?\s*([0-9])\s*")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``moves`` subcommand to bgai's argument parser."""
    p = subparsers.add_parser(
        "moves",
        help="list the legal plays of a position",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "List the legal plays of a position (GNU Backgammon Position ID, from the view of the side on\n"
            "roll) with a roll, in standard notation, each with the Position ID of the resulting position\n"
            "from the mover's view (sides not swapped)."
        ),
        epilog=(
            "examples:\n"
            "  bgai moves 4HPwATDgc/ABMA 31\n"
            "  bgai moves 4HPwATDgc/ABMA 3-1 --json\n"
            "  bgai moves --batch positions.txt > plays.jsonl   (lines 'POSITION_ID DICE')"
        ),
    )
    p.add_argument("position_id", nargs="?", metavar="POSITION_ID",
                   help="GNU Backgammon Position ID (14 characters), or POSITION_ID:MATCH_ID (DICE from the Match ID)")
    p.add_argument("dice", nargs="?", metavar="DICE", help="the roll: 31, 3-1 or 3,1")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument(
        "--batch",
        metavar="FILE",
        help="read lines 'POSITION_ID DICE' from FILE ('-' = stdin); write one JSON object per line",
    )
    p.set_defaults(func=run)


def parse_dice(text: str) -> tuple[int, int]:
    """Dice text ``'31'``, ``'3-1'``, ``'3,1'`` or ``'3 1'`` -> ``(3, 1)`` (order kept).

    Raises:
        InvalidDiceError: text that is not two dice, or a die outside 1..6 (quoting the text).
    """
    m = _DICE_RE.fullmatch(text or "")
    if not m:
        raise InvalidDiceError(f"bad dice {text!r}: expected two dice 1..6 such as 31, 3-1 or 3,1")
    d1, d2 = int(m.group(1)), int(m.group(2))
    for d in (d1, d2):
        if not 1 <= d <= 6:
            raise InvalidDiceError(f"bad dice {text!r}: die {d} is not 1..6")
    return d1, d2


def game_over_message(board: np.ndarray) -> str | None:
    """``None`` while the game is on; otherwise why there is nothing to play (one side has borne off all 15
    checkers).  ``board`` is ``(2, 25)`` from the side on roll's view."""
    from bgai.core.board import off_counts

    off = off_counts(np.asarray(board)[None])[0]
    if off[1] == 15:
        return "the game is over: the opponent of the side on roll has borne off all 15 checkers"
    if off[0] == 15:
        return "the game is over: the side on roll has borne off all 15 checkers"
    return None


def check_game_not_over(board: np.ndarray) -> None:
    """Raise :class:`bgai.errors.InvalidPositionError` for a finished game (see :func:`game_over_message`)."""
    from bgai.errors import InvalidPositionError

    msg = game_over_message(board)
    if msg is not None:
        raise InvalidPositionError(msg)


def split_match_id(position: str, dice: tuple[int, int] | None) -> tuple[str, tuple[int, int] | None]:
    """``POSITION_ID:MATCH_ID`` (GNU Backgammon's combined form) -> ``(POSITION_ID, dice)``.

    The Match ID is decoded and checked against the position; when it carries a roll, that roll is used if
    ``dice`` is None, and must agree with ``dice`` (in either order) otherwise.  Without ``:`` the input is
    returned unchanged.

    Raises:
        PositionIDError, MatchIDError: a malformed or inconsistent ID; InvalidDiceError: dice that disagree.
    """
    if ":" not in position:
        return position, dice
    from bgai.core.position_id import decode_position_id
    from bgai.formats.match_id import decode_match_id
    from bgai.game.match import match_from_match_id

    pid, mid = position.split(":", 1)
    board = decode_position_id(pid)
    ms = decode_match_id(mid)
    match_from_match_id(ms, board)
    md = tuple(int(d) for d in ms.dice)
    if md != (0, 0):
        if dice is None:
            dice = (md[0], md[1])
        elif sorted(dice) != sorted(md):
            raise InvalidDiceError(
                f"dice {dice[0]}{dice[1]} disagree with the roll {md[0]}{md[1]} in Match ID {mid!r}: give the dice once"
            )
    return pid, dice


def plays_records(requests: list[tuple[str, tuple[int, int]]]) -> list[dict]:
    """The JSON-ready answers for several (Position ID, dice) requests (layout: see the module docstring).

    The Position IDs of a batch are decoded, and all resulting positions encoded, in one vectorised call each;
    the plays themselves come from :func:`bgai.core.movegen.legal_plays` (which also gives the notation).

    Returns:
        One dict per request, in order: the answer, or ``{"error": message}`` for a request that failed with a
        bgai error (malformed Position ID, bad dice).
    """
    return [{"error": str(r)} if isinstance(r, BgaiError) else r for r in _answers(requests)]


def _answers(requests: list[tuple[str, tuple[int, int]]]) -> list[dict | BgaiError]:
    from bgai.core.movegen import legal_plays
    from bgai.core.position_id import decode_position_id, decode_position_ids, encode_position_ids

    out: list[dict | BgaiError] = [{} for _ in requests]
    try:
        boards = list(decode_position_ids([pid for pid, _ in requests]))
    except BgaiError:  # find the bad ones one by one
        boards = []
        for i, (pid, _) in enumerate(requests):
            try:
                boards.append(decode_position_id(pid))
            except BgaiError as exc:
                boards.append(None)
                out[i] = exc
    found = []  # (request index, plays, board)
    for i, ((pid, dice), board) in enumerate(zip(requests, boards)):
        if board is None:
            continue
        try:
            check_game_not_over(board)
            found.append((i, legal_plays(board, dice), board))
        except BgaiError as exc:
            out[i] = exc
    afters = [p.afterstate for _, plays, _ in found for p in plays] + [board for _, _, board in found]
    ids = encode_position_ids(np.stack(afters)) if afters else []
    k = 0
    for j, (i, plays, _) in enumerate(found):
        start_id = ids[len(ids) - len(found) + j]
        entries = [{"play": p.notation if p.steps else "", "position_id": ids[k + m]} for m, p in enumerate(plays)]
        k += len(plays)
        if not entries:  # no legal play: the position is unchanged (the turn passes)
            entries = [{"play": "", "position_id": start_id}]
        dice = requests[i][1]
        out[i] = {"position_id": start_id, "dice": [int(dice[0]), int(dice[1])], "plays": entries}
    return out


def plays_record(position_id: str, dice: tuple[int, int]) -> dict:
    """The JSON-ready answer for one position and roll (see the module docstring for the layout).

    Raises:
        PositionIDError: a malformed Position ID.
        InvalidDiceError: dice outside 1..6.
    """
    answer = _answers([(position_id, dice)])[0]
    if isinstance(answer, BgaiError):
        raise answer
    return answer


def run(args: argparse.Namespace) -> int:
    """Run ``bgai moves``; returns the exit status (0 ok, 1 some batch lines failed, 2 bad arguments)."""
    if args.batch is not None:
        if args.position_id is not None or args.dice is not None:
            print("bgai: error: give either POSITION_ID DICE or --batch FILE, not both", file=sys.stderr)
            return 2
        if args.json:
            print("bgai: error: --batch always writes JSON lines; --json is not needed", file=sys.stderr)
            return 2
        return _run_batch(args.batch)
    if args.position_id is None or (args.dice is None and ":" not in args.position_id):
        print("bgai: error: give POSITION_ID and DICE (e.g. bgai moves 4HPwATDgc/ABMA 31), or --batch FILE",
              file=sys.stderr)
        return 2
    from bgai.core.position_id import decode_position_id

    decode_position_id(args.position_id.split(":", 1)[0])  # blame a bad Position ID before the dice
    pid, dice = split_match_id(args.position_id, None if args.dice is None else parse_dice(args.dice))
    if dice is None:
        print("bgai: error: give DICE (the Match ID carries no roll)", file=sys.stderr)
        return 2
    record = plays_record(pid, dice)
    if args.json:
        print(json.dumps(record))
    else:
        print(_format_table(record))
    return 0


def _format_table(record: dict) -> str:
    d1, d2 = record["dice"]
    plays = record["plays"]
    head = f"Position {record['position_id']}, roll {d1}-{d2}:"
    if len(plays) == 1 and plays[0]["play"] == "":
        return f"{head} no legal play; the position stays {plays[0]['position_id']} (the turn passes)."
    n = len(plays)
    lines = [f"{head} {n} legal play{'s' if n != 1 else ''} (resulting Position IDs from the mover's view)"]
    width = max(len(p["play"]) for p in plays)
    num_w = len(str(n))
    for i, p in enumerate(plays, 1):
        lines.append(f"{i:>{num_w + 2}}. {p['play']:<{width}}  {p['position_id']}")
    return "\n".join(lines)


def _run_batch(path: str) -> int:
    try:
        if path == "-":  # answer each line as it comes (a program may be waiting for it)
            return _process_lines(sys.stdin, sys.stdout, chunk=1)
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _process_lines(fh, sys.stdout, chunk=_CHUNK)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        print(f"bgai: error: cannot read batch file {path!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2


#: Lines of a batch file answered together (one vectorised decode and encode per chunk).
_CHUNK = 512


def _process_lines(lines: Iterable[str], out: TextIO, *, chunk: int) -> int:
    failed = False
    pending: list[tuple[int, str, tuple[int, int]]] = []  # (line number, Position ID, dice)

    def flush() -> None:
        nonlocal failed
        for (n, _, _), rec in zip(pending, plays_records([(pid, dice) for _, pid, dice in pending])):
            if "error" in rec:
                failed = True
                rec = {"line": n, "error": rec["error"]}
            out.write(json.dumps(rec) + "\n")
        pending.clear()
        out.flush()

    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        try:
            parts = text.split(None, 1)
            try:
                dice = parse_dice(parts[1]) if len(parts) > 1 else None
                pid, dice = split_match_id(parts[0], dice)
                if dice is None:
                    raise BgaiError(f"expected 'POSITION_ID DICE' or 'POSITION_ID:MATCH_ID [DICE]', got {text!r}")
            except BgaiError:
                # blame the Position ID when it is bad too (it comes first on the line)
                from bgai.core.position_id import decode_position_id

                decode_position_id(parts[0].split(":", 1)[0])
                raise
            pending.append((n, pid, dice))
        except BgaiError as exc:
            flush()  # keep the output in input order
            failed = True
            out.write(json.dumps({"line": n, "error": str(exc)}) + "\n")
            continue
        if len(pending) >= chunk:
            flush()
    flush()
    return 1 if failed else 0
