"""Benchmark: games per second of bgai's batched runner against a one-position-at-a-time gnubg-nn loop.

Both sides play pubeval vs pubeval on the same dice (game g uses ``bgai.game.play.dice_rng(seed, g)``):

* bgai: :func:`bgai.evaluate.series.evaluate` (batched move generation and pubeval scoring; pubeval's compiled
  kernel when numba is installed), 1 and 2 workers (one process: the series' work units played as
  ``evaluate(workers=1)`` plays them, :func:`play_units`);
* reference: the same games played position by position with ``gnubg_nn.pub_best_move`` (GNU Backgammon's C
  move generator and pubeval) in a Python loop, in 1 and 2 processes (a ``multiprocessing`` pool started the way
  bgai starts its workers, :func:`bgai.util.parallel.start_method`: forked where safe, with this process's objects
  frozen for the garbage collector meanwhile, else spawned).

Since both sides play the same deterministic bot on the same dice, the games should be identical except where
two plays tie on pubeval score; the script prints how many results agree.  CPU seconds count this process and
its worker processes (``RUSAGE_CHILDREN`` after they are joined), start-up included: on a loaded machine the CPU
ratio is steadier than the wall-clock one.  Both sides are measured alike: each side's one-time loading in this
process (``gnubg_nn``'s import; pubeval's compiled kernel, :func:`bgai.agents.pubeval.use_compiled`, when numba is
installed) is done before the timed rounds, and forked workers inherit it; the 1-process and the 2-process runs
alternate the two sides for ``--rounds`` rounds and keep each side's best round; the 2-process wall time of both
sides runs from before the workers start until they are joined.  Usage::

    python scripts/bench_games.py [--games 3000] [--seed 1] [--rounds 3]
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import resource
import time

import numpy as np

from bgai.cli.args import BgaiArgumentParser


def cpu_all() -> float:
    """CPU seconds (user + system) of this process and of its finished (reaped) child processes."""
    me, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def gnubg_game(args) -> tuple[int, int, int]:
    """One pubeval-vs-pubeval game through gnubg_nn.pub_best_move; returns (winner seat, points, plies).

    The dice are drawn exactly as bgai's runner draws them (:mod:`bgai.game.play`: opening roll, then blocks of
    ``DICE_BLOCK`` rolls from the game's generator), kept as Python lists so the loop itself stays lean.
    """
    import gnubg_nn

    from bgai.agents.gnubg import apply_gnubg_move
    from bgai.game.play import DICE_BLOCK, dice_rng, opening_roll

    seed, g = args
    rng = dice_rng(seed, g)
    d0, d1 = opening_roll(rng)
    rolls = rng.integers(1, 7, size=(DICE_BLOCK, 2)).tolist()
    mover = 0 if d0 > d1 else 1
    dice = (max(d0, d1), min(d0, d1))
    start = [0] * 25
    start[23], start[12], start[7], start[5] = 2, 5, 3, 5
    board = [list(start), list(start)]  # [opponent, side on roll]
    plies = 0
    best = gnubg_nn.pub_best_move
    while True:
        apply_gnubg_move(board, best(board, dice[0], dice[1]))
        if sum(board[1]) == 0:
            loser = board[0]
            if sum(loser) < 15:
                points = 1
            elif sum(loser[18:25]) > 0:  # loser's checkers on the bar or in the winner's home board
                points = 3
            else:
                points = 2
            return mover, points, plies + 1
        board = [board[1], board[0]]
        mover ^= 1
        if plies == len(rolls):
            rolls.extend(rng.integers(1, 7, size=(DICE_BLOCK, 2)).tolist())
        dice = rolls[plies]
        plies += 1


def run_gnubg(games: int, seed: int, workers: int):
    """Play the games through gnubg_nn; returns (wall seconds, CPU seconds of this process and its worker
    processes, results (G, 3))."""
    jobs = [(seed, g) for g in range(games)]
    t0, c0 = time.perf_counter(), cpu_all()
    if workers == 1:
        out = [gnubg_game(j) for j in jobs]
    else:
        from bgai.util.parallel import start_method

        method = start_method()
        if method == "fork":  # as bgai forks its workers: this process's objects frozen for the collector meanwhile
            gc.freeze()
        pool = mp.get_context(method).Pool(workers)  # start-up counted, as in bgai's evaluate()
        gc.unfreeze()
        out = pool.map(gnubg_game, jobs, chunksize=50)
        pool.close()
        pool.join()  # workers reaped: their CPU time is in RUSAGE_CHILDREN
    return time.perf_counter() - t0, cpu_all() - c0, np.array(out)


def run_bgai(games: int, seed: int, workers: int):
    """Play the games with bgai's runner; returns (wall seconds, CPU seconds of this process and its worker
    processes, results or None)."""
    from bgai.agents.pubeval import PubevalAgent
    from bgai.evaluate.series import evaluate, play_units, series_unit_size, unit_groups

    if workers == 1:
        agents = (PubevalAgent(),) * 2
        t0, c0 = time.perf_counter(), cpu_all()
        chunk = series_unit_size(games, agents)
        groups = unit_groups(-(-games // chunk), chunk, 1)
        parts = [r for g in groups for r in play_units(agents, seed, [int(u) for u in g], games, chunk, False)]
        return time.perf_counter() - t0, cpu_all() - c0, parts
    t0, c0 = time.perf_counter(), cpu_all()
    evaluate("pubeval", "pubeval", games, seed, workers=workers, duplicate=False)
    return time.perf_counter() - t0, cpu_all() - c0, None


def main() -> None:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best round of each side counts")
    args = ap.parse_args()
    n = args.games

    import gnubg_nn  # noqa: F401 - one-time loading before the timed rounds, on both sides

    from bgai.agents import pubeval

    getattr(pubeval, "use_compiled", lambda: False)()  # pubeval's compiled kernel (trees before it had none)

    # alternate the two sides so that load from other jobs hits both alike; keep each side's best round
    b1, g1, b2, g2 = [], [], [], []
    for _ in range(args.rounds):
        b1.append(run_bgai(n, args.seed, 1))
        g1.append(run_gnubg(n, args.seed, 1))
    for _ in range(args.rounds):
        b2.append(run_bgai(n, args.seed, 2))
        g2.append(run_gnubg(n, args.seed, 2))
    t_b1, c_b1 = min(r[0] for r in b1), min(r[1] for r in b1)
    t_g1, c_g1 = min(r[0] for r in g1), min(r[1] for r in g1)
    t_b2, c_b2 = min(r[0] for r in b2), min(r[1] for r in b2)
    t_g2, c_g2 = min(r[0] for r in g2), min(r[1] for r in g2)
    parts, ref = b1[0][2], g1[0][2]

    # the batched run alternates A's seat, so compare by seat: seat that won, points, plies
    winner = np.concatenate([p.winner for p in parts])
    a_seat = np.concatenate([p.a_seat for p in parts])
    win_seat = np.where(winner == 0, a_seat, 1 - a_seat)
    points = np.concatenate([p.points for p in parts])
    plies = np.concatenate([p.plies for p in parts])
    same = (win_seat == ref[:, 0]) & (points == ref[:, 1]) & (plies == ref[:, 2])

    print(f"pubeval vs pubeval, {n} games, seed {args.seed}; best of {args.rounds} alternating rounds")
    print(f"{'':38}{'games/s':>10}{'wall s':>9}{'CPU s':>9}")
    print(f"{'bgai batched runner, 1 process':38}{n / t_b1:10.1f}{t_b1:9.2f}{c_b1:9.2f}")
    print(f"{'gnubg_nn.pub_best_move loop, 1 process':38}{n / t_g1:10.1f}{t_g1:9.2f}{c_g1:9.2f}")
    print(f"{'bgai batched runner, 2 workers':38}{n / t_b2:10.1f}{t_b2:9.2f}{c_b2:9.2f}")
    print(f"{'gnubg_nn.pub_best_move loop, 2 processes':38}{n / t_g2:10.1f}{t_g2:9.2f}{c_g2:9.2f}")
    print(
        f"ratio bgai / gnubg-nn loop: {t_g1 / t_b1:.2f}x wall, {c_g1 / c_b1:.2f}x CPU (1 process); "
        f"{t_g2 / t_b2:.2f}x wall, {c_g2 / c_b2:.2f}x CPU (2 processes each, start-up included); "
        f"bgai 2 workers vs the 1-process loop: {t_g1 / t_b2:.2f}x"
    )
    print(f"identical game results (winner seat, points, plies): {int(same.sum())} / {n}")


if __name__ == "__main__":
    main()
