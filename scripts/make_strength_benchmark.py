"""Build bgai's checker-play strength benchmark: (position, roll) decisions per class with rolled-out candidates.

Like GNU Backgammon's contact / crashed / race benchmarks (which cannot be downloaded here): each decision is a
position, a roll and a set of candidate plays, each candidate valued by a rollout.  ``scripts/bench_strength.py``
then measures an agent's error rate (ER = 1000 x mean equity lost per decision) per class.

How the decisions are sampled (module constants below; all from ``--seed``):

* **Varied play**: games between two different agents drawn from :data:`POOL` (bgai-td128 at 0-ply, GNU Backgammon
  0-ply via the ``gnubg`` agent, pubeval, the blocker and racer heuristics); each play is replaced by a uniformly
  random legal play with probability :data:`EXPLORE` (exploration noise, so the positions vary).
* From each game at most one decision per class (contact, crashed, race: :func:`bgai.model.classes.classify` of the
  position before the roll) is kept, drawn at random among the game's eligible decisions: not forced (at least
  two distinct legal afterstates), Position ID not in any training label set (``data/labels/*/shard-*.npz``,
  the positions before the roll), and (Position ID, roll) not already in the benchmark.
* Decisions come in **rounds**: round ``k`` plays games with seed ``(seed, k)`` until it has :data:`ROUND_SIZE`
  decisions of every class.  Each round is one shard file ``round-KKKK.npz``; a finished shard is never rewritten,
  so the build can be stopped at any time and resumed (with the same or a larger ``--per-class``) by running the
  same command again.

**Candidates**: the union of the best :data:`TOP_K` plays of GNU Backgammon 0-ply and of bgai-td128 0-ply (by each
agent's cubeless equity) and pubeval's choice; a decision with a single candidate is skipped (nothing to measure).
An agent whose choice is outside the set is reported by ``bench_strength.py`` (count, excluded from its ER).

**Rollouts** (:mod:`bgai.analysis.rollout`, :func:`run_unit` on all candidates at once, so every candidate gets the
same dice): the ``gnubg`` agent (GNU Backgammon 0-ply nets and bear-off databases through gnubg-nn) plays both
sides at 0-ply, :data:`TRIALS` trials with quasi-random dice and variance reduction (luck adjustment),
truncated :data:`TRUNCATE` plies after the play and scored by gnubg's 0-ply cubeless evaluation.  Why these
settings (measured on this machine, one core, 10 candidates of a contact position): gnubg with variance
reduction costs about 19 s per contact decision at 36 trials truncated at 7 plies (the look-ahead of 21 rolls per
ply is one gnubg-nn call per distinct afterstate); the paired difference between candidates then has a median
standard error of 0.009; without variance reduction it is 0.33 (36 trials, untruncated), far too noisy.
bgai-td128 as the rollout agent is about 10x faster, but it would judge the very model the benchmark tests.
The gnubg rollout is independent of every bgai model; its bias runs the other way: a truncated rollout is scored
by gnubg's own 0-ply evaluation after gnubg's own plays, so gnubg 0-ply's ER is understated (its evaluation
errors that survive the truncation are not counted against it).  See the README, "Strength benchmark".

Output (format ``bgai-strength-bench`` version 1), in ``OUT`` (default ``data/bench/strength-v1``): ``dataset.json``
(format, settings) and ``round-KKKK.npz`` shards (``np.savez_compressed``), arrays over the N decisions and M
candidates of the shard:

    position_id (N,) U14  Position ID before the roll (side on roll's view)
    board (N, 2, 25) int8  the same position in bgai's layout
    dice (N, 2) int8       the roll
    cls (N,) int8          bgai.model.classes class (2 race, 3 crashed, 4 contact)
    seed (N,) int64        the rollout seed of the decision
    offsets (N + 1,) int64 candidates of decision i are rows offsets[i]:offsets[i + 1], best (rolled out) first
    play (M,) U            candidate play in notation (``8/5 6/5``)
    after_id (M,) U14      Position ID of the afterstate (mover's view, rows not swapped)
    equity (M,) float64    rolled-out cubeless equity (ppg) for the mover
    equity_se (M,)         its standard error
    loss (M,) float64      equity of the best candidate minus this one's (>= 0; 0 for the first)
    loss_se (M,)           standard error of that paired difference (same dice)
    probs (M, 5) float64   rolled-out probabilities for the mover (win, win g, win bg, lose g, lose bg)
    source (M,) uint8      bit 1: in gnubg's top K, bit 2: in bgai-td128's top K, bit 4: pubeval's choice
    meta () U              JSON: format, version, round, settings, seconds

Usage::

    nice -n 10 python scripts/make_strength_benchmark.py --per-class 100            # build / resume
    nice -n 10 python scripts/make_strength_benchmark.py --per-class 400            # grow it later
    nice -n 10 python scripts/make_strength_benchmark.py --classes race --seed 2 --per-class 1000 \
        --out data/bench/race-v1                                                    # race decisions only
"""

from __future__ import annotations

import glob
import io
import json
import math
import os
import sys
import time

import numpy as np

from bgai.agents.registry import make_agent
from bgai.analysis.rollout import RolloutPolicy, run_unit
from bgai.cli.args import BgaiArgumentParser
from bgai.core.board import flip, starting_board
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.core.movegen import legal_plays
from bgai.core.position_id import encode_position_ids
from bgai.errors import BgaiError
from bgai.game.play import finish_games
from bgai.model.classes import CLASS_CONTACT, CLASS_CRASHED, CLASS_NAMES, CLASS_RACE, classify
from bgai.util.fileio import atomic_write, atomic_write_json, file_sha256
from bgai.util.threads import limit_threads, single_thread

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = "bgai-strength-bench"
VERSION = 1
#: Classes of the benchmark, in shard order.
CLASSES = (CLASS_CONTACT, CLASS_CRASHED, CLASS_RACE)
#: Agents whose games supply the positions (two different ones per game).
POOL = ("bgai-td128", "gnubg", "pubeval", "blocker", "racer")
#: Probability that a play in those games is a uniformly random legal play instead of the agent's.
EXPLORE = 0.1
#: Decisions of each class per round (shard).
ROUND_SIZE = 25
#: Candidates: the best TOP_K of gnubg 0-ply and of bgai-td128 0-ply, and pubeval's choice.
TOP_K = 5
#: Rollout settings: the agent, trials, truncation (plies after the play), variance reduction.
ROLLOUT_AGENT = "gnubg"
TRIALS = 36
TRUNCATE = 5
#: Games a round may play before giving up on filling a class (crashed positions are the rarest).
MAX_GAMES = 5000
MODEL = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")


def label_ids(pattern: str) -> set[str]:
    """Position IDs of every training label shard matching ``pattern`` (the ``position_ids`` array)."""
    ids: set[str] = set()
    for path in sorted(glob.glob(pattern)):
        with np.load(path) as z:
            ids.update(str(s) for s in z["position_ids"])
    return ids


def settings_dict(label_pattern: str) -> dict:
    return {"pool": list(POOL), "explore": EXPLORE, "round_size": ROUND_SIZE, "top_k": TOP_K,
            "rollout_agent": ROLLOUT_AGENT, "trials": TRIALS, "truncate": TRUNCATE, "variance_reduction": True,
            "rollout_ply": 0, "model": os.path.basename(MODEL), "model_sha256": file_sha256(MODEL),
            "excluded_labels": label_pattern, "classes": [CLASS_NAMES[c] for c in CLASSES]}


def play_game(agents, pair, rng) -> list[tuple[np.ndarray, tuple[int, int]]]:
    """One game between ``agents[pair[0]]`` and ``agents[pair[1]]`` with exploration; returns every unforced
    (position before the roll, roll) of the game."""
    board = starting_board()
    while True:
        d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
        if d1 != d2:
            break
    turn = int(rng.integers(2))
    out = []
    for _ply in range(10_000):
        plays = legal_plays(board, (d1, d2))
        if len(plays) >= 2:
            out.append((board.copy(), (d1, d2)))
        if rng.random() < EXPLORE:
            chosen = np.asarray(plays[int(rng.integers(len(plays)))].afterstate)
        else:
            chosen = agents[pair[turn]].choose(board[None], np.array([[d1, d2]]), rng)[0]
        done, _ = finish_games(chosen[None])
        if done[0]:
            return out
        board = flip(chosen)
        turn = 1 - turn
        d1, d2 = (int(x) for x in rng.integers(1, 7, size=2))
    raise RuntimeError("a game did not finish")


def sample_round(agents, seed: int, k: int, exclude: set[str], seen: set[tuple[str, int, int]]) -> dict:
    """The decisions of round ``k``: class -> list of (board, dice), ROUND_SIZE each (fewer if MAX_GAMES ran out)."""
    rng = np.random.default_rng([seed, k])
    picked: dict[int, list] = {c: [] for c in CLASSES}
    for _game in range(MAX_GAMES):
        if all(len(v) >= ROUND_SIZE for v in picked.values()):
            break
        pair = tuple(rng.choice(len(POOL), size=2, replace=False))
        decisions = play_game(agents, (POOL[pair[0]], POOL[pair[1]]), rng)
        if not decisions:
            continue
        boards = np.stack([b for b, _ in decisions])
        ids = encode_position_ids(boards)
        cls = classify(boards)
        for c in CLASSES:
            ok = [i for i in range(len(decisions)) if cls[i] == c and ids[i] not in exclude
                  and (ids[i], *sorted(decisions[i][1])) not in seen]
            if not ok or len(picked[c]) >= ROUND_SIZE:
                continue
            i = ok[int(rng.integers(len(ok)))]
            seen.add((ids[i], *sorted(decisions[i][1])))
            picked[c].append(decisions[i])
    return picked


def candidates(agents, board: np.ndarray, dice: tuple[int, int], rng) -> tuple[list, np.ndarray]:
    """Candidate plays ``[(Play, source bits)]`` of a decision: gnubg's and bgai-td128's top K, pubeval's choice."""
    plays = legal_plays(board, dice)
    after = np.stack([np.asarray(p.afterstate) for p in plays])
    src = np.zeros(len(after), dtype=np.int64)
    bits = np.zeros(len(plays), dtype=np.uint8)
    for name, bit in (("gnubg", 1), ("bgai-td128", 2)):
        scores = np.asarray(agents[name].evaluate_plays(board[None], after, src), dtype=np.float64)
        order = np.lexsort((np.arange(len(after)), -scores))[:TOP_K]
        bits[order] |= bit
    chosen = agents["pubeval"].choose(board[None], np.array([dice]), rng)[0]
    match = np.flatnonzero((after == chosen).all(axis=(1, 2)))
    bits[match] |= 4
    keep = np.flatnonzero(bits)
    return [plays[i] for i in keep], bits[keep]


def rollout(policy: RolloutPolicy, after: np.ndarray, seed: int) -> dict:
    """Roll out the afterstates ``(C, 2, 25)`` (mover's view) together on the same dice; mover's view results."""
    with single_thread():
        out = run_unit(policy, flip(after), 0, TRIALS, seed=seed, truncate=TRUNCATE, variance_reduction=True)
    mover = swap_perspective(out)  # (C, T, 5)
    eq = cubeless_equity(mover)  # (C, T)
    n = eq.shape[1]
    mean = eq.mean(axis=1)
    best = int(np.argmax(mean))
    diff = eq[best][None] - eq  # (C, T) paired losses
    return {"equity": mean, "equity_se": eq.std(axis=1, ddof=1) / math.sqrt(n), "loss": diff.mean(axis=1),
            "loss_se": diff.std(axis=1, ddof=1) / math.sqrt(n), "probs": mover.mean(axis=1)}


def build_round(agents, policy, seed: int, k: int, picked: dict, log) -> tuple[dict, dict]:
    rng = np.random.default_rng([seed, k, 1])
    rows = {key: [] for key in ("board", "dice", "cls", "seed")}
    cand = {key: [] for key in ("play", "after_id", "equity", "equity_se", "loss", "loss_se", "probs", "source")}
    offsets = [0]
    seconds = {}
    for c in CLASSES:
        t0 = time.process_time()
        done = 0
        for j, (board, dice) in enumerate(picked[c]):
            plays, bits = candidates(agents, board, dice, rng)
            if len(plays) < 2:
                continue
            after = np.stack([np.asarray(p.afterstate) for p in plays])
            rseed = int(seed) * 1_000_003 + k * 1_000 + int(c) * 100 + j
            r = rollout(policy, after, rseed)
            order = np.lexsort((np.arange(len(plays)), -r["equity"]))
            rows["board"].append(board)
            rows["dice"].append(dice)
            rows["cls"].append(c)
            rows["seed"].append(rseed)
            ids = encode_position_ids(after[order])
            for pos, i in enumerate(order):
                cand["play"].append(plays[i].notation)
                cand["after_id"].append(ids[pos])
                for key in ("equity", "equity_se", "loss", "loss_se", "probs"):
                    cand[key].append(r[key][i])
                cand["source"].append(bits[i])
            offsets.append(len(cand["play"]))
            done += 1
        seconds[CLASS_NAMES[c]] = round(time.process_time() - t0, 1)
        log(f"round {k}: {CLASS_NAMES[c]}: {done} decisions rolled out in {seconds[CLASS_NAMES[c]]} CPU s")
    boards = np.stack(rows["board"]).astype(np.int8)
    arrays = {
        "position_id": np.array(encode_position_ids(boards)),
        "board": boards,
        "dice": np.array(rows["dice"], dtype=np.int8),
        "cls": np.array(rows["cls"], dtype=np.int8),
        "seed": np.array(rows["seed"], dtype=np.int64),
        "offsets": np.array(offsets, dtype=np.int64),
        "play": np.array(cand["play"]),
        "after_id": np.array(cand["after_id"]),
        "equity": np.array(cand["equity"], dtype=np.float64),
        "equity_se": np.array(cand["equity_se"], dtype=np.float64),
        "loss": np.array(cand["loss"], dtype=np.float64),
        "loss_se": np.array(cand["loss_se"], dtype=np.float64),
        "probs": np.array(cand["probs"], dtype=np.float64).reshape(-1, 5),
        "source": np.array(cand["source"], dtype=np.uint8),
    }
    return arrays, seconds


def write_npz(path: str, arrays: dict) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    atomic_write(path, lambda f: f.write(buf.getvalue()))


def main(argv=None) -> int:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "data", "bench", "strength-v1"),
                    help="benchmark folder, built or resumed (default: data/bench/strength-v1)")
    ap.add_argument("--per-class", type=int, default=100, help="target decisions per class (rounds of --round-size)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the games and rollouts (default 1)")
    ap.add_argument("--round-size", type=int, default=25, help="decisions per class per shard")
    ap.add_argument("--classes", nargs="+", choices=[CLASS_NAMES[c] for c in CLASSES],
                    default=[CLASS_NAMES[c] for c in CLASSES],
                    help="classes to sample (default: all three); e.g. --classes race for a race-only benchmark")
    ap.add_argument("--labels", default=os.path.join(ROOT, "data", "labels", "*", "shard-*.npz"),
                    help="glob of training label shards whose positions are kept out")
    args = ap.parse_args(argv)
    globals()["ROUND_SIZE"] = args.round_size
    globals()["CLASSES"] = tuple(c for c in CLASSES if CLASS_NAMES[c] in args.classes)
    limit_threads(1)
    os.makedirs(args.out, exist_ok=True)
    rel_labels = os.path.relpath(args.labels, ROOT) if os.path.isabs(args.labels) else args.labels
    settings = settings_dict(rel_labels)
    info_path = os.path.join(args.out, "dataset.json")
    if os.path.exists(info_path):
        with open(info_path, encoding="utf-8") as f:
            info = json.load(f)
        if info.get("format") != FORMAT or info.get("format_version") != VERSION or info.get("seed") != args.seed \
                or info.get("settings") != settings:
            raise BgaiError(f"{info_path}: another format, seed or settings; resume with the same ones or use a "
                            "new --out")
    else:
        atomic_write_json(info_path, {"format": FORMAT, "format_version": VERSION, "seed": args.seed,
                                      "settings": settings})

    def log(msg: str) -> None:
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    exclude = label_ids(args.labels)
    log(f"{len(exclude)} training positions excluded")
    agents = {"bgai-td128": make_agent(MODEL), "gnubg": make_agent("gnubg"), "pubeval": make_agent("pubeval"),
              "blocker": make_agent("blocker"), "racer": make_agent("racer")}
    policy = RolloutPolicy(make_agent(ROLLOUT_AGENT), 0)
    rounds = -(-args.per_class // ROUND_SIZE)
    seen: set[tuple[str, int, int]] = set()
    for k in range(rounds):
        path = os.path.join(args.out, f"round-{k:04d}.npz")
        if os.path.exists(path):  # finished earlier: keep it, remember its decisions
            with np.load(path) as z:
                seen.update((str(p), *sorted(int(x) for x in d)) for p, d in zip(z["position_id"], z["dice"]))
            continue
        # the rounds before k are all on disk (built in order), so `seen` is the same as in an unbroken run
        t0 = time.process_time()
        picked = sample_round(agents, args.seed, k, exclude, seen)
        log(f"round {k}: sampled {[len(picked[c]) for c in CLASSES]} decisions in {time.process_time() - t0:.1f} CPU s")
        arrays, seconds = build_round(agents, policy, args.seed, k, picked, log)
        arrays["meta"] = np.array(json.dumps({"format": FORMAT, "format_version": VERSION, "round": k,
                                              "seed": args.seed, "cpu_seconds": seconds}))
        write_npz(path, arrays)
        log(f"round {k}: wrote {path} ({len(arrays['position_id'])} decisions)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BgaiError as exc:
        print(f"make_strength_benchmark: error: {exc}", file=sys.stderr)
        sys.exit(2)
