#!/usr/bin/env python
"""Rollout speed: bgai with a bgai network against GNU Backgammon, per core, on the same positions in one run.

bgai: :func:`bgai.analysis.rollout.rollout_position` with ``checkpoints/bgai-td128.pt`` (built by
:func:`bgai.agents.registry.make_agent`) at 0-ply, cubeless, played to the end, in this process (one thread).
GNU Backgammon: ``gnubg -t`` (1.07, one thread) rolls out the same positions with the same number of trials at
0-ply, cubeless, played to the end (``scripts/check_rollout_gnubg.py`` has the settings); its start-up time
(loading nets and databases, measured with an empty session) is subtracted.  Both are measured in CPU seconds
(``time.process_time`` for bgai, ``getrusage(RUSAGE_CHILDREN)`` for gnubg), the best of ``--repeats`` runs, so
that other load on the machine does not count; per position class and overall.  ``gnubg_nn.rollout`` (gnubg-nn
1.1.0a11) cannot be timed instead: its argument parsing is broken (it crashes or rolls out garbage; see
``scripts/check_rollout_gnubg.py``).

Both are timed without variance reduction (the common setting for speed) and, with ``--vr``, with it (GNU
Backgammon's lookahead variance reduction is about 30 times slower per trial, so use few trials).

With ``--bearoff-db`` bgai is timed twice in the same run: the model as it is, and with the exact bear-off
database (agent spec ``MODEL:bearoff=db``: trials end when they reach a bear-off, as GNU Backgammon's rollouts with
``bearofftruncation onesided on``; :mod:`bgai.analysis.rollout`, (g)).  GNU Backgammon's rollouts stay played to
the end (bear-off truncation off, as in ``scripts/check_rollout_gnubg.py``), the same reference for both.

Usage::

    python scripts/bench_rollout.py [--positions 8] [--trials 1296] [--vr --vr-trials 72] [--seed 1] [--bearoff-db]

Prints trials per CPU second of each and the ratio bgai / gnubg (both on one core).
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np

from bgai.cli.args import BgaiArgumentParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from check_rollout_gnubg import find_gnubg, gnubg_rollouts, run_on_pty, sample_positions

from bgai.agents.registry import make_agent
from bgai.analysis.rollout import rollout_position
from bgai.util.threads import limit_threads

MODEL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "checkpoints", "bgai-td128.pt")


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def gnubg_startup(gnubg: str) -> float:
    """CPU seconds of an empty ``gnubg -t`` session (start-up and exit; the least of three)."""
    best = float("inf")
    for _ in range(3):
        c0 = _children_cpu()
        run_on_pty([gnubg, "-t", "-q", "-r"], "set threads 1\nquit\n", 120)
        best = min(best, _children_cpu() - c0)
    return best


def gnubg_cpu(boards: np.ndarray, trials: int, seed: int, gnubg: str, vr: bool, startup: float) -> float:
    """CPU seconds GNU Backgammon spends rolling out ``boards`` (start-up subtracted)."""
    c0 = _children_cpu()
    gnubg_rollouts(boards, trials, seed, gnubg, threads=1, variance_reduction=vr)
    return max(_children_cpu() - c0 - startup, 1e-9)


def bgai_cpu(agent, boards: np.ndarray, trials: int, seed: int, vr: bool) -> float:
    """CPU seconds bgai spends rolling out ``boards`` (this process, one thread)."""
    c0 = time.process_time()
    for k, b in enumerate(boards):
        rollout_position(agent, b, trials=trials, seed=seed + k, variance_reduction=vr)
    return time.process_time() - c0


def per_copy(sel: np.ndarray, cost, repeats: int) -> float:
    """CPU seconds ``cost(work)`` takes per copy of ``sel``: the best of ``repeats`` runs on ``reps`` copies,
    ``reps`` grown until a run takes at least 2 CPU seconds (at most 256 copies)."""
    reps = 1
    while True:
        work = np.concatenate([sel] * reps)
        t = min(cost(work) for _ in range(repeats))
        if t >= 2.0 or reps >= 256:
            return t / reps
        reps = min(256, reps * max(2, min(16, int(2.0 / max(t, 0.01)) + 1)))


def main(argv: list[str] | None = None) -> int:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=8, help="positions, a quarter per class (default 8)")
    ap.add_argument("--trials", type=int, default=1296, help="trials per position without VR (default 1296)")
    ap.add_argument("--vr", action="store_true", help="also time rollouts with variance reduction")
    ap.add_argument("--vr-trials", type=int, default=36, help="trials per position with VR (default 36)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=2, help="time each part this many times, keep the best")
    ap.add_argument("--model", default=MODEL, help="bgai checkpoint (default checkpoints/bgai-td128.pt)")
    ap.add_argument("--bearoff-db", action="store_true", help="also time bgai with the exact bear-off database "
                    "(MODEL:bearoff=db) in the same run")
    args = ap.parse_args(argv)
    gnubg = find_gnubg()
    if gnubg is None:
        print("gnubg is not installed (apt-get install gnubg)", file=sys.stderr)
        return 2
    limit_threads(1)
    agents = {"bgai": make_agent(args.model)}
    if args.bearoff_db:
        agents["bgai+db"] = make_agent(args.model + ":bearoff=db")
    boards, groups = sample_positions(args.positions, args.seed)
    print(f"{len(boards)} positions ({', '.join(sorted(set(groups)))}), 0-ply cubeless rollouts played to the end, "
          f"one core each; bgai agent {os.path.basename(args.model)}")
    startup = gnubg_startup(gnubg)
    names = list(dict.fromkeys(groups))
    rows = [("without variance reduction", args.trials, False)]
    if args.vr:
        rows.append(("with variance reduction", args.vr_trials, True))
    for label, trials, vr in rows:
        print(f"{label}, {trials} trials per position (trials per CPU second; best of {args.repeats}):")
        head = "".join(f"{k:>10s}" for k in agents) + f"{'gnubg':>10s}" + "".join(
            f"{'ratio' + k[4:]:>10s}" for k in agents)
        print(f"  {'class':10s}{head}")
        tot_ours = dict.fromkeys(agents, 0.0)
        tot_theirs = 0.0
        for name in names:
            sel = boards[[g == name for g in groups]]
            # CPU seconds per copy of the class's positions, each measurement repeated on copies of them until it
            # takes >= 2 CPU seconds (gnubg's start-up varies ~0.05 s; bear-offs with the database take ~0)
            ours = {k: per_copy(sel, lambda w, a=a: bgai_cpu(a, w, trials, args.seed, vr), args.repeats)
                    for k, a in agents.items()}
            theirs = per_copy(sel, lambda w: gnubg_cpu(w, trials, args.seed, gnubg, vr, startup), args.repeats)
            n = len(sel) * trials
            for k in agents:
                tot_ours[k] += ours[k]
            tot_theirs += theirs
            print(f"  {name:10s}" + "".join(f"{n / ours[k]:10.1f}" for k in agents) + f"{n / theirs:10.1f}"
                  + "".join(f"{theirs / ours[k]:10.2f}" for k in agents))
        n = len(boards) * trials  # every class weighted by its positions, once
        print(f"  {'all':10s}" + "".join(f"{n / tot_ours[k]:10.1f}" for k in agents) + f"{n / tot_theirs:10.1f}"
              + "".join(f"{tot_theirs / tot_ours[k]:10.2f}" for k in agents) + "   <- ratio bgai / gnubg per core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
