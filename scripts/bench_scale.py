"""Units per second of two heavy jobs on the local process pool and on Ray, with 1 and 2 workers, in one run.

    PYTHONPATH=. python scripts/bench_scale.py [--label-shards 4 --label-games 4] [--eval-units 8 --eval-games 200]

Jobs: a label job (``bgai label --kind ply1`` shards of the shipped model: the rollout-like job while
bgai.analysis.rollout is not in the tree) and an evaluation (pubeval vs racer, duplicate dice).  Each runs
through :func:`bgai.util.parallel.run_units` with ``backend='local'`` (1 worker = this process; 2 = spawned
processes) and ``backend='ray'`` (a local Ray cluster of ``--cpus`` CPUs started here, one actor per worker);
the results are checked to be equal on both backends.  Also: Ray's overhead per unit (no-op units through one
actor, milliseconds), and the efficiency ray(2) / local(2) in units per second (target >= 0.9 for units of a
second or more).  Times include starting the workers and building their context (as a command sees them).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from bgai.agents.registry import resolve_spec
from bgai.evaluate.series import build_agents, run_play_unit
from bgai.train.labels import LabelSettings, label_context, run_label_unit
from bgai.util import ray_backend
from bgai.util.parallel import run_units


def noop(context, unit):
    return unit


def timed(fn, units, *, workers, backend, setup=None, setup_args=()):
    t0 = time.perf_counter()
    run = run_units(fn, units, workers=workers, setup=setup, setup_args=setup_args, backend=backend)
    assert run.complete
    return time.perf_counter() - t0, run.ordered()


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a if k != "meta")
    if hasattr(a, "points"):
        return np.array_equal(a.points, b.points) and np.array_equal(a.points_a, b.points_a)
    return np.array_equal(np.asarray(a), np.asarray(b))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--label-shards", type=int, default=4)
    p.add_argument("--label-games", type=int, default=4, help="self-play games per label shard")
    p.add_argument("--eval-units", type=int, default=8)
    p.add_argument("--eval-games", type=int, default=200, help="games per evaluation unit")
    p.add_argument("--noop-units", type=int, default=300)
    p.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    args = p.parse_args()
    ray_backend.connect("auto", num_cpus=args.cpus)
    settings = LabelSettings(model=resolve_spec("default"), kind="ply1", seed=1, games_per_shard=args.label_games,
                             keep=0.25)
    n = args.eval_units * args.eval_games
    jobs = {
        "label (ply1 shard)": (run_label_unit, list(range(args.label_shards)), label_context, (settings,)),
        "eval (pubeval-racer)": (run_play_unit, [(3, u, n, args.eval_games, True) for u in range(args.eval_units)],
                                 build_agents, ("pubeval", "racer", False)),
    }
    rows = []
    for name, (fn, units, setup, setup_args) in jobs.items():
        times, ref = {}, None
        for backend in ("local", "ray"):
            for w in (1, 2):
                sec, res = timed(fn, units, workers=w, backend=backend, setup=setup, setup_args=setup_args)
                ref = ref or res
                assert all(same(x, y) for x, y in zip(ref, res)), f"{name}: {backend} x{w} differs"
                times[backend, w] = sec
        per_unit = times["local", 1] / len(units)
        start = {b: timed(noop, [0, 1], workers=2, backend=b, setup=setup, setup_args=setup_args)[0]
                 for b in ("local", "ray")}  # starting 2 workers and building their context
        steady = (len(units) / (times["ray", 2] - start["ray"])) / (len(units) / (times["local", 2] - start["local"]))
        rows.append((name, len(units), per_unit, {k: len(units) / v for k, v in times.items()}, start, steady))
    noop_units = list(range(args.noop_units))
    t_ray, _ = timed(noop, noop_units, workers=1, backend="ray")
    t_loc, _ = timed(noop, noop_units, workers=2, backend="local")
    print(f"{'job':<22}{'units':>6}{'s/unit':>8}{'local1':>9}{'local2':>9}{'ray1':>9}{'ray2':>9}{'ray2/local2':>13}"
          f"{'start l/r s':>13}{'steady eff':>11}")
    for name, k, per_unit, ups, start, steady in rows:
        print(f"{name:<22}{k:>6}{per_unit:>8.2f}{ups['local', 1]:>9.2f}{ups['local', 2]:>9.2f}{ups['ray', 1]:>9.2f}"
              f"{ups['ray', 2]:>9.2f}{ups['ray', 2] / ups['local', 2]:>13.2f}"
              f"{start['local']:>6.2f} /{start['ray']:>5.2f}{steady:>11.2f}")
    print("units/s for local1 .. ray2 (whole job, workers started and context built included); start: seconds to start 2 "
          "workers and build their context; steady eff: ray2 / local2 with the start taken out")
    print(f"overhead per unit, no-op units ({args.noop_units}, incl. start): Ray 1 actor {1000 * t_ray / len(noop_units):.1f} "
          f"ms; local pool 2 processes {1000 * t_loc / len(noop_units):.1f} ms")
    print(f"cpus: {os.cpu_count()} on this machine, {ray_backend.cluster_cpus()} in the Ray cluster; "
          f"python {sys.version.split()[0]}; tmp {tempfile.gettempdir()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
