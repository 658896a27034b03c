"""Checker-play error rates per position class on bgai's strength benchmark (``scripts/make_strength_benchmark.py``).

For each agent (a spec of :func:`bgai.agents.registry.make_agent`; default: the shipped model at 0-ply, GNU
Backgammon 0-ply via the ``gnubg`` agent, pubeval) every decision of the benchmark is played with the agent's own
``choose`` and its play looked up among the decision's candidates (by the afterstate's Position ID).  The agent's
loss on a decision is the rolled-out equity of the best candidate minus that of its play (>= 0; 0 when it chose the
best).  Per class:

* **ER** = 1000 x the mean loss over the decisions whose chosen play is a candidate (gnubg's "error rate" in
  thousandths of a point per decision, cubeless money equity);
* its **standard error** = 1000 x std(loss, ddof=1) / sqrt(n) over those decisions (the spread between decisions
  includes the rollouts' own noise, so this covers both); the 95% interval is ER +- 1.96 SE;
* **best %**: how often the agent chose the rolled-out best candidate;
* **outside**: decisions whose chosen play is not among the candidates; they are left out of that agent's ER and
  counted here (so an agent with many of them has a lower-bound ER).  By construction the candidates include
  gnubg 0-ply's and bgai-td128 0-ply's top 5 and pubeval's choice; gnubg or bgai-td128 can still fall outside
  where more than 5 plays tie at 0-ply (a race lost with a sure gammon, every play -2.0) and its ``choose`` takes
  another of the tied plays (gnubg: 6 of the 225 decisions of strength-v1, all races).

Usage::

    python scripts/bench_strength.py                         # default agents, data/bench/strength-v1
    python scripts/bench_strength.py --models default gnubg runs/x/best.pt:ply=1 --json er.json
    python scripts/bench_strength.py --classes race --models default:ply=2     # only the race decisions
"""

from __future__ import annotations

import os
import sys

import numpy as np

from bgai.cli.args import BgaiArgumentParser
from bgai.errors import BgaiError
from bgai.evaluate.strength import (  # noqa: F401  (the script's names, as before the library module)
    CLASSES,
    FORMAT,
    Benchmark,
    agent_choices,
    choice_losses,
    class_error_rates,
    error_rate,
    load_benchmark,
    select,
)
from bgai.model.classes import CLASS_NAMES
from bgai.util.fileio import atomic_write_json, check_destination
from bgai.util.threads import limit_threads

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
DEFAULT_DATA = os.path.join(ROOT, "data", "bench", "strength-v1")
DEFAULT_MODELS = ("default", "gnubg", "pubeval")


def evaluate(models, bench: Benchmark) -> dict:
    """``{spec: {class name: error_rate dict, "all": ...}}`` for each agent spec."""
    return {spec: class_error_rates(spec, bench) for spec in models}


def table(results: dict, classes=CLASSES) -> str:
    """The side-by-side text table of :func:`evaluate`'s results, a column per class of ``classes``."""
    width = max(12, *(len(s) for s in results))
    head = f"{'agent':<{width}}" + "".join(f" | {CLASS_NAMES[c] + ' ER +- SE (n, best %)':>33}" for c in classes)
    lines = [head, "-" * len(head)]
    for spec, res in results.items():
        cells = []
        for c in classes:
            r = res[CLASS_NAMES[c]]
            extra = f", {r['outside']} out" if r["outside"] else ""
            cells.append(f"{r['er']:6.1f} +- {r['se']:4.1f} ({r['n']}, {r['best_pct']:4.1f}%{extra})")
        lines.append(f"{spec:<{width}}" + "".join(f" | {c:>33}" for c in cells))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), help="agent specs (default: %(default)s)")
    ap.add_argument("--data", default=DEFAULT_DATA, help="benchmark folder or shard (default: data/bench/strength-v1)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    ap.add_argument("--classes", nargs="+", choices=[CLASS_NAMES[c] for c in CLASSES],
                    help="play only the decisions of these classes (default: all; e.g. race for a slow 2-ply agent)")
    args = ap.parse_args(argv)
    limit_threads(1)
    try:
        if args.json:
            check_destination(args.json)  # before the work, not after it
        bench = load_benchmark(args.data)
        if args.classes:
            bench = select(bench, np.isin(bench.arrays["cls"], [CLASS_NAMES.index(c) for c in args.classes]))
        if not len(bench):
            raise BgaiError(f"{args.data} has no decisions of the classes {', '.join(args.classes)}")
        results = evaluate(args.models, bench)
    except BgaiError as exc:
        print(f"bench_strength: error: {exc}", file=sys.stderr)
        return 2
    counts = {CLASS_NAMES[c]: int((bench.arrays["cls"] == c).sum()) for c in CLASSES}
    print(f"strength benchmark {os.path.relpath(args.data, ROOT) if args.data.startswith(ROOT) else args.data}: "
          + ", ".join(f"{v} {k}" for k, v in counts.items()) + " decisions")
    print("ER = 1000 x mean equity lost per decision (cubeless money), +- one standard error\n")
    print(table(results, [c for c in CLASSES if counts[CLASS_NAMES[c]]]))
    if args.json:
        try:
            atomic_write_json(args.json, {"data": args.data, "decisions": counts, "results": results})
        except BgaiError as exc:
            print(f"bench_strength: error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
