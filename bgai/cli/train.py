"""``bgai train --config configs/X.yaml [--out runs/NAME] [--resume] [--set key=value ...]``: training runs.

The config names the algorithm (``td``: TD(lambda) self-play; ``supervised``: labelled positions) and its
settings (:mod:`bgai.train.config`).  Shows a tqdm bar with one rate (this session's games/s or samples/s,
evaluations left out) and the latest evaluation against pubeval, and prints every evaluation as a line on
stdout (also with ``--no-progress``); writes tensorboard and JSON-lines logs and checkpoints into the run folder
(:mod:`bgai.train.loop`).  ``--resume`` continues ``OUT/last.pt`` exactly, with the checkpoint's config
(``--set`` may change it, e.g. ``--set games=2000000`` to extend the run); the closing line counts this
session's games.  Ctrl-C stops at the end of the current step and writes a loadable checkpoint first (exit
status 130).
"""

from __future__ import annotations

import os
import signal
import sys
import time


def register(subparsers) -> None:
    """Add the ``train`` subcommand."""
    p = subparsers.add_parser(
        "train",
        help="train a model: TD(lambda) self-play or supervised on labelled positions",
        description="Train a model by TD(lambda) self-play or on labelled positions (see configs/*.yaml).",
    )
    p.add_argument("--config", help="YAML config file (configs/quick.yaml, configs/tdgammon.yaml); not with --resume")
    p.add_argument("--out", help="run folder (default runs/<config name>-seed<seed>-<date>)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last.pt")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (repeatable), e.g. --set lr=1e-3 --set hidden=[128] --set td.workers=2",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar (for logs)")
    p.set_defaults(func=run)


def run(args) -> int:
    from bgai.errors import ConfigError
    from bgai.train.config import load_config, parse_override
    from bgai.train.run import train
    from bgai.train.selfplay import SelfPlayWorkerError

    if args.resume:
        if not args.out:
            raise ConfigError("--resume needs --out RUN_FOLDER")
        if args.config:
            raise ConfigError("--resume takes the config stored in the checkpoint; change it with --set key=value")
        overrides = dict(parse_override(t) for t in args.overrides)
        config, out = None, args.out
    else:
        if not args.config:
            raise ConfigError("--config is required (e.g. configs/quick.yaml)")
        config = load_config(args.config, args.overrides)
        overrides = None
        name = os.path.splitext(os.path.basename(args.config))[0]
        out = args.out or os.path.join("runs", f"{name}-seed{config.run.seed}-{time.strftime('%Y%m%d-%H%M%S')}")
    print(f"bgai train: run folder {out}", file=sys.stderr)
    if args.resume:
        workers = (overrides or {}).get("workers", (overrides or {}).get("td.workers"))
    else:
        workers = config.td.workers if config.algorithm == "td" else None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if isinstance(workers, int) and workers > cpus:
        print(f"bgai train: warning: workers={workers} but this machine gives bgai {cpus} CPU(s); the workers will "
              "share them (slower, and each takes about 300 MB of memory)", file=sys.stderr)
    def stop(signum, frame):  # SIGTERM before the training loop takes over (which saves a checkpoint first)
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, stop)
    try:
        res = train(config, out, resume=args.resume, overrides=overrides, progress=not args.no_progress,
                    lines=lambda text: print(text, flush=True))
    except SelfPlayWorkerError as exc:
        last = os.path.join(out, "last.pt")
        kept = (f"the last checkpoint {last} is intact: continue with: bgai train --out {out} --resume"
                if os.path.exists(last) else "no checkpoint had been written yet")
        print(f"bgai: error: {exc}\n{kept}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, old_term)
    unit = res.unit
    if res.interrupted:
        print(f"bgai train: interrupted after {res.games} {unit}s; checkpoint saved to {res.last_path} "
              f"(continue with: bgai train --out {out} --resume)", file=sys.stderr)
        return 130
    total = f" ({res.games} in total, {res.resumed_from} before this session)" if res.resumed_from else ""
    print(f"bgai train: {res.session} {unit}s this session in {res.seconds:.0f} s{total}; checkpoints "
          f"{res.last_path}" + (f", best {res.best_path}" if res.best_path else ""), file=sys.stderr)
    return 0
