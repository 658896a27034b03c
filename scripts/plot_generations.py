#!/usr/bin/env python
"""Plot a generations job's learning curve: ppg against pubeval (95% CI) and ER per class by generation.

Reads ``OUT/generations.jsonl`` (written by ``bgai generations``, one JSON line per finished generation,
:mod:`bgai.train.generations`) and writes a PNG with two panels: points per game against pubeval with its 95%
confidence interval, and the strength benchmark's error rate per class (contact, crashed, race) with +- one
standard error.  Generations that were not accepted as the next parent are drawn with hollow markers.

Usage: ``python scripts/plot_generations.py runs/gen [--out docs/generations.png] [--title TEXT]``
"""

from __future__ import annotations

import json
import os
import sys

from bgai.cli.args import BgaiArgumentParser

CLASSES = ("contact", "crashed", "race")


def read(path: str) -> list[dict]:
    """The records of a ``generations.jsonl`` file, by generation.

    Raises:
        OSError: unreadable file.  ValueError: a line that is not JSON.
    """
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return sorted(rows, key=lambda r: r["generation"])


def main(argv=None) -> int:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("job", help="generations output folder holding generations.jsonl")
    ap.add_argument("--out", default=os.path.join("docs", "generations.png"))
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)

    path = os.path.join(args.job, "generations.jsonl")
    try:
        rows = read(path)
    except OSError as exc:
        print(f"plot_generations: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except (ValueError, KeyError):
        print(f"plot_generations: {path} is not a generations.jsonl file", file=sys.stderr)
        return 2
    if not rows:
        print(f"plot_generations: no generation in {path}", file=sys.stderr)
        return 2

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gens = [r["generation"] for r in rows]
    with_er = [r for r in rows if r.get("er")]
    fig, axes = plt.subplots(1, 2 if with_er else 1, figsize=(10 if with_er else 5.5, 4.0), dpi=120, squeeze=False)
    ax = axes[0][0]
    y = [r["pubeval"]["ppg"] for r in rows]
    ci = [r["pubeval"]["ci95"] for r in rows]
    ax.errorbar(gens, y, yerr=ci, fmt="-", lw=1.2, capsize=4, color="C0", label="ppg vs pubeval, 95% CI")
    for r, v in zip(rows, y):
        ax.plot(r["generation"], v, "o", ms=6, color="C0", mfc="C0" if r["accepted"] else "white")
    ax.set_xlabel("generation (0 = start model)")
    ax.set_ylabel("points per game vs pubeval (0-ply)")
    games = rows[-1]["pubeval"]["games"]
    ax.set_title(f"{games:,} duplicate-dice games per point", fontsize=9)
    ax.set_xticks(gens)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    if with_er:
        ax2 = axes[0][1]
        for i, c in enumerate(CLASSES):
            xs = [r["generation"] + (i - 1) * 0.06 for r in with_er]
            ers = [r["er"][c]["er"] for r in with_er]
            ses = [r["er"][c]["se"] for r in with_er]
            ax2.errorbar(xs, ers, yerr=ses, fmt="-", lw=1.2, capsize=3, color=f"C{i + 1}", label=f"{c} ER +- SE")
            for r, x, e in zip(with_er, xs, ers):
                ax2.plot(x, e, "o", ms=5, color=f"C{i + 1}", mfc=f"C{i + 1}" if r["accepted"] else "white")
        n = {c: with_er[-1]["er"][c]["n"] for c in CLASSES}
        ax2.set_title("strength benchmark (" + ", ".join(f"{v} {k}" for k, v in n.items()) + ")", fontsize=9)
        ax2.set_xlabel("generation (0 = start model)")
        ax2.set_ylabel("ER (1000 x equity lost per decision)")
        ax2.set_xticks(gens)
        top = max(r["er"][c]["er"] + r["er"][c]["se"] for r in with_er for c in CLASSES)
        ax2.set_ylim(0, top * 1.3)
        ax2.grid(alpha=0.3)
        ax2.legend(fontsize=8, loc="upper center", ncol=3)
    fig.suptitle(args.title or "bgai generations (hollow: not accepted as the next parent)", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out} ({len(rows)} generations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
