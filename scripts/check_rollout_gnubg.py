#!/usr/bin/env python
"""Check bgai's rollouts against GNU Backgammon's own rollouts, position by position.

Positions: the positions before a roll in games of the ``gnubg`` agent against itself (seeded) that are still
undecided (gnubg 0-ply P(win) between 0.1 and 0.9), sampled evenly from four classes (GNU Backgammon's
``ClassifyPosition`` via :func:`bgai.game.cube.classify_positions`): contact, crashed, race and bear-off (one- or
two-sided bear-off database positions).

bgai: :func:`bgai.analysis.rollout.rollout_position` with the ``gnubg`` agent (GNU Backgammon 0-ply through
gnubg-nn) at 0-ply, cubeless, played to the end, with or without variance reduction (``--vr``).

GNU Backgammon: the Debian program ``gnubg -t`` (1.07) rolls out the same position (``set gnubgid`` with a money
Match ID, centred cube, Jacoby off, side on roll = gnubg's player 1, no dice; then ``rollout``) with
``set rollout chequerplay plies 0``, ``... prune off``, ``... cubeful off``, ``set rollout cubeful off``, variance
reduction off, quasi-random dice on, no truncation, no bear-off truncation, and its seed.  It prints the results
only to a terminal, so it runs on a pseudo-terminal.  (``gnubg_nn.rollout`` of gnubg-nn 1.1.0a11 cannot be used:
its argument parsing passes the board converter without its target, so the board overwrites the other arguments
and the call crashes or rolls out garbage; and its ``AUTO`` level stops contact positions at the race.)

Agreement: for the cubeless equity and each of the five probabilities, ``z = (bgai - gnubg) / sqrt(se_bgai^2 +
se_gnubg^2)``; a quantity agrees when ``|z| <= 3`` (a quantity both sides report as exactly 0 or 1 with no error
agrees when the values are equal).  A plain rollout's probability that no trial (or every trial) hit has sample
SE 0; its SE is taken as at least the binomial ``sqrt(p (1 - p) / trials)`` with ``p`` the mean of both results.  Correct rollouts give |z| <= 3 about 99.7% of the time and mean z^2 about 1.
The 0-ply nets of gnubg-nn and of GNU Backgammon 1.07 differ slightly (their probabilities differ by ~3e-4), so
the two rollouts play a few plays differently; the effect is far below the standard errors here.

Usage::

    python scripts/check_rollout_gnubg.py --positions 100 --trials 648 [--workers 2] [--json out.json]
    python scripts/check_rollout_gnubg.py --positions 100 --trials 72 --vr --gnubg-trials 1296 --workers 2

Exit status 0 when every |z| <= 4 and at least 95% of the quantities agree within 3 standard errors, 1 otherwise,
2 when gnubg or gnubg-nn is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import pty
import re
import shutil
import subprocess
import sys
import time

import numpy as np

from bgai.analysis.rollout import rollout_position
from bgai.cli.args import BgaiArgumentParser
from bgai.core.equity import OUTPUTS
from bgai.core.position_id import encode_position_id
from bgai.formats.match_id import MatchState, encode_match_id
from bgai.game.cube import classify_positions
from bgai.game.play import dice_rng, play_games

GNUBG_CANDIDATES = ("gnubg", "/usr/games/gnubg")
#: Position groups: name -> GNU Backgammon position classes (bgai.game.cube.CLASS_*).
GROUPS = {"contact": (5,), "crashed": (4,), "race": (3,), "bearoff": (1, 2)}
QUANTITIES = ("equity",) + OUTPUTS


def find_gnubg() -> str | None:
    """Path of the ``gnubg`` executable, or None."""
    for c in GNUBG_CANDIDATES:
        p = shutil.which(c)
        if p:
            return p
    return None


def sample_positions(n_positions: int, seed: int, games: int | None = None) -> tuple[np.ndarray, list[str]]:
    """``n_positions`` undecided positions before a roll (side on roll's view), about a quarter from each of
    :data:`GROUPS`, from seeded self-play games of the gnubg agent (``games`` at first, doubled until every group
    has enough); returns ``(boards (N, 2, 25), group names)``."""
    from bgai.agents.gnubg import GnubgAgent

    agent = GnubgAgent()
    per = [n_positions // len(GROUPS) + (k < n_positions % len(GROUPS)) for k in range(len(GROUPS))]
    n_games = games or max(20, n_positions // 2)
    played = 0
    found = []
    while True:  # crashed positions are rare: play more games until every group has enough
        res = play_games((agent, agent), [dice_rng(seed, g) for g in range(played, n_games)],
                         np.random.default_rng([seed, played]), record=True)
        played = n_games
        found += [r.positions()[1:] for r in res.records]  # not the opening position (its roll is special)
        boards = np.concatenate(found)
        live = (boards.sum(axis=2) > 0).all(axis=1)
        boards = np.unique(boards[live], axis=0)
        win = agent.probabilities(boards)[:, 0]
        boards = boards[(win > 0.1) & (win < 0.9)]  # undecided positions: a rollout has something to measure
        classes = classify_positions(boards)
        short = [name for (name, cls), k in zip(GROUPS.items(), per) if np.isin(classes, cls).sum() < k]
        if not short:
            break
        if n_games >= 20000:
            raise RuntimeError(f"too few {', '.join(short)} positions in {n_games} games")
        n_games *= 2
    rng = np.random.default_rng(seed)
    out, names = [], []
    for (name, cls), k in zip(GROUPS.items(), per):
        pool = np.flatnonzero(np.isin(classes, cls))
        pick = np.sort(rng.choice(pool, size=k, replace=False))
        out.append(boards[pick])
        names += [name] * k
    return np.concatenate(out), names


def gnubg_ids(board: np.ndarray) -> str:
    """``POSITION_ID:MATCH_ID`` for gnubg: money game, centred cube, Jacoby off, bgai's side on roll is gnubg's
    player 1, on roll, dice not rolled."""
    ms = MatchState(cube_value=1, cube_owner=-1, player_on_roll=1, turn=1, match_length=0, jacoby=False)
    return f"{encode_position_id(board)}:{encode_match_id(ms)}"


_NUM = r"(-?\d+\.\d+)"
_VALUES = re.compile(rf"^\s+{_NUM} {_NUM} {_NUM} - {_NUM} {_NUM} {_NUM} CL\s+([+-]?\d+\.\d+)")
_ERRORS = re.compile(rf"^\s*\[{_NUM} {_NUM} {_NUM} - {_NUM} {_NUM} {_NUM} CL\s+([+-]?\d+\.\d+)\]")


def run_on_pty(argv: list[str], commands: str, timeout: float) -> str:
    """Run ``argv`` with ``commands`` on stdin and stdout/stderr on a pseudo-terminal; return what it printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks = []
    try:
        proc.stdin.write(commands.encode())
        proc.stdin.close()
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"gnubg did not finish within {timeout:.0f} s")
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # EIO: the other end is closed
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return b"".join(chunks).decode("utf-8", errors="replace")


def gnubg_rollouts(boards: np.ndarray, trials: int, seed: int, gnubg: str, *, threads: int = 1,
                   variance_reduction: bool = False, timeout: float = 3600.0) -> list[dict]:
    """GNU Backgammon's cubeless 0-ply rollouts (module docstring) of ``(N, 2, 25)`` boards, one gnubg process
    (``variance_reduction``: its lookahead variance reduction on).

    Returns:
        One dict per board: ``probabilities`` and ``std_errors`` ``(5,)`` in bgai's order, ``equity`` and
        ``equity_se`` (gnubg's cubeless "CL" equity), ``seconds`` (whole process).

    Raises:
        RuntimeError: gnubg's output could not be parsed (its tail is in the message).
    """
    lines = [
        f"set threads {threads}", f"set rollout trials {trials}", "set rollout chequerplay plies 0",
        "set rollout chequerplay prune off", "set rollout chequerplay cubeful off", "set rollout cubedecision plies 0",
        "set rollout cubeful off", f"set rollout varredn {'on' if variance_reduction else 'off'}", "set rollout quasirandom on", f"set rollout seed {seed}",
        "set rollout truncation enable off", "set rollout bearofftruncation exact off",
        "set rollout bearofftruncation onesided off", "set rollout late enable off", "set rollout jsd stop off",
        "set rollout limit enable off", "set rollout initial off", "set output digits 6", "set display off",
    ]
    for b in boards:
        lines += [f"set gnubgid {gnubg_ids(b)}", "rollout"]
    lines.append("quit")
    t0 = time.perf_counter()
    text = run_on_pty([gnubg, "-t", "-q", "-r"], "\n".join(lines) + "\n", timeout)
    seconds = time.perf_counter() - t0
    pieces = text.split("Setting GNUbg ID ")[1:]
    if len(pieces) != len(boards):
        raise RuntimeError(f"gnubg answered {len(pieces)} of {len(boards)} positions: ...{text[-800:]}")
    out = []
    for piece in pieces:
        final = piece.split("Rollout done. Printing final results.")
        if len(final) < 2:
            raise RuntimeError(f"gnubg did not finish a rollout: ...{piece[-800:]}")
        vals = errs = None
        for line in final[1].splitlines():
            m = _VALUES.match(line)
            if m and vals is None:
                vals = [float(x) for x in m.groups()]
                continue
            m = _ERRORS.match(line)
            if m and vals is not None:
                errs = [float(x) for x in m.groups()]
                break
        if vals is None or errs is None:
            raise RuntimeError(f"cannot parse gnubg's rollout result: ...{final[1][:800]}")
        pick = [0, 1, 2, 4, 5]  # W Wg Wbg - L Lg Lbg  ->  W Wg Wbg Lg Lbg
        out.append({"probabilities": np.array([vals[i] for i in pick]), "std_errors": np.array([errs[i] for i in pick]),
                    "equity": vals[6], "equity_se": errs[6], "seconds": seconds})
    return out


def zscores(a: np.ndarray, sa: np.ndarray, b: np.ndarray, sb: np.ndarray) -> np.ndarray:
    """``(a - b) / sqrt(sa^2 + sb^2)``; 0 where both errors are 0 and the values equal (to 1e-6), inf otherwise."""
    a, sa, b, sb = (np.asarray(x, dtype=np.float64) for x in (a, sa, b, sb))
    s = np.sqrt(sa**2 + sb**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (a - b) / s
    exact = s == 0
    z[exact] = np.where(np.abs(a - b)[exact] <= 1e-6, 0.0, np.inf)
    return z


def binomial_floor(se: np.ndarray, p: np.ndarray, n: int) -> np.ndarray:
    """Standard errors of a plain rollout's probabilities, at least the binomial ``sqrt(p (1 - p) / n)``.

    A plain trial's outcomes are 0 or 1, so the sample SE of an outcome seen in no trial (or in all) is 0 although
    its true SE is not; ``p`` should be the best estimate at hand (here the mean of both rollouts).
    """
    p = np.clip(p, 0.0, 1.0)
    return np.maximum(se, np.sqrt(p * (1.0 - p) / n))


def compare(boards: np.ndarray, groups: list[str], bgai: list, gnubg: list[dict], *, gnubg_trials: int) -> dict:
    """Per-position z-scores of the equity and the five probabilities, and the summary (module docstring).

    The probabilities' standard errors of plain rollouts (gnubg's; bgai's without variance reduction) are floored
    at their binomial value (:func:`binomial_floor`).
    """
    rows = []
    for k, (r, g) in enumerate(zip(bgai, gnubg)):
        a = np.concatenate([[r.equity], r.probabilities])
        sa = np.concatenate([[r.equity_se], r.std_errors])
        b = np.concatenate([[g["equity"]], g["probabilities"]])
        sb = np.concatenate([[g["equity_se"]], g["std_errors"]])
        pooled = (a[1:] + b[1:]) / 2
        sb[1:] = binomial_floor(sb[1:], pooled, gnubg_trials)
        if not r.settings.variance_reduction:
            sa[1:] = binomial_floor(sa[1:], pooled, r.trials)
        z = zscores(a, sa, b, sb)
        rows.append({"position": gnubg_ids(boards[k]).split(":")[0], "group": groups[k],
                     "bgai": dict(zip(QUANTITIES, a.round(6).tolist())), "bgai_se": dict(zip(QUANTITIES, sa.round(6).tolist())),
                     "gnubg": dict(zip(QUANTITIES, b.tolist())), "gnubg_se": dict(zip(QUANTITIES, sb.tolist())),
                     "z": dict(zip(QUANTITIES, [round(float(v), 3) for v in z]))})
    z = np.array([[row["z"][q] for q in QUANTITIES] for row in rows])
    finite = np.where(np.isfinite(z), z, 99.0)
    summary = {"positions": len(rows), "quantities": int(z.size),
               "within_3se": float((np.abs(finite) <= 3).mean()),
               "equity_within_3se": float((np.abs(finite[:, 0]) <= 3).mean()),
               "max_abs_z": float(np.abs(finite).max()),
               "mean_z_equity": float(finite[:, 0].mean()),
               "mean_z2": float((np.minimum(np.abs(finite), 10) ** 2).mean()),
               "by_group": {}}
    for name in GROUPS:
        sel = [i for i, row in enumerate(rows) if row["group"] == name]
        if sel:
            zz = finite[sel]
            summary["by_group"][name] = {"n": len(sel), "within_3se": float((np.abs(zz) <= 3).mean()),
                                         "max_abs_z": float(np.abs(zz).max()),
                                         "mean_z_equity": float(zz[:, 0].mean())}
    return {"summary": summary, "positions": rows}


def run_check(n_positions: int, trials: int, seed: int, *, vr: bool = False, workers: int = 1,
              gnubg_threads: int = 1, gnubg_trials: int | None = None, games: int | None = None,
              verbose: bool = False) -> dict:
    """Sample positions, roll them out with bgai and with GNU Backgammon, and compare (see the module docstring)."""
    from bgai.agents.gnubg import GnubgAgent
    from bgai.agents.registry import make_agent

    gnubg = find_gnubg()
    if gnubg is None:
        raise RuntimeError("gnubg is not installed (apt-get install gnubg)")
    t0 = time.perf_counter()
    boards, groups = sample_positions(n_positions, seed, games)
    t1 = time.perf_counter()
    ref = gnubg_rollouts(boards, gnubg_trials or trials, seed + 1, gnubg, threads=gnubg_threads)
    t2 = time.perf_counter()
    agent = make_agent("gnubg") if workers > 1 else GnubgAgent()
    ours = []
    for k, b in enumerate(boards):
        ours.append(rollout_position(agent, b, trials=trials, seed=seed + 1 + k, variance_reduction=vr,
                                     workers=workers))
        if verbose:
            r, g = ours[-1], ref[k]
            print(f"{k + 1:4d} {groups[k]:8s} bgai {r.equity:+.4f} +- {r.equity_se:.4f}   gnubg {g['equity']:+.4f} "
                  f"+- {g['equity_se']:.4f}", file=sys.stderr)
    t3 = time.perf_counter()
    rep = compare(boards, groups, ours, ref, gnubg_trials=gnubg_trials or trials)
    rep["settings"] = {"positions": n_positions, "trials": trials, "gnubg_trials": gnubg_trials or trials,
                       "seed": seed, "variance_reduction": vr,
                       "workers": workers, "gnubg_threads": gnubg_threads}
    rep["seconds"] = {"positions": round(t1 - t0, 1), "gnubg": round(t2 - t1, 1), "bgai": round(t3 - t2, 1)}
    return rep


def print_report(rep: dict) -> None:
    s = rep["summary"]
    st = rep["settings"]
    print(f"{s['positions']} positions: bgai gnubg agent 0-ply, {st['trials']} trials "
          f"{'with' if st['variance_reduction'] else 'without'} variance reduction, vs GNU Backgammon 1.07 "
          f"(gnubg -t) 0-ply, {st['gnubg_trials']} trials; cubeless rollouts")
    print(f"{'group':10s}{'n':>4s}{'within 3 SE':>13s}{'max |z|':>9s}{'mean z(eq)':>12s}")
    for name, g in s["by_group"].items():
        print(f"{name:10s}{g['n']:4d}{100 * g['within_3se']:12.1f}%{g['max_abs_z']:9.2f}{g['mean_z_equity']:+12.2f}")
    print(f"all: {100 * s['within_3se']:.1f}% of {s['quantities']} quantities (equity and 5 probabilities) within "
          f"3 combined SE; equity alone {100 * s['equity_within_3se']:.1f}%; max |z| {s['max_abs_z']:.2f}; "
          f"mean z^2 {s['mean_z2']:.2f} (1 expected)")
    worst = sorted(rep["positions"], key=lambda r: -max(abs(v) for v in r["z"].values()))[:5]
    print("largest |z|:")
    for r in worst:
        q = max(r["z"], key=lambda k: abs(r["z"][k]))
        print(f"  {r['position']} ({r['group']}): {q} bgai {r['bgai'][q]:+.4f} +- {r['bgai_se'][q]:.4f}, "
              f"gnubg {r['gnubg'][q]:+.4f} +- {r['gnubg_se'][q]:.4f}, z {r['z'][q]:+.2f}")
    sec = rep["seconds"]
    print(f"(positions {sec['positions']:.0f} s, gnubg {sec['gnubg']:.0f} s, bgai {sec['bgai']:.0f} s)")


def passed(rep: dict) -> bool:
    """Every |z| <= 4 and at least 95% of the quantities within 3 SE."""
    s = rep["summary"]
    return s["max_abs_z"] <= 4 and s["within_3se"] >= 0.95


def main(argv: list[str] | None = None) -> int:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=100, help="positions (default 100, a quarter per group)")
    ap.add_argument("--trials", type=int, default=648, help="trials per position on each side (default 648)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vr", action="store_true", help="bgai with variance reduction (gnubg stays without)")
    ap.add_argument("--gnubg-trials", type=int, help="trials of GNU Backgammon's rollouts (default: --trials)")
    ap.add_argument("--workers", type=int, default=1, help="bgai worker processes")
    ap.add_argument("--gnubg-threads", type=int, default=1)
    ap.add_argument("--json", help="write the full report here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each position as it finishes")
    args = ap.parse_args(argv)
    if find_gnubg() is None:
        print("gnubg is not installed (apt-get install gnubg)", file=sys.stderr)
        return 2
    if importlib.util.find_spec("gnubg_nn") is None:
        print("gnubg-nn is not installed (pip install gnubg-nn)", file=sys.stderr)
        return 2
    rep = run_check(args.positions, args.trials, args.seed, vr=args.vr, workers=args.workers,
                    gnubg_threads=args.gnubg_threads, gnubg_trials=args.gnubg_trials, verbose=args.verbose)
    print_report(rep)
    if args.json:
        from bgai.util.fileio import atomic_write_json

        atomic_write_json(args.json, rep)
    return 0 if passed(rep) else 1


if __name__ == "__main__":
    sys.exit(main())
