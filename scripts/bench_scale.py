"""Units per second of three heavy jobs on the local process pool and on Ray, with 1 and 2 workers, in one run.

    PYTHONPATH=. python scripts/bench_scale.py [--jobs rollout,eval,label] [--repeat 3]
        [--rollout-units 8 --rollout-trials 36] [--eval-units 8 --eval-games 1000] [--label-shards 4 --label-games 4]

Jobs, each through :func:`bgai.util.parallel.run_units` exactly as the commands run them:

* rollout: ``bgai rollout`` of a crashed position with the shipped model at 0-ply, variance reduction on; a unit
  is a range of ``--rollout-trials`` trials (:func:`bgai.analysis.rollout.run_rollout_unit`; the model spec, the
  position and the settings travel once per job);
* eval: ``bgai eval pubeval racer`` (duplicate dice), a unit is ``--eval-games`` games (1000: the largest unit a
  series makes, about a second or more per unit);
* label: ``bgai label --kind ply1`` shards of the shipped model.

Each runs with ``backend='local'`` (in a process forked before Ray is started here; 1 worker = that process; 2 =
worker processes, forked or spawned as the command would: the evaluation runs before torch is loaded) and
``backend='ray'`` (a local Ray cluster of ``--cpus`` CPUs started here, one actor per worker; "ray2 cold": on new
actors, none kept from the previous job, as a command's first job runs); the results are checked to be equal on
every backend and worker count. This process runs single-threaded (torch and BLAS), as the workers do. Times include
starting the workers and building their context (as a command sees them); with ``--repeat R`` each configuration
runs R times and the median is used; local and Ray runs alternate, so that both see the same load. Printed per job:
seconds per unit (local, 1 worker), units per second for each configuration, Ray's overhead per unit (Ray 1 actor
minus local 1 process, wall milliseconds per unit, start included), the efficiency Ray 2 workers / local 2 workers
(target >= 0.9 for units of a second or more) and the same with the start-up of each backend taken out. Also the
round trip of a no-op unit through a Ray actor and through the local pool (start-up excluded).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time

import numpy as np

from bgai.agents.registry import resolve_spec
from bgai.analysis.rollout import rollout_context, run_rollout_unit
from bgai.cli.args import BgaiArgumentParser
from bgai.core.position_id import decode_position_id
from bgai.evaluate.series import build_agents, run_play_unit
from bgai.train.labels import LabelSettings, label_context, run_label_unit
from bgai.util import ray_backend
from bgai.util.parallel import run_units, start_method
from bgai.util.threads import limit_threads

#: A crashed position (the rollout tests' ``CRASHED``).
ROLLOUT_POSITION = "fw8AAOHNjgEBCA"


def noop(context, unit):
    return unit


def ray_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of each live process of the Ray cluster on this machine (its daemons, its
    workers and actors), by process id, from /proc; empty where /proc is missing."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
            if b"ray" not in cmd:
                continue
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return out


def cpu_now(backend: str) -> tuple[float, dict[int, float]]:
    """This process's CPU seconds with its reaped children (the local pool's workers), and the Ray processes'."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system, ray_cpu() if backend == "ray" else {}


def timed(fn, units, *, workers, backend, setup=None, setup_args=()):
    """(wall seconds, results, CPU seconds) of one job: the CPU of this process, of its workers (local) or of
    every process of the Ray cluster on this machine (its actors and daemons; a process that ended during the job
    counts up to the last look before the job)."""
    c0, r0 = cpu_now(backend)
    t0 = time.perf_counter()
    run = run_units(fn, units, workers=workers, setup=setup, setup_args=setup_args, backend=backend)
    wall = time.perf_counter() - t0
    c1, r1 = cpu_now(backend)
    assert run.complete
    return wall, run.ordered(), c1 - c0 + sum(v - r0.get(pid, 0.0) for pid, v in r1.items())


def local_runner(conn, jobs: dict, noop_units: list) -> None:
    """The local backend's runs, in a process forked before Ray was started: ``('job', name, workers)`` ->
    ``(wall, results, CPU, start method)``, ``('start', name)`` -> seconds to start 2 workers and build their
    context, ``('rt',)`` -> a no-op unit's round trip through 2 workers (ms); ``None`` ends it."""
    while (msg := conn.recv()) is not None:
        if msg[0] == "rt":
            full = timed(noop, noop_units, workers=2, backend="local")[0]
            empty = timed(noop, [0, 0], workers=2, backend="local")[0]
            conn.send(1000 * (full - empty) / (len(noop_units) - 2))
            continue
        fn, units, setup, setup_args = jobs[msg[1]]
        if not msg[1].startswith("eval") and "torch" not in sys.modules:
            import torch  # noqa: F401 - its network loads it here: one thread, as in the workers

            limit_threads(1)
        if msg[0] == "job":
            how = start_method() if msg[2] > 1 else "in-process"
            conn.send((*timed(fn, units, workers=msg[2], backend="local", setup=setup, setup_args=setup_args), how))
        else:
            conn.send(timed(noop, [0, 1], workers=2, backend="local", setup=setup, setup_args=setup_args)[0])


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a if k != "meta")
    if hasattr(a, "points"):
        return np.array_equal(a.points, b.points) and np.array_equal(a.points_a, b.points_a)
    return np.array_equal(np.asarray(a), np.asarray(b))


def main() -> int:
    p = BgaiArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", default="rollout,eval,label", help="comma-separated: rollout, eval, label")
    p.add_argument("--repeat", type=int, default=1, help="runs per configuration (median reported)")
    p.add_argument("--rollout-units", type=int, default=8)
    p.add_argument("--rollout-trials", type=int, default=36, help="trials per rollout unit")
    p.add_argument("--eval-units", type=int, default=8)
    p.add_argument("--eval-games", type=int, default=1000, help="games per evaluation unit")
    p.add_argument("--label-shards", type=int, default=4)
    p.add_argument("--label-games", type=int, default=4, help="self-play games per label shard")
    p.add_argument("--noop-units", type=int, default=300)
    p.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    args = p.parse_args()
    wanted = [j.strip() for j in args.jobs.split(",") if j.strip()]
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    limit_threads(1)  # this process as a worker: one torch / BLAS thread (as bgai rollout does with 1 worker)
    model = resolve_spec("default")
    jobs = {}
    if "rollout" in wanted:
        roots = decode_position_id(ROLLOUT_POSITION)[None].astype(np.int8)
        kw = {"seed": 1, "truncate": None, "variance_reduction": True}
        k = args.rollout_trials
        jobs["rollout (0-ply, VR)"] = (run_rollout_unit, [(u * k, (u + 1) * k) for u in range(args.rollout_units)],
                                       rollout_context, (model, 0, roots, kw))
    if "eval" in wanted:
        n = args.eval_units * args.eval_games
        units = [(3, u, n, args.eval_games, True) for u in range(args.eval_units)]
        jobs["eval (pubeval-racer)"] = (run_play_unit, units, build_agents, ("pubeval", "racer", False))
    if "label" in wanted:
        settings = LabelSettings(model=model, kind="ply1", seed=1, games_per_shard=args.label_games, keep=0.25)
        jobs["label (ply1 shard)"] = (run_label_unit, list(range(args.label_shards)), label_context, (settings,))
    rows = []
    times, cpu_s, start, refs = {}, {}, {}, {}
    order = sorted(jobs, key=lambda n: not n.startswith("eval"))  # the evaluation before torch is loaded
    noop_units = list(range(args.noop_units))
    # the local backend runs in a process forked before Ray is started here, so that its pool forks or spawns its
    # workers as the command would (Ray's threads in this process would make it spawn them:
    # bgai.util.parallel.start_method); local and Ray runs alternate, so that both see the same load
    ctx = mp.get_context("fork")
    conn, child = ctx.Pipe()
    runner = ctx.Process(target=local_runner, args=(child, jobs, noop_units), name="bench-local")
    runner.start()
    child.close()
    ray_backend.connect("auto", num_cpus=args.cpus)

    def local(*msg):
        conn.send(msg)
        return conn.recv()

    def ray_cold(*a, **kw):
        ray_backend.release_workers()  # no actors kept from the previous job: each starts its process
        time.sleep(0.5)  # let them end before the CPU is looked at
        return timed(*a, **kw)

    for name in order:
        fn, units, setup, setup_args = jobs[name]
        runs: dict = {}
        how = ""
        for _ in range(args.repeat):
            got = {}
            for w in (1, 2):
                *got["local", w], how = local("job", name, w)
            for w in (1, 2):
                got["ray", w] = timed(fn, units, workers=w, backend="ray", setup=setup, setup_args=setup_args)
            got["ray2 cold"] = ray_cold(fn, units, workers=2, backend="ray", setup=setup, setup_args=setup_args)
            for key, (sec, res, cpu) in got.items():
                ref = refs.setdefault(name, res)
                assert all(same(x, y) for x, y in zip(ref, res)), f"{name}: {key} differs"
                runs.setdefault(key, []).append((sec, cpu))
            # starting 2 workers and building their context
            runs.setdefault("start local", []).append((local("start", name), 0.0))
            runs.setdefault("start ray", []).append(
                (timed(noop, [0, 1], workers=2, backend="ray", setup=setup, setup_args=setup_args)[0], 0.0))
            runs.setdefault("start ray cold", []).append(
                (ray_cold(noop, [0, 1], workers=2, backend="ray", setup=setup, setup_args=setup_args)[0], 0.0))
        print(f"  {name}: local workers {how}ed", file=sys.stderr, flush=True)
        for key, rs in runs.items():
            times[name, key] = statistics.median(r[0] for r in rs)
            cpu_s[name, key] = statistics.median(r[1] for r in rs)
            print(f"  {name} {key}: {times[name, key]:.2f} s (runs {', '.join(f'{r[0]:.2f}' for r in rs)}; "
                  f"CPU s {', '.join(f'{r[1]:.2f}' for r in rs)})", file=sys.stderr, flush=True)
        start.update({(name, b): times[name, f"start {b}"] for b in ("local", "ray", "ray cold")})
        t = {k: times[name, k] for k in (("local", 1), ("local", 2), ("ray", 1), ("ray", 2), "ray2 cold")}
        steady = (t["local", 2] - start[name, "local"]) / (t["ray", 2] - start[name, "ray"])
        overhead_ms = 1000 * (t["ray", 1] - t["local", 1]) / len(units)
        rows.append((name, len(units), t["local", 1] / len(units), {k: len(units) / v for k, v in t.items()},
                     overhead_ms, [start[name, b] for b in ("local", "ray", "ray cold")], steady,
                     {k: cpu_s[name, k] / len(units) for k in t}))
    rt = {"local": local("rt")}
    conn.send(None)
    runner.join()

    def round_trip(b, w):
        full = timed(noop, noop_units, workers=w, backend=b)[0]
        empty = timed(noop, [0] * w, workers=w, backend=b)[0]
        return 1000 * (full - empty) / (len(noop_units) - w)

    rt["ray"] = round_trip("ray", 1)
    print(f"{'job':<22}{'units':>6}{'s/unit':>7}{'local1':>8}{'local2':>8}{'ray1':>8}{'ray2':>8}{'ray2c':>8}"
          f"{'ovh ms':>7}{'eff r2/l2':>10}{'eff cold':>9}{'start l/r/rc s':>17}{'steady eff':>11}")
    for name, k, per_unit, ups, ovh, st, steady, _ in rows:
        print(f"{name:<22}{k:>6}{per_unit:>7.2f}{ups['local', 1]:>8.3f}{ups['local', 2]:>8.3f}{ups['ray', 1]:>8.3f}"
              f"{ups['ray', 2]:>8.3f}{ups['ray2 cold']:>8.3f}{ovh:>7.0f}{ups['ray', 2] / ups['local', 2]:>10.2f}"
              f"{ups['ray2 cold'] / ups['local', 2]:>9.2f}{st[0]:>7.2f} /{st[1]:>4.2f} /{st[2]:>4.2f}{steady:>11.2f}")
    print("local1 .. ray2: units/s of the whole job (workers started and context built included; median of "
          f"{args.repeat}); ray2c: ray2 on new actors (none kept from the previous job: each starts its process); "
          "ovh: (ray1 - local1) wall ms per unit; eff: ray2 / local2 units/s (cold: ray2c / local2); start: seconds "
          "to start 2 workers and build their context (local, Ray, Ray on new actors); steady eff: eff with each "
          "backend's start taken out")
    print("CPU seconds per unit (median of the runs; local: this process and its workers; Ray: this process and "
          "every Ray process on this machine, daemons included):")
    for name, k, *_, cpu in rows:
        print(f"  {name:<22} " + "  ".join(f"{lab} {cpu[key]:.3f}" for lab, key in (
            ("local1", ("local", 1)), ("local2", ("local", 2)), ("ray1", ("ray", 1)), ("ray2", ("ray", 2)),
            ("ray2c", "ray2 cold"))) + f"   ray2 / local2 {cpu['ray', 2] / cpu['local', 2]:.2f}"
              f", ray2c / local2 {cpu['ray2 cold'] / cpu['local', 2]:.2f}")
    print(f"no-op unit round trip (start excluded, {args.noop_units} units): Ray 1 actor {rt['ray']:.2f} ms; "
          f"local pool 2 processes {rt['local']:.2f} ms")
    print(f"cpus: {os.cpu_count()} on this machine, {ray_backend.cluster_cpus()} in the Ray cluster; "
          f"python {sys.version.split()[0]}; tmp {tempfile.gettempdir()}; load average before/after: "
          f"{load0} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
