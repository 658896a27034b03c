"""Evaluation accuracy against rollouts, per position class: bgai models and GNU Backgammon side by side.

Each agent (a spec of :func:`bgai.agents.registry.make_agent`; default: the shipped model at 0-ply and GNU
Backgammon 0-ply via the ``gnubg`` agent) estimates the positions of a rollout label folder (``bgai label --kind
rollout``), and :mod:`bgai.evaluate.accuracy` compares each estimate with the rollout: per class the equity RMS
and mean error (points per game, cubeless money), the mean error of each output, the cross-entropy, and the
rollouts' own standard error of P(win) (the RMS includes the rollouts' noise, the same for every agent).

This measures how well an agent knows the value of a position (what cube decisions and rollout truncation need),
not how well it plays (``scripts/bench_strength.py``).  The labels must not have been trained on by the models
compared.

Usage::

    python scripts/bench_accuracy.py data/labels/sl8db-contact-explore-rollout36
    python scripts/bench_accuracy.py FOLDER --models default default:ply=1 gnubg --json acc.json
"""

from __future__ import annotations

import sys

from bgai.cli.args import BgaiArgumentParser
from bgai.errors import BgaiError
from bgai.evaluate.accuracy import class_accuracy, probability_agent
from bgai.train.labels import load_labels
from bgai.util.fileio import atomic_write_json, check_destination
from bgai.util.threads import limit_threads

DEFAULT_MODELS = ("default", "gnubg")


def main(argv: list[str] | None = None) -> int:
    p = BgaiArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("labels", help="a rollout label folder (bgai label --kind rollout)")
    p.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), metavar="SPEC",
                   help="agent specs with probabilities (default: default gnubg)")
    p.add_argument("--json", help="also write the figures to this JSON file")
    args = p.parse_args(argv)
    limit_threads(1)
    try:
        if len(set(args.models)) < len(args.models):
            twice = next(m for m in args.models if args.models.count(m) > 1)
            raise BgaiError(f"agent {twice!r} named twice in --models")
        if args.json:
            check_destination(args.json, probe=True)
        labels = load_labels(args.labels)
        s = labels.settings
        rollout = s.get("kind") == "rollout"
        if not rollout:
            print(f"bench_accuracy: note: {args.labels!r} holds {s.get('kind')!r} labels, not rollouts: the figures "
                  "compare with that search", file=sys.stderr)
        if len(labels) == 0:
            raise BgaiError(f"{args.labels!r} holds no labels yet")
        agents = {spec: probability_agent(spec) for spec in args.models}  # every spec checked before the work
        results = {spec: class_accuracy(agent, labels) for spec, agent in agents.items()}
        if args.json:
            atomic_write_json(args.json, {"labels": args.labels, "settings": s, "results": results})
    except BgaiError as exc:
        print(f"bench_accuracy: error: {exc}", file=sys.stderr)
        return 2
    how = f" ({s.get('trials')} trials, truncation {s.get('truncate')})" if rollout else ""
    print(f"{args.labels}: {len(labels):,} positions, {s.get('kind', '?')} labels of {s.get('model', '?')}{how}")
    width = max(len(m) for m in results)
    for cls in next(iter(results.values())):
        first = next(iter(results.values()))[cls]
        se = f"rollout SE of P(win) {first['rollout_se']:.4f}" if rollout else "not rollouts"
        print(f"\n{cls}: {first['n']:,} positions ({se})")
        print(f"  {'agent':<{width}}  equity RMS  equity mean     bce    mean error per output (win, wg, wbg, lg, lbg)")
        for spec, res in results.items():
            r = res[cls]
            outs = " ".join(f"{v:+.4f}" for v in r["output_mean"])
            print(f"  {spec:<{width}}  {r['equity_rms']:10.4f}  {r['equity_mean']:+11.4f}  {r['bce']:.5f}  {outs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
