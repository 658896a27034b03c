"""bgai's strength benchmark of checker-play decisions: loading it and the error rate (ER) of an agent per class.

The benchmark (``data/bench/strength-v1``, built by ``scripts/make_strength_benchmark.py``, format
``bgai-strength-bench`` version 1) holds decisions (a position before the roll, the roll, its class) each with
rolled-out candidate plays, best first, and each candidate's loss against the best.  An agent's loss on a decision
is the loss of the candidate it chooses (its afterstate's Position ID looked up among the candidates; NaN when its
play is not a candidate).  Per class, ER = 1000 x the mean loss (GNU Backgammon's error rate: thousandths of a
point per decision, cubeless money equity) and its standard error 1000 x std(loss, ddof=1) / sqrt(n) over the
decisions (it includes the rollouts' own noise).  ``scripts/bench_strength.py`` prints these side by side.
"""

from __future__ import annotations

import glob
import json
import math
import os
from dataclasses import dataclass

import numpy as np

from bgai.agents.base import Agent
from bgai.agents.registry import make_agent
from bgai.core.position_id import encode_position_ids
from bgai.errors import BgaiError
from bgai.model.classes import CLASS_CONTACT, CLASS_CRASHED, CLASS_NAMES, CLASS_RACE

__all__ = ["FORMAT", "CLASSES", "Benchmark", "load_benchmark", "choice_losses", "error_rate", "agent_choices",
           "class_error_rates"]

FORMAT = "bgai-strength-bench"
#: The classes the benchmark has decisions of (:mod:`bgai.model.classes`).
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


def class_error_rates(agent: Agent | str, bench: Benchmark) -> dict[str, dict]:
    """An agent's ER per class: ``{class name: error_rate dict}`` for contact, crashed and race.

    Args:
        agent: an :class:`~bgai.agents.base.Agent` or an agent spec (:func:`bgai.agents.registry.make_agent`).
        bench: the benchmark (:func:`load_benchmark`).
    """
    if isinstance(agent, str):
        agent = make_agent(agent)
    loss, _ = choice_losses(bench, agent_choices(agent, bench))
    cls = bench.arrays["cls"]
    return {CLASS_NAMES[c]: error_rate(loss[cls == c]) for c in CLASSES}
