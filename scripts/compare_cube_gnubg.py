#!/usr/bin/env python
"""Compare bgai's cube decisions with GNU Backgammon's on positions from real play (money and match scores).

Positions: games of the ``gnubg`` agent (GNU Backgammon 0-ply via gnubg-nn) against itself, played by
:func:`bgai.game.play.play_games`; every position before a roll is a candidate.  Each sampled position gets a random
cube context (seeded): money (centred cube with the Jacoby rule on or off, or a 2/4-cube owned by the side on
roll) or match play (length 3..25, random score, centred or owned cube, Crawford and post-Crawford games,
2-away/2-away...).

GNU Backgammon (the Debian package ``gnubg``, run headless as ``gnubg -t -q``) gets every position as
``set gnubgid POSITION_ID:MATCH_ID`` then ``hint`` with ``set evaluation cubedecision eval plies 0`` and
``set beavers 0``; its "Cube analysis" gives the 0-ply probabilities, the cubeful equities (no double,
double/take, double/pass) and the proper cube action.  bgai computes the same from

* **gnubg's printed probabilities** (6 decimals): the check of the cube logic alone (:mod:`bgai.game.cube`);
* **the gnubg agent's probabilities** (``gnubg_nn.probabilities`` 0-ply): bgai's whole pipeline.

Reported: agreement of the proper cube action (the exact text, e.g. ``'No double, take'``), of double/no double
and take/pass, and the mean / max absolute difference of the three cubeful equities (money: points per unit
cube; match: GNU Backgammon's normalised money equity).  Positions where gnubg uses its exact two-sided bear-off
database (money, both sides home with <= 6 checkers) are reported separately: bgai uses Janowski there.

Usage::

    python scripts/compare_cube_gnubg.py --positions 1200 --seed 1 [--json out.json]

Exit status 0; 2 when gnubg is not installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from bgai.cli.args import BgaiArgumentParser
from bgai.game.cube import CENTRED, CLASS_BEAROFF2, ME, CubeState, analyse_cube, classify_positions, cube_efficiency

GNUBG_CANDIDATES = ("gnubg", "/usr/games/gnubg")


def find_gnubg() -> str | None:
    """Path of the ``gnubg`` executable, or None."""
    for c in GNUBG_CANDIDATES:
        p = shutil.which(c)
        if p:
            return p
    return None


@dataclass
class Case:
    board: np.ndarray  # (2, 25) side on roll in row 0
    state: CubeState
    position_id: str
    match_id: str


def sample_positions(n_games: int, seed: int) -> np.ndarray:
    """Positions before each roll (side on roll's view) from ``n_games`` gnubg-agent self-play games."""
    from bgai.agents.gnubg import GnubgAgent
    from bgai.game.play import dice_rng, play_games

    agent = GnubgAgent()
    res = play_games((agent, agent), [dice_rng(seed, g) for g in range(n_games)], np.random.default_rng(seed),
                     record=True)
    boards = [rec.positions()[1:] for rec in res.records]  # skip the opening position (dice already known)
    return np.concatenate(boards)


def random_state(rng: np.random.Generator) -> CubeState:
    """A random cube context in which the side on roll may hold the cube (centred or its own)."""
    if rng.random() < 0.4:
        if rng.random() < 0.6:
            return CubeState(jacoby=bool(rng.random() < 0.5))
        return CubeState(cube_value=int(rng.choice([2, 4])), owner=ME, jacoby=True)
    length = int(rng.choice([3, 5, 7, 9, 11, 13, 15, 17, 21, 25]))
    kind = rng.random()
    if kind < 0.15:  # Crawford / post-Crawford
        leader_me = bool(rng.random() < 0.5)
        other = int(rng.integers(0, length - 1))
        score = (length - 1, other) if leader_me else (other, length - 1)
        return CubeState(match_length=length, score=score, crawford=bool(rng.random() < 0.4))
    score = (int(rng.integers(0, length - 1)), int(rng.integers(0, length - 1)))
    if rng.random() < 0.7:
        return CubeState(match_length=length, score=score)
    cube = int(rng.choice([2, 4]))
    return CubeState(cube_value=cube, owner=ME, match_length=length, score=score)


def to_ids(board: np.ndarray, state: CubeState) -> tuple[str, str]:
    """Position ID and Match ID with gnubg's player 1 on roll (the side on roll = bgai's row 0)."""
    from bgai.core.position_id import encode_position_id
    from bgai.formats.match_id import MatchState, encode_match_id

    owner = -1 if state.owner == CENTRED else (1 if state.owner == ME else 0)
    ms = MatchState(
        cube_value=state.cube_value,
        cube_owner=owner,
        player_on_roll=1,
        turn=1,
        crawford=state.crawford,
        match_length=state.match_length,
        score=(state.score[1], state.score[0]),
        jacoby=state.jacoby if state.is_money else True,
    )
    return encode_position_id(board), encode_match_id(ms)


_EQ = re.compile(r"^\s*\d\.\s+(No double|No redouble|Double, take|Double, pass|Redouble, take|Redouble, pass)\s+"
                 r"([+-]\d+\.\d+)")
_PROBS = re.compile(r"^\s+(-?\d\.\d+) (-?\d\.\d+) (-?\d\.\d+) - (-?\d\.\d+) (-?\d\.\d+) (-?\d\.\d+)")


def run_gnubg(cases: list[Case], gnubg: str, timeout: float = 900.0) -> list[dict]:
    """Feed all cases to one ``gnubg -t -q`` process; parse each hint into a dict (or ``{'unavailable': True}``)."""
    lines = ["set evaluation cubedecision eval plies 0", "set output digits 6", "set beavers 0",
             "set output mwc off"]
    for c in cases:
        lines.append(f"set gnubgid {c.position_id}:{c.match_id}")
        lines.append("hint")
    lines.append("quit")
    proc = subprocess.run([gnubg, "-t", "-q"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=timeout)
    chunks = proc.stdout.split("Setting GNUbg ID ")[1:]
    if len(chunks) != len(cases):
        raise RuntimeError(f"gnubg answered {len(chunks)} of {len(cases)} positions; stderr: {proc.stderr[-500:]}")
    out = []
    for chunk in chunks:
        d: dict = {}
        if "Cube analysis" not in chunk:  # gnubg wrote "You cannot double." (to stderr)
            d["unavailable"] = True
        for line in chunk.splitlines():
            m = _PROBS.match(line)
            if m and "probs" not in d:
                v = [float(x) for x in m.groups()]
                d["probs"] = [v[0], v[1], v[2], v[4], v[5]]
            m = _EQ.match(line)
            if m:
                label = m.group(1).replace("Redouble", "Double").replace("No redouble", "No double")
                d[label] = float(m.group(2))
            if line.startswith("Proper cube action:"):
                d["action"] = re.sub(r"\s*\(.*\)\s*$", "", line.split(":", 1)[1].strip())
        out.append(d)
    return out


def compare(cases: list[Case], gnubg_out: list[dict], probs_nn: np.ndarray) -> dict:
    """Agreement and equity differences; see the module docstring."""
    rows = []
    for k, (c, g) in enumerate(zip(cases, gnubg_out)):
        x = float(cube_efficiency(c.board)[0])
        cls = int(classify_positions(c.board)[0])
        if g.get("unavailable"):
            a = analyse_cube(probs_nn[k], c.state, x)
            rows.append({"kind": "unavailable", "agree_available": not a.available, "state": c.state})
            continue
        if "probs" not in g or "action" not in g:
            rows.append({"kind": "unparsed", "gnubg": g})
            continue
        res = {}
        for src, p in (("gnubg_probs", np.array(g["probs"])), ("gnubg_nn", probs_nn[k])):
            a = analyse_cube(p, c.state, x)
            res[src] = {
                "action": a.action[0],
                "double": bool(a.double[0]),
                "take": bool(a.take[0]),
                "eq": (float(a.no_double[0]), float(a.double_take[0]), float(a.double_pass[0])),
            }
        g_eq = (g["No double"], g["Double, take"], g["Double, pass"])
        g_double = g["action"].startswith(("Double", "Redouble"))
        g_take = g_eq[1] < g_eq[2]
        rows.append({
            "kind": "bearoff2" if cls == CLASS_BEAROFF2 else ("money" if c.state.is_money else "match"),
            "gnubg": {"action": g["action"], "double": g_double, "take": g_take, "eq": g_eq},
            **res,
            "ids": f"{c.position_id}:{c.match_id}",
        })
    return summarize(rows)


def summarize(rows: list[dict]) -> dict:
    out: dict = {"positions": len(rows)}
    unavailable = [r for r in rows if r["kind"] == "unavailable"]
    out["unavailable"] = {"n": len(unavailable), "bgai_agrees": sum(r["agree_available"] for r in unavailable)}
    out["unparsed"] = sum(r["kind"] == "unparsed" for r in rows)
    for kind in ("money", "match", "bearoff2", "all"):
        sel = [r for r in rows if r["kind"] in ("money", "match", "bearoff2")] if kind == "all" else \
            [r for r in rows if r["kind"] == kind]
        if not sel:
            continue
        block = {"n": len(sel)}
        for src in ("gnubg_probs", "gnubg_nn"):
            act = np.mean([r[src]["action"] == r["gnubg"]["action"] for r in sel])
            dbl = np.mean([r[src]["double"] == r["gnubg"]["double"] for r in sel])
            tk = np.mean([r[src]["take"] == r["gnubg"]["take"] for r in sel])
            diff = np.abs(np.array([r[src]["eq"] for r in sel]) - np.array([r["gnubg"]["eq"] for r in sel]))
            block[src] = {
                "action_agreement": float(act),
                "double_agreement": float(dbl),
                "take_agreement": float(tk),
                "mean_abs_diff_nd_dt_dp": [float(v) for v in diff.mean(axis=0)],
                "max_abs_diff_nd_dt_dp": [float(v) for v in diff.max(axis=0)],
                "mean_abs_diff_all": float(diff.mean()),
                "disagreements": [
                    {"ids": r["ids"], "gnubg": r["gnubg"]["action"], "bgai": r[src]["action"],
                     "gnubg_eq": r["gnubg"]["eq"], "bgai_eq": r[src]["eq"]}
                    for r in sel if r[src]["action"] != r["gnubg"]["action"]
                ][:10],
            }
        out[kind] = block
    return out


def build_cases(n_positions: int, seed: int, games: int | None = None) -> list[Case]:
    rng = np.random.default_rng(seed)
    n_games = games or max(4, n_positions // 40 + 2)
    boards = sample_positions(n_games, seed)
    pick = rng.choice(len(boards), size=min(n_positions, len(boards)), replace=False)
    cases = []
    for i in np.sort(pick):
        state = random_state(rng)
        pid, mid = to_ids(boards[i], state)
        cases.append(Case(boards[i], state, pid, mid))
    return cases


def print_report(rep: dict) -> None:
    print(f"positions: {rep['positions']}  (gnubg 'You cannot double': {rep['unavailable']['n']}, "
          f"bgai agrees the cube is unavailable in {rep['unavailable']['bgai_agrees']})")
    for kind in ("money", "match", "bearoff2", "all"):
        if kind not in rep:
            continue
        b = rep[kind]
        print(f"\n{kind}: {b['n']} cube decisions")
        for src, name in (("gnubg_probs", "gnubg's printed probabilities (cube logic alone)"),
                          ("gnubg_nn", "gnubg agent probabilities (gnubg-nn 0-ply)")):
            s = b[src]
            nd, dt, dp = s["mean_abs_diff_nd_dt_dp"]
            print(f"  {name}:")
            print(f"    proper action agrees {100 * s['action_agreement']:.1f}%   double/no double "
                  f"{100 * s['double_agreement']:.1f}%   take/pass {100 * s['take_agreement']:.1f}%")
            worst = max(s["max_abs_diff_nd_dt_dp"])
            print(f"    mean |diff| ND {nd:.5f}  DT {dt:.5f}  DP {dp:.5f}   (max {worst:.5f})")


def main(argv: list[str] | None = None) -> int:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=1200, help="cube decisions to compare (default 1200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the full report (with disagreements) here")
    args = ap.parse_args(argv)
    gnubg = find_gnubg()
    if gnubg is None:
        print("gnubg is not installed (apt-get install gnubg)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    cases = build_cases(args.positions, args.seed)
    t1 = time.perf_counter()
    from bgai.agents.gnubg import GnubgAgent

    probs_nn = GnubgAgent().probabilities(np.stack([c.board for c in cases]))
    g = run_gnubg(cases, gnubg)
    t2 = time.perf_counter()
    rep = compare(cases, g, probs_nn)
    rep["seconds"] = {"positions": round(t1 - t0, 1), "gnubg": round(t2 - t1, 1)}
    print_report(rep)
    print(f"\n(positions {t1 - t0:.0f}s, gnubg {t2 - t1:.0f}s)")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(rep, fh, indent=1, default=str)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
