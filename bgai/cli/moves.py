"""``bgai moves``: list the legal plays of a position.

``bgai moves POSITION DICE [--json] [--board]`` prints every legal play (one per distinct resulting position) in
standard notation with the Position ID of the resulting position; ``bgai moves --batch FILE`` (``-`` = stdin)
reads lines ``POSITION [DICE]`` and writes one JSON object per line::

    {"position_id": "4HPwATDgc/ABMA", "dice": [3, 1], "plays": [{"play": "8/5 6/5", "position_id": "..."}, ...]}

POSITION is anything bgai's request parser reads (:mod:`bgai.formats.request`): a Position ID, GNU Backgammon's
``POSITION_ID:MATCH_ID`` (the Match ID is checked against the position), an XGID, a wildbg board
(``p24=2&p19=-5...``) or a FIBS board line; a roll carried by the position is used when DICE is left out, and
must agree with DICE otherwise.  Dice are written ``31``, ``3-1``, ``3,1`` or ``3 1``
(:meth:`bgai.core.dice.Dice.parse`); the table writes the roll as ``3-1``.

Resulting Position IDs are from the **mover's** view (sides not swapped: flip the board to get the opponent's
turn).  When no play is legal the list holds one entry with ``"play": ""`` and the unchanged position (the turn
passes).  A bad batch line gives ``{"line": n, "error": "..."}`` (1-based line numbers; blank lines are skipped;
a line that is not UTF-8 text is such an error) and the rest are still processed; the exit status is then 1.
The position is checked first, so an error names the field that is wrong.  A finished game (a side has borne
off all 15 checkers) is an error: there is nothing to play.  On the command line a bad argument gives
``bgai: error: ...`` and exit status 2.  Stdin is answered line by line (each answer flushed at once).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

import numpy as np

from bgai.cli.args import batch_lines, error_text
from bgai.core.board import render
from bgai.core.dice import Dice
from bgai.core.movegen import legal_plays
from bgai.core.position_id import encode_position_ids
from bgai.errors import BgaiError, PositionRequestError, quote_input
from bgai.formats.request import PositionRequest, read_position_request

#: Lines of a batch file answered together (one vectorised Position ID encoding per chunk).
CHUNK = 512

USAGE_HINT = ("give POSITION_ID and DICE (e.g. bgai moves 4HPwATDgc/ABMA 31; an XGID, wildbg board or FIBS board "
              "line with a roll needs no DICE), or --batch FILE")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``moves`` subcommand to bgai's argument parser."""
    p = subparsers.add_parser(
        "moves",
        help="list the legal plays of a position",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "List the legal plays of a position (GNU Backgammon Position ID[:Match ID], XGID, wildbg board or\n"
            "FIBS board line, from the view of the side on roll) with a roll, in standard notation, each with\n"
            "the Position ID of the resulting position from the mover's view (sides not swapped)."
        ),
        epilog=(
            "examples:\n"
            "  bgai moves 4HPwATDgc/ABMA 31\n"
            "  bgai moves 4HPwATDgc/ABMA 3-1 --json\n"
            "  bgai moves XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10 --board\n"
            "  bgai moves --batch positions.txt > plays.jsonl   (lines 'POSITION [DICE]')"
        ),
    )
    p.add_argument("position", nargs="?", metavar="POSITION",
                   help="Position ID (14 characters), POSITION_ID:MATCH_ID, XGID, wildbg board or FIBS board line")
    p.add_argument("dice", nargs="?", metavar="DICE", help="the roll: 31, 3-1, '3 1' or 3,1")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--board", action="store_true", help="draw the position first")
    p.add_argument(
        "--batch",
        metavar="FILE",
        help="read lines 'POSITION [DICE]' from FILE ('-' = stdin); write one JSON object per line",
    )
    p.set_defaults(func=run)


def records(requests: list[PositionRequest]) -> list[dict]:
    """The JSON-ready answers of checked requests with dice (layout: see the module docstring); all resulting
    positions encoded in one vectorised call."""
    found = [legal_plays(r.board, r.dice) for r in requests]
    afters = [p.afterstate for plays in found for p in plays]
    ids = encode_position_ids(np.stack(afters)) if afters else []
    out, k = [], 0
    for r, plays in zip(requests, found):
        entries = [{"play": p.notation, "position_id": ids[k + m]} for m, p in enumerate(plays)]
        k += len(plays)
        out.append({"position_id": r.position_id, "dice": list(r.dice), "plays": entries})
    return out


def read_line(text: str) -> PositionRequest:
    """A batch line ``POSITION [DICE]`` read by the request parser; the roll must be known.

    Raises:
        BgaiError: the request parser's errors, or no roll.
    """
    parts = text.split(None, 1)
    req = read_position_request(parts[0], parts[1] if len(parts) > 1 else None)
    if req.dice is None:
        raise PositionRequestError(
            f"expected 'POSITION_ID DICE' or 'POSITION_ID:MATCH_ID [DICE]', got {quote_input(text)} (no roll)")
    return req


def run(args: argparse.Namespace) -> int:
    """Run ``bgai moves``; returns the exit status (0 ok, 1 some batch lines failed, 2 bad arguments)."""
    if args.batch is not None:
        if args.position is not None or args.dice is not None:
            raise BgaiError("give either POSITION_ID DICE or --batch FILE, not both")
        if args.json:
            raise BgaiError("--batch always writes JSON lines; --json is not needed")
        if args.board:
            raise BgaiError("--board draws one position; not with --batch")
        return _run_batch(args.batch)
    if args.position is None:
        raise BgaiError(USAGE_HINT)
    req = read_position_request(args.position, args.dice)
    if req.dice is None:
        raise BgaiError(USAGE_HINT)
    record = records([req])[0]
    if args.board:
        print(render(req.board))
    print(json.dumps(record) if args.json else format_table(record))
    return 0


def format_table(record: dict) -> str:
    """The human-readable table of one answer."""
    roll = Dice(*record["dice"])
    plays = record["plays"]
    head = f"Position {record['position_id']}, roll {roll}:"
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
        return _process(path, sys.stdout, chunk=1 if path == "-" else CHUNK)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise BgaiError(f"cannot read batch file {quote_input(path)}: {exc.strerror or exc}") from None


def _process(path: str, out: TextIO, *, chunk: int) -> int:
    failed = False
    pending: list[PositionRequest] = []

    def flush() -> None:
        for rec in records(pending):
            out.write(json.dumps(rec) + "\n")
        pending.clear()
        out.flush()

    for n, text, bad in batch_lines(path):
        if bad is None and not text.strip():
            continue
        try:
            if bad is not None:
                raise BgaiError(bad)
            pending.append(read_line(text.strip()))
        except BgaiError as exc:
            flush()  # keep the output in input order
            failed = True
            out.write(json.dumps({"line": n, "error": error_text(exc)}) + "\n")
            out.flush()
            continue
        if len(pending) >= chunk:
            flush()
    flush()
    return 1 if failed else 0
