"""``bgai generations --config configs/generations.yaml --out runs/gen``: generations of supervised training.

Each generation labels positions of its parent's self-play, trains a copy of the parent on them and evaluates
the result (:mod:`bgai.train.generations`: the config, the folder layout, resume and acceptance).  Run the same
command again to resume a stopped job; a changed config is refused.  Ctrl-C stops after writing what finished
(exit status 130).  Prints one line per step and a summary line per generation; ``OUT/generations.jsonl`` holds
the figures (``scripts/plot_generations.py`` plots them).
"""

from __future__ import annotations

import argparse
import signal
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``generations`` subcommand."""
    p = subparsers.add_parser(
        "generations",
        help="generations of supervised training: labels from the parent, train, evaluate, repeat",
        description="Run (or resume) generations of supervised training: each generation labels positions of its "
        "parent model's self-play, trains a copy of the parent on them and evaluates it (bgai.train.generations).",
        epilog="example:  bgai generations --config configs/generations.yaml --out runs/gen",
    )
    p.add_argument("--config", required=True, help="YAML config (configs/generations.yaml)")
    p.add_argument("--out", required=True, help="output folder (created; an existing one is resumed)")
    p.add_argument("--progress", action="store_true", help="training progress bars on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``bgai generations``."""
    from bgai.train.generations import GenerationsInterrupted, load_generations_config, run_generations

    config = load_generations_config(args.config)

    def stop(signum, frame):  # SIGTERM outside training (which handles it itself) stops like Ctrl-C
        raise KeyboardInterrupt("SIGTERM")

    old_term = signal.signal(signal.SIGTERM, stop)
    try:
        res = run_generations(config, args.out, lines=lambda text: print(text, flush=True), progress=args.progress)
    except (GenerationsInterrupted, KeyboardInterrupt) as exc:
        print(f"bgai generations: interrupted ({str(exc) or 'Ctrl-C'}); finished steps are kept: run the same command "
              "again to resume", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, old_term)
    print(f"{len(res.records) - 1} generation(s) finished, {len(res.steps)} step(s) run now; "
          f"{args.out}/generations.jsonl")
    return 0
