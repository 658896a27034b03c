"""Paired decision test: agent B against agent A, judged by rollouts of the plays where they disagree.

Draws decisions (a position and a roll) from a bgai label folder, lets both agents play each one and rolls out
both plays where they differ (by default GNU Backgammon 0-ply, 36 variance-reduced trials truncated 5 plies after
the play, as bgai's strength benchmark; :mod:`bgai.evaluate.disagreements`).  Prints how often they differ and B's
gain over A in milli-points per decision (mppd, the unit of gnubg's error rate) with its standard error: a
search setting or a new net is compared on a few thousand decisions in minutes, where games between such close
agents need tens of thousands.

Usage::

    python scripts/bench_disagreements.py default default:ply=1                   # what 1-ply search buys
    python scripts/bench_disagreements.py checkpoints/bgai-sl7.pt default --count 2000 --workers 2 --json d.json
    python scripts/bench_disagreements.py default default:ply=1 --positions data/labels/sl5db-race-cand4-ply2 \\
        --judge default --truncate none                                           # races, rolled out to the end

The decisions drawn depend on ``--positions``, ``--classes``, ``--count`` and ``--seed``; about a fifth of them are
forced and dropped.  The judge plays and evaluates at 0-ply.  Ctrl-C stops the test and prints the figures of the
decisions finished (exit status 130).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from bgai.cli.args import BgaiArgumentParser, error_text, non_negative_int, positive_int, seed_type
from bgai.errors import BgaiError
from bgai.evaluate.disagreements import draw_decisions, paired_test
from bgai.model.classes import CLASS_NAMES
from bgai.train.labels import load_labels
from bgai.util.fileio import atomic_write_json, check_destination
from bgai.util.progress import progress_bar
from bgai.util.threads import limit_threads

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
DEFAULT_POSITIONS = os.path.join(ROOT, "data", "labels", "sl8db-contact-cand4-ply2")
PLAYED = ("race", "crashed", "contact")


def _truncate(text: str) -> int | None:
    """argparse type of ``--truncate``: plies (an integer >= 0) or ``none``."""
    if text.strip().lower() == "none":
        return None
    try:
        return non_negative_int(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or 'none')") from None


def main(argv=None) -> int:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="agent A, the reference (an agent spec: default, gnubg, model.pt:ply=1, ...)")
    ap.add_argument("b", help="agent B, the one whose gain over A is measured")
    ap.add_argument("--positions", default=DEFAULT_POSITIONS,
                    help="label folder to draw positions from (default: data/labels/sl8db-contact-cand4-ply2)")
    ap.add_argument("--classes", nargs="+", choices=PLAYED, help="only positions of these classes (default: all)")
    ap.add_argument("--count", type=positive_int, default=4000, help="decisions drawn (forced ones dropped; "
                    "default %(default)s)")
    ap.add_argument("--judge", default="gnubg", help="rollout agent spec (default: gnubg, GNU Backgammon 0-ply)")
    ap.add_argument("--trials", type=positive_int, default=36, help="trials per differing decision (>= 2; default 36)")
    ap.add_argument("--truncate", type=_truncate, default=5,
                    help="plies after the play before the judge's evaluation scores a trial, or none (default 5)")
    ap.add_argument("--seed", type=seed_type, default=1, help="seed of the decisions, choices and dice (default 1)")
    ap.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    ap.add_argument("--json", help="also write the figures (and each differing decision's difference) here")
    args = ap.parse_args(argv)
    limit_threads(1)
    try:
        if args.json:
            check_destination(args.json, probe=True)  # before the work, not after it
        data = load_labels(args.positions)
        boards = data.boards
        if not len(boards):
            raise BgaiError(f"{args.positions} holds no positions")
        if args.classes:
            boards = boards[np.isin(data.classes, [CLASS_NAMES.index(c) for c in args.classes])]
            if not len(boards):
                raise BgaiError(f"{args.positions} has no positions of the classes {', '.join(args.classes)}")
        decisions = draw_decisions(boards, args.count, args.seed)
        bar = progress_bar(total=1, unit="unit", desc="decisions", leave=False, disable=not sys.stderr.isatty())

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.total = total
                bar.n = done
                bar.refresh()

        try:
            res = paired_test(args.a, args.b, decisions, judge=args.judge, trials=args.trials,
                              truncate=args.truncate, seed=args.seed, workers=args.workers, progress=progress)
        finally:
            if bar is not None:
                bar.close()
    except BgaiError as exc:
        print(f"bench_disagreements: error: {error_text(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench_disagreements: interrupted", file=sys.stderr)
        return 130
    trunc = "to the end" if args.truncate is None else f"truncated at {args.truncate} plies"
    print(f"{res.decisions} decisions from {args.positions} (seed {args.seed}); judge {args.judge}, {args.trials} "
          f"trials {trunc}")
    if res.interrupted:
        print(f"stopped by {res.interrupted}: the figures of the {res.decisions} decisions finished")
    if res.differ:
        print(f"plays differ in {res.differ} ({100.0 * res.differ / res.decisions:.1f}%); where they differ B gains "
              f"{1000.0 * res.gain_per_difference:+.1f} milli-points on average")
    else:
        print("the two agents' plays never differ")
    print(f"B ({args.b}) over A ({args.a}): {res.gain_mppd:+.2f} +- {res.se_mppd:.2f} mppd "
          "(milli-points per decision, +- one standard error)")
    if args.json:
        try:
            atomic_write_json(args.json, {
                "positions": args.positions, "classes": args.classes, "count": args.count, **res.as_dict(),
                # each differing decision: its row in the label folder and its roll
                "source": decisions.source[res.index].tolist(), "dice": decisions.dice[res.index].tolist()})
        except BgaiError as exc:
            print(f"bench_disagreements: error: {error_text(exc)}", file=sys.stderr)
            return 2
    return 130 if res.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
