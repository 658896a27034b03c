"""Benchmark bgai's n-ply search against GNU Backgammon's (gnubg_nn), same positions, same run, per core.

Four tasks, each timed for bgai's :class:`~bgai.agents.neural.NeuralAgent` and for gnubg-nn side by side:

* ``eval1`` / ``eval2``: the 1-ply / 2-ply probabilities of positions before the roll;
  bgai ``NeuralAgent(ply=n).probabilities(boards)`` (one batched call for the round's positions) against
  ``gnubg_nn.probabilities(board, n)`` called once per position;
* ``move1`` / ``move2``: the best play of (position, roll) pairs at 1-ply / 2-ply;
  bgai ``NeuralAgent(ply=n).choose(boards, dice)`` against ``gnubg_nn.best_move(board, d1, d2, n)``;
* ``play0``: the latency of one position: the best play of one (position, roll) at 0-ply per call, bgai
  ``NeuralAgent(ply=0).choose(board[None], dice[None])`` against ``gnubg_nn.best_move(board, d1, d2, 0)``
  (median call time; in-process, no server).

Positions: seeded pubeval-vs-pubeval self-play (:class:`~bgai.agents.pubeval.PubevalAgent`, 256 games at once,
the positions before each roll from the third play on), distinct, shuffled; the pairs of the ``move`` tasks get
a seeded random roll and are kept only when the roll leaves at least two distinct plays.  gnubg-nn keeps a cache
of evaluations (a second pass over the same positions is 100x faster), so **every round of every task uses fresh
positions**, the same ones for both engines; within a round gnubg's cache works as in normal use.

Per core: both engines run single-threaded (numpy's BLAS and torch limited to one thread with threadpoolctl, as
gnubg-nn is), timed with the process CPU clock (``--wall`` for wall time); the order of the two engines
alternates from round to round.  Each row prints the median over rounds of positions (or pairs) per second for
both and the median of the per-round ratios bgai/gnubg.

``--old FILE`` (a saved copy of an earlier ``bgai/agents/neural.py``) times that module's agent as a third
column and counts how often the current ``move`` tasks choose the same play as it does.  ``--quality N``
measures the play choices instead of the speed: on N pairs, how often the 1-ply move filter in front of 2-ply
(``NeuralAgent.filter_keep`` / ``filter_margin``, and other settings) keeps the play a 2-ply search of every
0-ply candidate chooses, and the 2-ply equity it gives up (see :func:`quality`).

Usage: ``python scripts/bench_search.py [--model checkpoints/bgai-td128.pt] [--rounds 5] [--seed 1]
[--tasks eval1 eval2 move1 move2 play0] [--eval1 100] [--eval2 20] [--move1 100] [--move2 10] [--play0 100] [--wall]
[--old FILE] [--quality N]``
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time

import gnubg_nn
import numpy as np
import threadpoolctl
import torch
from positions import selfplay_positions  # scripts/positions.py

from bgai.agents.neural import NeuralAgent
from bgai.cli.args import BgaiArgumentParser
from bgai.core.movegen import afterstates

DEFAULT_MODEL = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "bgai-td128.pt")


def decision_pairs(boards: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random roll per position; only the pairs with at least two distinct legal plays."""
    rng = np.random.default_rng(seed + 1)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    _, src = afterstates(boards, dice, validate=False)
    keep = np.bincount(src, minlength=len(boards)) >= 2
    return boards[keep], dice[keep]


def gnubg_board(b: np.ndarray) -> list[list[int]]:
    """gnubg-nn's layout ``[[opponent 25], [side on roll 25]]``."""
    return [b[1].tolist(), b[0].tolist()]


def load_module(path: str):
    spec = importlib.util.spec_from_file_location("neural_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["neural_old"] = mod
    spec.loader.exec_module(mod)
    return mod


def make_agents(model: str, old_path: str | None) -> dict[str, dict[int, object]]:
    agents = {"bgai": {n: NeuralAgent.load(model, ply=n) for n in (0, 1, 2)}}
    if old_path:
        old = load_module(old_path)
        agents["old"] = {n: old.NeuralAgent.load(model, ply=n) for n in (0, 1, 2)}
    return agents


def timed(clock, fn) -> tuple[float, object]:
    t = clock()
    out = fn()
    return clock() - t, out


def run_task(task: str, boards: np.ndarray, dice: np.ndarray | None, agents: dict, clock, rng) -> dict:
    """Seconds of each engine on one round's inputs, and the plays chosen (move tasks)."""
    ply = int(task[-1])
    gbs = [gnubg_board(b) for b in boards]  # conversion not timed
    res: dict[str, tuple[float, object]] = {}
    if task == "play0":  # one call per pair: the median of the calls' times
        dl = dice.tolist()
        calls = {"gnubg": lambda i: gnubg_nn.best_move(gbs[i], dl[i][0], dl[i][1], 0)}
        for name, a in agents.items():
            calls[name] = lambda i, a=a: a[0].choose(boards[i : i + 1], dice[i : i + 1], rng)
        for name, call in calls.items():
            ts, out = [], []
            for i in range(len(boards)):
                t, o = timed(clock, lambda: call(i))
                ts.append(t)
                out.append(o)
            res[name] = (float(np.median(ts)), np.concatenate(out) if name != "gnubg" else None)
        return res
    if task.startswith("eval"):
        res["gnubg"] = timed(clock, lambda: [gnubg_nn.probabilities(g, ply) for g in gbs])
        for name, a in agents.items():
            res[name] = timed(clock, lambda a=a: a[ply].probabilities(boards))
    else:
        dl = dice.tolist()
        res["gnubg"] = timed(clock, lambda: [gnubg_nn.best_move(g, d1, d2, ply) for g, (d1, d2) in zip(gbs, dl)])
        for name, a in agents.items():
            res[name] = timed(clock, lambda a=a: a[ply].choose(boards, dice, rng))
    return res


def bench(args, agents, pool: np.ndarray) -> None:
    clock = time.perf_counter if args.wall else time.process_time
    sizes = {t: getattr(args, t) for t in args.tasks}
    times: dict[str, dict[str, list[float]]] = {t: {} for t in args.tasks}
    counts: dict[str, list[int]] = {t: [] for t in args.tasks}
    same_old: dict[str, list[int]] = {t: [0, 0] for t in args.tasks}
    rng = np.random.default_rng(args.seed)
    at = 0
    for r in range(args.rounds):
        for task in args.tasks:
            n = sizes[task]
            if task.startswith("eval"):
                boards, dice = pool[at : at + n], None
                at += n
            else:
                boards, dice = decision_pairs(pool[at : at + 2 * n], args.seed + r)
                at += 2 * n
                boards, dice = boards[:n], dice[:n]
            if len(boards) < n:
                raise SystemExit("position pool exhausted: lower --rounds or the task sizes")
            order = list(agents) + ["gnubg"]
            if r % 2:
                order.reverse()
            res = run_task(task, boards, dice, {k: agents[k] for k in order if k != "gnubg"}, clock, rng)
            for name, (t, _) in res.items():
                times[task].setdefault(name, []).append(t)
            counts[task].append(len(boards))
            if "old" in res and task.startswith("move"):
                same = np.all(res["old"][1] == res["bgai"][1], axis=(1, 2))
                same_old[task][0] += int(same.sum())
                same_old[task][1] += len(same)
    unit = {"eval": "positions/s", "move": "pairs/s"}
    print(f"-- speed, median of {args.rounds} rounds ({'wall' if args.wall else 'process CPU'} clock, 1 thread), "
          f"fresh positions every round; load average {os.getloadavg()[0]:.2f}")
    for task in args.tasks:
        tt = times[task]
        if task == "play0":
            ms = {k: 1e3 * float(np.median(v)) for k, v in tt.items()}
            line = (f"play0 (one position and roll per call, 0-ply, {counts[task][0]} calls per round): "
                    f"bgai NeuralAgent.choose {ms['bgai']:.3f} ms   gnubg_nn.best_move(board, d1, d2, 0) "
                    f"{ms['gnubg']:.3f} ms   (median call; ratio bgai/gnubg {ms['gnubg'] / ms['bgai']:5.2f}x)")
            if "old" in tt:
                line += f"   old bgai {ms['old']:.3f} ms (new/old {ms['old'] / ms['bgai']:5.2f}x)"
            print(line)
            continue
        c = np.array(counts[task], dtype=np.float64)
        rate = {k: float(np.median(c / np.array(v))) for k, v in tt.items()}
        ratio = float(np.median(np.array(tt["gnubg"]) / np.array(tt["bgai"])))
        call = "probabilities(board, %d)" if task.startswith("eval") else "best_move(board, d1, d2, %d)"
        line = (f"{task} ({int(c[0])} per round): bgai {rate['bgai']:9.1f} {unit[task[:4]]}   "
                f"gnubg_nn.{call % int(task[-1])} {rate['gnubg']:9.1f}   ratio bgai/gnubg {ratio:5.2f}x")
        if "old" in tt:
            oratio = float(np.median(np.array(tt["old"]) / np.array(tt["bgai"])))
            line += f"   old bgai {rate['old']:9.1f} (new/old {oratio:5.2f}x)"
            if task.startswith("move"):
                line += f", same play as old {same_old[task][0]}/{same_old[task][1]}"
        print(line)


def quality(args, agents, pool: np.ndarray) -> None:
    """How the 1-ply move filter in front of 2-ply changes the chosen plays (``--quality N``).

    For N (position, roll) pairs: the candidates of the 0-ply filter (the best ``prune_keep`` within
    ``prune_margin``, as :meth:`NeuralAgent.choose` keeps them), their 1-ply and 2-ply equities (each candidate
    searched in full); the reference play is the 2-ply best of all those candidates (what bgai chose before the
    1-ply filter); each filter setting keeps the 1-ply best ``keep`` within ``margin`` and plays the 2-ply best of
    those.  Prints, per setting, the share of pairs with the reference play, the mean and largest 2-ply equity
    given up, and the share of candidates searched at 2-ply; also the 1-ply choice measured the same way.
    """
    model = args.model
    boards, dice = decision_pairs(pool[: 2 * args.quality], args.seed)
    boards, dice = boards[: args.quality], dice[: args.quality]
    a = {n: NeuralAgent.load(model, ply=n) for n in (0, 1, 2)}
    after, src = afterstates(boards, dice)
    eq0 = a[0].evaluate_afterstates(after)
    cands = []
    for i in range(len(boards)):
        rows = np.flatnonzero(src == i)
        order = rows[np.argsort(-eq0[rows], kind="stable")]
        kept = order[: a[2].prune_keep]
        kept = np.sort(kept[eq0[kept] >= eq0[order[0]] - a[2].prune_margin])
        cands.append(kept)
    flat = np.concatenate(cands)
    e1 = a[1].evaluate_afterstates(after[flat])
    e2 = a[2].evaluate_afterstates(after[flat])
    bounds = np.cumsum([0] + [len(c) for c in cands])
    settings = [(2, 0.04), (2, 0.08), (3, 0.06), (3, 0.10), (4, 0.10), (4, 0.16), (8, 0.16)]
    print(f"-- quality on {len(boards)} (position, roll) pairs with at least two plays; "
          f"{len(flat) / len(boards):.2f} 0-ply candidates a pair on average; reference: 2-ply best of them all")
    current = (a[2].filter_keep, a[2].filter_margin)
    for keep, margin in settings + [("1-ply", None)]:
        same = searched = 0
        lost = []
        for i in range(len(boards)):
            v1, v2 = e1[bounds[i] : bounds[i + 1]], e2[bounds[i] : bounds[i + 1]]
            ref = int(np.argmax(v2))
            if keep == "1-ply":
                pick = int(np.argmax(v1))
            else:
                order = np.argsort(-v1, kind="stable")[:keep]
                kept = np.sort(order[v1[order] >= v1[order[0]] - margin])
                pick = int(kept[np.argmax(v2[kept])])
                searched += len(kept)
            same += pick == ref
            lost.append(v2[ref] - v2[pick])
        lost = np.array(lost)
        label = "1-ply choice" if keep == "1-ply" else f"keep {keep} within {margin:.2f}"
        if (keep, margin) == current:
            label += " (default)"
        txt = (f"{label:28s}: same play {100 * same / len(boards):5.1f}%, 2-ply equity lost mean {lost.mean():.5f} "
               f"max {lost.max():.4f}")
        if keep != "1-ply":
            txt += f", candidates searched at 2-ply {100 * searched / len(flat):5.1f}%"
        print(txt)


def main() -> None:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tasks", nargs="+", default=["eval1", "eval2", "move1", "move2", "play0"],
                    choices=["eval1", "eval2", "move1", "move2", "play0"])
    ap.add_argument("--eval1", type=int, default=100, help="positions per round")
    ap.add_argument("--eval2", type=int, default=20, help="positions per round")
    ap.add_argument("--move1", type=int, default=100, help="(position, roll) pairs per round")
    ap.add_argument("--move2", type=int, default=10, help="(position, roll) pairs per round")
    ap.add_argument("--play0", type=int, default=100, help="(position, roll) pairs per round, one call each")
    ap.add_argument("--wall", action="store_true", help="wall clock instead of process CPU time")
    ap.add_argument("--old", default=None, help="a saved copy of an earlier bgai/agents/neural.py to time beside")
    ap.add_argument("--quality", type=int, default=0, help="instead of timing: compare plays on N pairs")
    args = ap.parse_args()
    threadpoolctl.threadpool_limits(1)
    torch.set_num_threads(1)
    agents = make_agents(args.model, args.old)
    need = args.rounds * sum(getattr(args, t) * (1 if t.startswith("eval") else 2) for t in args.tasks)
    pool = selfplay_positions(max(need, 2 * args.quality) + 64, args.seed)
    warm = pool[-64:]
    for a in agents.values():  # warm-up (tables, allocator), on positions no round uses
        a[1].probabilities(warm[:8])
        a[1].choose(warm[:8], np.full((8, 2), 3), np.random.default_rng(0))
    print(f"model {os.path.basename(args.model)}; {len(pool)} self-play positions (seed {args.seed})")
    if args.quality:
        quality(args, agents, pool)
    else:
        bench(args, agents, pool[:-64])


if __name__ == "__main__":
    main()
