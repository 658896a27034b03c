"""``bgai eval AGENT_A AGENT_B --games N --seed S [--workers W] [--json FILE] [--plain]``: play a series, report."""

from __future__ import annotations

import argparse
import os

from bgai.errors import BgaiError


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {text!r}")
    return value


def register(subparsers) -> None:
    """Add the ``eval`` subcommand."""
    from bgai.agents.registry import valid_specs

    p = subparsers.add_parser(
        "eval",
        help="play a series of games between two agents and report ppg, win and gammon rates",
        description=(
            "Play cubeless money games between AGENT_A and AGENT_B and report A's points per game with a 95%% "
            "confidence interval, win/gammon/backgammon rates for each side, average game length and speed. "
            "By default games are mirrored duplicate-dice pairs (same dice, seats swapped). "
            f"Agents: {valid_specs()}."
        ),
    )
    p.add_argument("agent_a", metavar="AGENT_A", help="agent spec, e.g. pubeval, gnubg, runs/x/best.pt:ply=1")
    p.add_argument("agent_b", metavar="AGENT_B", help="agent spec of the opponent")
    p.add_argument("--games", type=_positive_int, required=True, help="number of games (even in duplicate mode)")
    p.add_argument("--seed", type=_seed, default=0, help="series seed (default 0)")
    p.add_argument("--workers", type=_positive_int, default=1, help="processes to play in (default 1)")
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE (atomically)")
    p.add_argument("--plain", action="store_true", help="independent games instead of duplicate-dice pairs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the series and print the report; returns the exit status."""
    from bgai.evaluate import evaluate, write_json_atomic

    if args.json:
        directory = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(directory):
            raise BgaiError(f"cannot write --json {args.json!r}: directory {directory!r} does not exist")
    report = evaluate(
        args.agent_a,
        args.agent_b,
        args.games,
        args.seed,
        workers=args.workers,
        duplicate=not args.plain,
        progress=not args.no_progress,
    )
    print(report.table())
    if args.json:
        try:
            write_json_atomic(args.json, report.to_dict())
        except OSError as exc:
            raise BgaiError(f"cannot write --json {args.json!r}: {exc}") from exc
    return 0
