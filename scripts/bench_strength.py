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

import argparse
import glob
import json
import math
import os
import sys
from dataclasses import dataclass

import numpy as np

from bgai.agents.registry import make_agent
from bgai.core.position_id import encode_position_ids
from bgai.errors import BgaiError
from bgai.model.classes import CLASS_CONTACT, CLASS_CRASHED, CLASS_NAMES, CLASS_RACE
from bgai.util.fileio import atomic_write_json, check_destination
from bgai.util.threads import limit_threads

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
DEFAULT_DATA = os.path.join(ROOT, "data", "bench", "strength-v1")
DEFAULT_MODELS = ("default", "gnubg", "pubeval")
FORMAT = "bgai-strength-bench"
CLASSES = (CLASS_CONTACT, CLASS_CRASHED, CLASS_RACE)

ARRAYS = ("position_id", "board", "dice", "cls", "seed", "play", "after_id", "equity", "equity_se", "loss", "loss_se",
          "probs", "source")


@dataclass
class Benchmark:
    """The decisions of a strength benchmark (all shards concatenated; see make_strength_benchmark.py for the
    arrays).  ``offsets`` ``(N + 1,)``: the candidates of decision ``i`` are rows ``offsets[i]:offsets[i + 1]`` of
    the candidate arrays, best first."""

    arrays: dict
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.arrays["position_id"])


def load_benchmark(data: str, limit: int | None = None) -> Benchmark:
    """Load a benchmark folder (its ``round-*.npz`` shards in order) or one shard file.

    Args:
        data: folder with ``dataset.json`` and shards, or a ``.npz`` shard.
        limit: keep only the first ``limit`` decisions of every shard (None = all).

    Raises:
        BgaiError: no shard, or a shard of another format or version.
    """
    paths = [data] if data.endswith(".npz") else sorted(glob.glob(os.path.join(data, "round-*.npz")))
    if not paths:
        raise BgaiError(f"no benchmark shards (round-*.npz) in {data!r}; build them with "
                        "scripts/make_strength_benchmark.py")
    parts: dict[str, list] = {k: [] for k in ARRAYS}
    offsets = [np.zeros(1, dtype=np.int64)]
    for path in paths:
        try:
            z = np.load(path)
            meta = json.loads(str(z["meta"]))
        except Exception as exc:  # numpy/zipfile raise many kinds for a damaged or foreign file
            raise BgaiError(f"{path}: not a readable {FORMAT} shard ({type(exc).__name__})") from None
        with z:
            if meta.get("format") != FORMAT or meta.get("format_version") != 1:
                raise BgaiError(f"{path}: not a {FORMAT} version 1 shard")
            off = z["offsets"]
            n = len(z["position_id"]) if limit is None else min(limit, len(z["position_id"]))
            m = int(off[n])
            for k in ARRAYS:
                per_decision = k in ("position_id", "board", "dice", "cls", "seed")
                parts[k].append(z[k][:n] if per_decision else z[k][:m])
            offsets.append(off[1 : n + 1] + offsets[-1][-1])
    arrays = {k: np.concatenate(v) for k, v in parts.items()}
    return Benchmark(arrays=arrays, offsets=np.concatenate(offsets))


def select(bench: Benchmark, keep: np.ndarray) -> Benchmark:
    """The decisions ``keep`` (``(N,)`` bool) of a benchmark, with their candidates, in order."""
    idx = np.flatnonzero(np.asarray(keep, dtype=bool))
    off = bench.offsets
    rows = np.concatenate([np.arange(off[i], off[i + 1]) for i in idx]) if idx.size else np.zeros(0, np.int64)
    counts = off[idx + 1] - off[idx]
    arrays = {k: (v[idx] if k in ("position_id", "board", "dice", "cls", "seed") else v[rows])
              for k, v in bench.arrays.items()}
    return Benchmark(arrays=arrays, offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))


def choice_losses(bench: Benchmark, chosen_ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Loss of each decision's chosen play: ``(loss (N,) float64, NaN when outside the candidates; best (N,) bool)``.

    Args:
        bench: the benchmark.
        chosen_ids: Position ID of the afterstate the agent chose for each decision (mover's view).
    """
    a, off = bench.arrays, bench.offsets
    loss = np.full(len(bench), np.nan)
    for i, pid in enumerate(chosen_ids):
        ids = a["after_id"][off[i] : off[i + 1]]
        hit = np.flatnonzero(ids == pid)
        if hit.size:
            loss[i] = max(0.0, float(a["loss"][off[i] + hit[0]]))
    return loss, loss == 0.0


def error_rate(loss: np.ndarray) -> dict:
    """ER statistics of per-decision losses (NaN = outside the candidates).

    Returns:
        ``{"n", "outside", "er", "se", "best_pct"}``: decisions counted, decisions outside, ER = 1000 x mean loss,
        its standard error 1000 x std(ddof=1) / sqrt(n) (NaN when n < 2), % of counted decisions with loss 0.
    """
    loss = np.asarray(loss, dtype=np.float64)
    ok = loss[~np.isnan(loss)]
    n = int(ok.size)
    er = 1000.0 * float(ok.mean()) if n else float("nan")
    se = 1000.0 * float(ok.std(ddof=1)) / math.sqrt(n) if n > 1 else float("nan")
    best = 100.0 * float((ok == 0.0).mean()) if n else float("nan")
    return {"n": n, "outside": int(loss.size - n), "er": er, "se": se, "best_pct": best}


def agent_choices(agent, bench: Benchmark, seed: int = 0, batch: int = 256) -> list[str]:
    """Position IDs of the agent's play (``agent.choose``) in every decision, in batches."""
    boards, dice = bench.arrays["board"], bench.arrays["dice"].astype(np.int64)
    rng = np.random.default_rng(seed)
    out: list[str] = []
    for i in range(0, len(boards), batch):
        out += encode_position_ids(np.asarray(agent.choose(boards[i : i + batch], dice[i : i + batch], rng)))
    return out


def evaluate(models, bench: Benchmark) -> dict:
    """``{spec: {class name: error_rate dict, "all": ...}}`` for each agent spec."""
    results = {}
    cls = bench.arrays["cls"]
    for spec in models:
        loss, _ = choice_losses(bench, agent_choices(make_agent(spec), bench))
        res = {CLASS_NAMES[c]: error_rate(loss[cls == c]) for c in CLASSES}
        results[spec] = res
    return results


def table(results: dict) -> str:
    """The side-by-side text table of :func:`evaluate`'s results."""
    width = max(12, *(len(s) for s in results))
    head = f"{'agent':<{width}}" + "".join(f" | {CLASS_NAMES[c] + ' ER +- SE (n, best %)':>33}" for c in CLASSES)
    lines = [head, "-" * len(head)]
    for spec, res in results.items():
        cells = []
        for c in CLASSES:
            r = res[CLASS_NAMES[c]]
            extra = f", {r['outside']} out" if r["outside"] else ""
            cells.append(f"{r['er']:6.1f} +- {r['se']:4.1f} ({r['n']}, {r['best_pct']:4.1f}%{extra})")
        lines.append(f"{spec:<{width}}" + "".join(f" | {c:>33}" for c in cells))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
        results = evaluate(args.models, bench)
    except BgaiError as exc:
        print(f"bench_strength: error: {exc}", file=sys.stderr)
        return 2
    counts = {CLASS_NAMES[c]: int((bench.arrays["cls"] == c).sum()) for c in CLASSES}
    print(f"strength benchmark {os.path.relpath(args.data, ROOT) if args.data.startswith(ROOT) else args.data}: "
          + ", ".join(f"{v} {k}" for k, v in counts.items()) + " decisions")
    print("ER = 1000 x mean equity lost per decision (cubeless money), +- one standard error\n")
    print(table(results))
    if args.json:
        try:
            atomic_write_json(args.json, {"data": args.data, "decisions": counts, "results": results})
        except BgaiError as exc:
            print(f"bench_strength: error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
