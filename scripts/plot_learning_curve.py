#!/usr/bin/env python
"""Plot a run's learning curve: ppg against pubeval (with 95% confidence intervals) by training games.

Reads ``RUN/evals.jsonl`` (written by ``bgai train``, one JSON line per evaluation) and writes a PNG.

Usage: ``python scripts/plot_learning_curve.py runs/tdgammon [--out docs/learning_curve.png]
[--title TEXT] [--anchors]`` (``--anchors`` draws the published reference levels as dashed lines).
"""

from __future__ import annotations

import json
import os
import sys

from bgai.cli.args import BgaiArgumentParser


def main(argv=None) -> int:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="run folder holding evals.jsonl")
    ap.add_argument("--out", default=os.path.join("docs", "learning_curve.png"))
    ap.add_argument("--title", default=None)
    ap.add_argument("--anchors", action="store_true")
    args = ap.parse_args(argv)

    path = os.path.join(args.run, "evals.jsonl")
    try:
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    except OSError as exc:
        print(f"plot_learning_curve: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    rows = [r for r in rows if r.get("opponent") == "pubeval"]
    if not rows:
        print(f"plot_learning_curve: no pubeval evaluations in {path}", file=sys.stderr)
        return 2
    rows.sort(key=lambda r: r["games_trained"])

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["games_trained"] / 1000 for r in rows]
    y = [r["ppg"] for r in rows]
    ci = [r["ci95"] for r in rows]
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=120)
    ax.fill_between(x, [a - c for a, c in zip(y, ci)], [a + c for a, c in zip(y, ci)], alpha=0.25, lw=0,
                    label="95% confidence interval")
    ax.plot(x, y, marker="o", ms=3, lw=1.5, label="bgai 0-ply vs pubeval")
    ax.axhline(0.0, color="grey", lw=0.8)
    if args.anchors:
        for level, text in ((0.35, "Tesauro inputs, 80 hidden, TD(0)"), (0.48, "best published TD nets"),
                            (0.63, "GNU Backgammon 0-ply")):
            ax.axhline(level, color="grey", ls="--", lw=0.8)
            ax.text(x[0], level + 0.01, text, fontsize=7, color="dimgrey")
        ax.set_ylim(top=max(0.72, max(a + c for a, c in zip(y, ci)) + 0.03))
    ax.set_xlabel("training games (thousands)")
    ax.set_ylabel("points per game vs pubeval")
    games = rows[-1]["games"]
    ax.set_title(args.title or f"Learning curve ({games} duplicate-dice games per evaluation)")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp.png"
    fig.savefig(tmp)
    os.replace(tmp, args.out)
    print(f"wrote {args.out} ({len(rows)} evaluations, last {y[-1]:+.3f} ppg at {rows[-1]['games_trained']} games)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
