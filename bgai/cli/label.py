"""``bgai label OUT --model CKPT [--kind ply1|ply2|rollout] [--shards N] ...``: labelled positions for supervised
training, in resumable shards (:mod:`bgai.train.labels`).

Run it again with the same arguments to resume a stopped job (finished shards are kept, missing ones made);
Ctrl-C stops after writing every finished shard.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bgai.cli.args import add_ray_option, parallel_backend, positive_int, seed_type


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``label`` subcommand."""
    p = subparsers.add_parser(
        "label",
        help="sample positions from self-play and label them (search or rollout) for supervised training",
        description="Sample positions from self-play of a model and label each with its 1-ply / 2-ply evaluation "
        "or a rollout; writes resumable shards into OUT (see bgai.train.labels for the format).",
        epilog="example:  bgai label labels/ply1 --model checkpoints/bgai-td128.pt --kind ply1 --shards 20",
    )
    p.add_argument("out", metavar="OUT", help="dataset folder (created; an existing one is resumed)")
    p.add_argument("--model", default="default",
                   help="agent spec of the checkpoint that plays and labels, options allowed, e.g. "
                   "checkpoints/bgai-td128.pt:bearoff=db (default: the shipped model)")
    p.add_argument("--kind", type=str.lower, choices=("ply1", "ply2", "rollout", "trajectory"), default="ply1",
                   help="label kind (default ply1): a search, a rollout, or trajectory (every position of the games "
                   "labelled with its luck-adjusted outcome, a one-trial rollout)")
    p.add_argument("--shards", type=int, default=None,
                   help="shards in the whole job (default 10; with --relabel: as many as the positions fill)")
    p.add_argument("--games", type=int, default=200, help="self-play games per shard (default 200)")
    p.add_argument("--keep", type=float, default=None,
                   help="share of positions kept (default 0.25; with --relabel: 1, all)")
    p.add_argument("--disagree", type=float, default=0.0,
                   help="keep only positions whose 0-ply and label equity differ by more than this (default 0: all)")
    p.add_argument("--trials", type=int, default=0, help="rollout trials per position (--kind rollout)")
    p.add_argument("--truncate", type=int, default=0, help="rollout truncation in plies (--kind rollout; 0 = none)")
    p.add_argument("--classes", default=None, metavar="CLASS[,CLASS...]",
                   help="keep only positions of these classes: bearoff, race, crashed, contact (default: all)")
    p.add_argument("--explore", type=float, default=0.0,
                   help="probability that a play of the sampling games is an exploring play: a random legal play, "
                   "or one of --explore-with's (default 0: the model's self-play)")
    p.add_argument("--explore-with", default=None, metavar="AGENT[,AGENT...]",
                   help="agents that make the exploring plays, one drawn per play (default: random), e.g. "
                   "pubeval,racer,blocker,random for positions as varied as games between different bots")
    p.add_argument("--explore-plies", type=int, default=0, metavar="N",
                   help="--kind trajectory: exploring plays only in the first N plies of a game (default 0: all)")
    p.add_argument("--candidates", type=int, default=0, metavar="K",
                   help="label, instead of each sampled position, the afterstates of its K best 0-ply plays for a "
                   "drawn roll (opponent on roll): siblings that teach the net to tell plays apart (default 0: off); "
                   "with --kind trajectory: exploring plays are drawn among the K best (0: among all legal plays)")
    p.add_argument("--relabel", default=None, metavar="FOLDER[,FOLDER...]",
                   help="label the positions of these label folders (each once, of --classes) instead of self-play "
                   "samples, e.g. with a newer model's search")
    p.add_argument("--per-shard", type=positive_int, default=None,
                   help="positions per shard with --relabel (default 1000)")
    p.add_argument("--seed", type=seed_type, default=1, help="seed (default 1)")
    p.add_argument("--workers", type=positive_int, default=1, help="processes (default 1); shards do not depend on it")
    add_ray_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``bgai label``."""
    from bgai.agents.registry import resolve_spec
    from bgai.errors import BgaiError
    from bgai.train.labels import LabelSettings, LabelsInterrupted, make_labels, parse_classes

    if args.relabel is not None and not args.relabel.strip():
        raise BgaiError("--relabel: give one or more label folders (FOLDER[,FOLDER...])")
    if args.per_shard is not None and args.relabel is None:
        raise BgaiError("--per-shard sets the positions per shard of --relabel; give --relabel too")
    settings = LabelSettings(model=resolve_spec(args.model), kind=args.kind, seed=args.seed,
                             games_per_shard=args.games,
                             keep=args.keep if args.keep is not None else 1.0 if args.relabel else 0.25,
                             disagree=args.disagree,
                             trials=args.trials, truncate=args.truncate, explore=args.explore,
                             explorers=tuple(e.strip() for e in args.explore_with.split(","))
                             if args.explore_with is not None else (), candidates=args.candidates,
                             relabel=tuple(f.strip() for f in args.relabel.split(",")) if args.relabel else (),
                             per_shard=args.per_shard or 1000, explore_plies=args.explore_plies,
                             classes=parse_classes(args.classes) if args.classes is not None else ())
    t0 = time.perf_counter()

    def progress(done: int, total: int) -> None:
        print(f"  shard {done}/{total} done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)

    backend, workers = parallel_backend(args, "label")
    try:
        shards = args.shards if args.shards is not None or settings.relabel else 10
        made = make_labels(args.out, settings, shards, workers=workers, progress=progress, backend=backend)
    except LabelsInterrupted as stop:
        print(f"bgai label: {stop}; {len(stop.made)} shard(s) written, run the same command again to resume "
              f"(folder {args.out})", file=sys.stderr)
        return 130
    there = sum(1 for n in os.listdir(args.out) if n.startswith("shard-") and n.endswith(".npz"))
    print(f"{len(made)} shard(s) made in {time.perf_counter() - t0:.1f} s; {there - len(made)} already there; "
          f"folder {args.out}")
    return 0
