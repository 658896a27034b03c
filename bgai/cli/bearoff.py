"""``bgai bearoff build [--force]``, ``bgai bearoff show POSITION_ID`` and ``bgai bearoff attach MODEL --out FILE``:
the one-sided bear-off database.

``build`` computes the database (:mod:`bgai.model.bearoff`) and caches it in the data directory
(``$BGAI_DATA_DIR``, else ``$XDG_DATA_HOME/bgai``, else ``~/.local/share/bgai``); an existing valid file is kept
unless ``--force`` is given.  It prints the file, its size and the time taken.

``show`` takes a GNU Backgammon Position ID (side on roll's view) of a bear-off position: both sides' checkers all
on their home points, none borne off by all 15.  It prints, for each side, its database index, checkers, pip count,
expected rolls to bear off (all checkers, and the first one when it has all 15 on the board), the distribution of
the number of rolls, and then the side on roll's outcome probabilities with their cubeless equity.  A Position ID
that is not a bear-off position is an error (exit status 2).

``attach`` writes a copy of a model bundle file (``.pt``) whose ``bearoff`` class is valued by the database instead
of a net (:meth:`bgai.model.bundle.ModelBundle.with_bearoff_database`; the nets and their records, the config and
the evaluation history are kept; a training state is left out, the copy being for play).  Every agent, search,
rollout, export and server built on the copy then uses exact bear-off probabilities.  The same without a new
file: the agent spec option ``MODEL.pt:bearoff=db``.  ``--detach`` does the reverse (the race net values
bear-offs again).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

from bgai.core.equity import cubeless_equity
from bgai.core.position_id import decode_position_id
from bgai.errors import BgaiError, InvalidPositionError
from bgai.model.bearoff import (
    MAX_CHECKERS,
    NUM_HOME_POINTS,
    BearoffDatabase,
    build,
    database_path,
    get_database,
    is_bearoff,
    load,
    position_index,
)

#: Distribution entries smaller than this are not listed by ``show``.
_SHOW_MIN = 5e-7


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bearoff`` subcommand (with ``build`` and ``show``) to bgai's argument parser."""
    p = subparsers.add_parser(
        "bearoff",
        help="build or query the one-sided bear-off database",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "The exact one-sided bear-off database (as GNU Backgammon's): for each of the 54,264 ways to have\n"
            "0..15 checkers on the six home points, the distribution of the number of rolls to bear off all\n"
            "checkers, and to bear off the first one (gammons)."
        ),
        epilog=(
            "examples:\n"
            "  bgai bearoff build\n"
            "  bgai bearoff show 8P0PAADb7g4AAA\n"
            "  bgai bearoff attach checkpoints/bgai-td128.pt --out td128-bearoff.pt\n"
            "  (or, without a new file, the agent spec checkpoints/bgai-td128.pt:bearoff=db)"
        ),
    )
    sub = p.add_subparsers(dest="bearoff_command", metavar="ACTION")
    b = sub.add_parser("build", help="compute the database and cache it in the data directory")
    b.add_argument("--force", action="store_true", help="recompute and rewrite even if a valid file exists")
    b.set_defaults(func=run_build)
    s = sub.add_parser("show", help="distributions and probabilities of a bear-off position")
    s.add_argument("position_id", metavar="POSITION_ID", help="GNU Backgammon Position ID (side on roll's view)")
    s.set_defaults(func=run_show)
    a = sub.add_parser("attach", help="write a copy of a model that values bear-offs by the database")
    a.add_argument("model", metavar="MODEL", help="a bgai model bundle file (.pt)")
    a.add_argument("--out", required=True, metavar="FILE", help="the new model file (.pt; written atomically)")
    a.add_argument("--detach", action="store_true", help="the reverse: bear-offs valued by the race net again")
    a.set_defaults(func=run_attach)

    def no_action(args: argparse.Namespace) -> int:
        p.print_help()
        return 2

    p.set_defaults(func=no_action)


def run_build(args: argparse.Namespace) -> int:
    """``bgai bearoff build``: build (or keep) the cached database; prints its path, size and the time taken."""
    path = database_path()
    t0 = time.perf_counter()
    db = None
    if not args.force and path.exists():
        try:
            db = load(path)
            verb = "kept"
        except BgaiError:
            db = None  # damaged or outdated: rebuilt below
    if db is None:
        db = build(force=True)
        verb = "built"
    seconds = time.perf_counter() - t0
    size = path.stat().st_size
    print(f"{verb} {path} ({size / 1e6:.2f} MB, {db.off.shape[0]} positions, at most {db.max_rolls} rolls) "
          f"in {seconds:.1f} s" + (" (--force rebuilds it)" if verb == "kept" else ""))
    return 0


def _side_lines(name: str, counts: np.ndarray, db: BearoffDatabase) -> list[str]:
    """The summary lines of one side's distributions (rows with a probability of at least 5e-7)."""
    k = int(position_index(counts))
    on = int(counts.sum())
    full = on == MAX_CHECKERS
    pips = int(counts.astype(np.int64) @ np.arange(1, NUM_HOME_POINTS + 1))
    points = " ".join(f"{p + 1}:{int(c)}" for p, c in enumerate(counts) if c)
    lines = [
        f"{name}: index {k}, {on} checkers on the board ({points}), pip count {pips}",
        f"  expected rolls to bear off all: {float(db.expected_rolls(k)):.4f}",
    ]
    if full:
        lines.append(f"  expected rolls to bear off the first: {float(db.expected_rolls_first_off(k)):.4f}")
    dist, first = db.off[k], db.first_off[k]
    cum = np.cumsum(dist)
    lines.append("  rolls  P(all off in exactly t)  P(all off within t)" + ("  P(first off on roll t)" if full else ""))
    for t in range(len(dist)):
        if dist[t] < _SHOW_MIN and not (full and first[t] >= _SHOW_MIN):
            continue
        line = f"  {t:5d}  {dist[t]:23.6f}  {cum[t]:19.6f}"
        lines.append(line + (f"  {first[t]:22.6f}" if full else ""))
    return lines


def run_show(args: argparse.Namespace) -> int:
    """``bgai bearoff show POSITION_ID``: both sides' distributions and the side on roll's probabilities."""
    board = decode_position_id(args.position_id)
    if not is_bearoff(board)[0]:
        raise InvalidPositionError(
            f"Position ID {args.position_id.strip()!r} is not a bear-off position: each side needs all its "
            "checkers on its home points (none on the bar or points 7..24) and at least one not borne off"
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        db = get_database()  # computed in memory (with a warning) when the data directory is not writable
    for w in caught:
        print(f"bgai: warning: {w.message}", file=sys.stderr)
    probs = db.probabilities(board[None])[0]
    print(f"Position ID {args.position_id.strip()}")
    for line in _side_lines("side on roll", board[0, :NUM_HOME_POINTS], db):
        print(line)
    for line in _side_lines("opponent", board[1, :NUM_HOME_POINTS], db):
        print(line)
    equity = float(cubeless_equity(probs.astype(np.float64)[None])[0])
    print(
        "side on roll: win {:.6f}  win gammon {:.6f}  win backgammon {:.6f}  lose gammon {:.6f}  "
        "lose backgammon {:.6f}  cubeless equity {:+.6f}".format(*(float(x) for x in probs), equity)
    )
    return 0


def run_attach(args: argparse.Namespace) -> int:
    """``bgai bearoff attach MODEL --out FILE [--detach]``: a copy of the bundle file with (or without) the database
    for the ``bearoff`` class; prints what each class is valued by."""
    from bgai import __version__
    from bgai.model.bundle import FORMAT_VERSION, load_model_bundle, save_checkpoint

    if not str(args.out).lower().endswith((".pt", ".pth", ".ckpt")):
        raise BgaiError(f"--out {args.out!r} must end in .pt (a bgai model file)")
    folder = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(folder):  # as eval/rollout --json: a missing folder is a typo more often than not
        raise BgaiError(f"--out {args.out!r}: folder {folder!r} does not exist")
    if os.path.exists(args.out) and os.path.exists(args.model) and os.path.samefile(args.out, args.model):
        raise BgaiError(f"--out {args.out!r} is the model file itself; write the copy to another file")
    bundle, ckpt = load_model_bundle(str(args.model))  # short, safe errors for corrupt or foreign files
    new = bundle.without_databases() if args.detach else bundle.with_bearoff_database()
    out = {k: v for k, v in ckpt.items() if k not in ("trainer", "upgraded_from", "nets", "databases", "classifier")}
    out.update(new.file_entries())
    out["format_version"] = FORMAT_VERSION
    out["bgai_version"] = __version__
    save_checkpoint(out, args.out)
    routes = [f"{', '.join(n.classes)}: net {n.name!r}" for n in new.nets]
    routes += [f"{', '.join(d.classes)}: database {d.kind!r}" for d in new.databases]
    print(f"wrote {args.out} ({'; '.join(routes)})")
    return 0
