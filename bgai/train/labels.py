"""Labelled positions for supervised training: sample positions from self-play, label each with a search or a
rollout, and store them in resumable, append-only shards.

Why: TD(lambda) self-play nets plateau (the shipped model's learning curve is flat after about 400,000 games);
every engine at or above GNU Backgammon 0-ply went on by supervised training on positions labelled by a deeper
evaluation (gnubg and wildbg: rollouts of 1296 trials; Hilton: targets averaged over the 21 rolls at 1-ply).

Sampling: shard ``i`` plays ``games_per_shard`` self-play games of the labelling model at 0-ply with the dice of
``np.random.SeedSequence(seed, spawn_key=(5, i))`` (:func:`bgai.game.play.play_games`), takes every position
before a roll (side on roll's view; finished games left out) and keeps each with probability ``keep``
(``disagree`` > 0: only those where the 0-ply and the label's cubeless equity differ by more than ``disagree``;
``classes``: only positions of those classes, :mod:`bgai.model.classes`, e.g. ``('race', 'bearoff')``: the class
test and the keep draw apply to the same positions, so a job without ``classes`` samples as before;
``explore`` > 0: each play of those games is a uniformly random legal play (:class:`bgai.agents.random.RandomAgent`)
with that probability instead of the model's, so that the positions vary beyond the model's own self-play, as the
strength benchmark's games do; the random draws come from the shard's agent stream, so a job with ``explore`` 0
samples as before; ``explorers``: agent specs whose plays replace the model's instead of random plays, one drawn
uniformly for each replaced play, e.g. ``('pubeval', 'racer', 'blocker', 'random')`` for positions as varied as
the strength benchmark's games between different bots; ``candidates`` K > 0: instead of each kept position,
the afterstates of its K best plays at 0-ply for a roll drawn for it, each turned to the opponent's view (the
position the opponent rolls from), so that the net learns to tell apart the plays it chooses between: siblings
whose values differ by a few thousandths, as the decisions of the strength benchmark do; the roll comes from a
stream of its own (``SeedSequence(seed, spawn_key=(7, shard))``), the classes test applies to the afterstates, and
an afterstate two kept positions share is labelled once).
Relabelling (``relabel``: label folders): instead of self-play, the positions of existing label folders are
labelled again, e.g. by a newer model's search (GNU Backgammon's training databases are re-rolled out with each
better net): the folders' positions in order (folders as given, shards in index order), each Position ID once (its
first occurrence), of the ``classes`` asked, cut into shards of ``per_shard`` positions; ``dataset.json`` records
their number and the sha256 of their Position IDs (``source_positions``, ``source_sha256``), so a job whose
source folders changed is refused instead of resumed with other positions.  Every worker reads the folders
itself (on a Ray cluster of several machines they must be at the same path on each).
So a shard is a pure function of (model, settings, seed, shard index): shards can be made in any order, by any
number of workers, on any machine, and a stopped job resumes by making the shards that are missing.

Label kinds (:data:`LABEL_KINDS`):

* ``ply1`` / ``ply2``: the agent's 1-ply / 2-ply probabilities of the position (GNU Backgammon's n-ply
  expectation over the 21 rolls; :class:`bgai.agents.neural.NeuralAgent`), standard errors 0;
* ``trajectory``: every position of the shard's self-play games labelled with its game's luck-adjusted outcome
  from there, a one-trial rollout with variance reduction (:mod:`bgai.train.trajectory`: unbiased, noisy, may lie
  outside [0, 1]; standard errors NaN, not estimable from one trial); the games' dice and exploring draws come
  from ``SeedSequence(seed, spawn_key=(8, shard))``, ``keep`` and ``classes`` then thin the labelled positions;
  ``explore`` is the probability of an exploring play in each of the first ``explore_plies`` plies (0 = all), drawn
  among the ``candidates`` best 0-ply plays (0 = among all legal plays), and only positions after a game's last
  exploring play are labelled;
* ``rollout``: a cubeless rollout of ``trials`` trials with variance reduction (:mod:`bgai.analysis.rollout`;
  with an agent spec ``model.pt:bearoff=db`` trials end at bear-off positions with the database's values), with its
  standard errors.  Two labelling schemes, recorded in the dataset (``batched``):

  - ``batched: true`` (new datasets): all the shard's positions are rolled out together
    (:func:`bgai.analysis.rollout.rollout_positions`) with one seed per shard, :func:`shard_seed`; every position
    of the shard rolls the same trial dice (each label is an unbiased rollout of its position, the errors of
    positions of the same shard are correlated, those of different shards independent);
  - ``batched: false`` (datasets made before the batched scheme, whose ``dataset.json`` has no ``batched``): one
    rollout per position (:func:`bgai.analysis.rollout.rollout_position`) seeded by :func:`position_seed`; a
    resumed job keeps the scheme its folder records, so its shards stay consistent.

Dataset format (a folder):

* ``dataset.json``: ``{"format": "bgai-labels", "format_version": 1, "settings": {...}}`` (the model's file
  name with its agent options, e.g. ``bgai-td128.pt:bearoff=db``, and the file's sha256, the label kind and its
  parameters, seed, games per shard, keep, disagree; ``batched`` for rollout labels; ``classes`` when given);
* ``shard-00000.npz`` ...: numpy ``savez_compressed`` archives, each written atomically, holding
  ``boards`` ``(N, 2, 25)`` int8 (side on roll in row 0, :mod:`bgai.core.board`), ``position_ids`` ``(N,)``
  ``<U14`` (GNU Position IDs of the same positions), ``classes`` ``(N,)`` int8 (:mod:`bgai.model.classes`),
  ``probs`` ``(N, 5)`` float32 (win, win gammon, win backgammon, lose gammon, lose backgammon for the side on
  roll), ``std_errors`` ``(N, 5)`` float32, and ``meta`` (a JSON string: shard index, games, seconds).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable

import numpy as np

from bgai import __version__
from bgai.agents.base import Agent
from bgai.agents.random import RandomAgent
from bgai.agents.registry import make_agent, parse_spec
from bgai.analysis.rollout import rollout_position, rollout_positions
from bgai.core.board import flip, is_game_over
from bgai.core.equity import cubeless_equity
from bgai.core.movegen import afterstates
from bgai.core.position_id import encode_position_ids
from bgai.errors import BgaiError, CheckpointError
from bgai.game.play import play_games
from bgai.model.classes import CLASS_NAMES, CLASS_OVER, classify
from bgai.train.config import MAX_LABEL_SHARDS
from bgai.train.trajectory import trajectory_labels
from bgai.util.fileio import atomic_write_bytes, atomic_write_json, ensure_directory, file_sha256
from bgai.util.parallel import run_units

__all__ = ["LABEL_KINDS", "LabelSettings", "label_shard", "make_labels", "load_labels", "Dataset", "label_context",
           "run_label_unit", "LabelsInterrupted", "position_seed", "shard_seed", "parse_classes", "sample_positions",
           "candidate_positions", "relabel_positions"]

FORMAT = "bgai-labels"
FORMAT_VERSION = 1
#: The label kinds :func:`label_shard` makes.
LABEL_KINDS = ("ply1", "ply2", "rollout", "trajectory")
#: The most shards one job may have (a job lists its shards before it starts).
MAX_SHARDS = MAX_LABEL_SHARDS
#: The most candidate plays per sampled position (:attr:`LabelSettings.candidates`).
MAX_CANDIDATES = 64
_SHARD = "shard-{:05d}.npz"


class LabelError(BgaiError):
    """Bad label settings, or a dataset folder that does not match them."""


@dataclass(frozen=True)
class LabelSettings:
    """What a label job makes (recorded in ``dataset.json``; a resumed job must have the same).

    Attributes:
        model: agent spec of the model that plays the games and labels (a checkpoint path).
        kind: one of :data:`LABEL_KINDS`.
        seed: the job's seed (>= 0).
        games_per_shard: self-play games per shard (> 0).
        keep: probability of keeping a position (0 < keep <= 1).
        disagree: keep only positions whose 0-ply and label cubeless equities differ by more than this (ppg);
            0 keeps all.
        trials: rollout trials per position (``kind='rollout'``).
        truncate: rollout truncation in plies (``kind='rollout'``; 0 = play to the end).
        explore: probability that a play of the sampling games is a uniformly random legal play instead of the
            model's (0 <= explore < 1; 0 = the model's self-play).
        explorers: agent specs (:func:`bgai.agents.registry.make_agent`) that make the exploring plays, one drawn
            uniformly per play; empty = ``('random',)`` (uniformly random legal plays).  Needs ``explore`` > 0.
        classes: keep only positions of these classes (names of :data:`bgai.model.classes.CLASS_NAMES` but
            ``over``, in class order; :func:`parse_classes`); empty = every class.
        batched: rollout labelling scheme (module docstring): True = the shard's positions together, False = one
            rollout per position (datasets made before the batched scheme); None = True for a new folder, the
            folder's own scheme when resuming (:func:`make_labels` resolves it).
        candidates: 0 = label the sampled positions; K > 0 = label the afterstates of the K best 0-ply plays of
            each for a drawn roll, opponent on roll (module docstring; :func:`candidate_positions`).
        relabel: label folders whose positions are labelled instead of self-play samples (module docstring); needs
            keep 1, no explore and no candidates.
        per_shard: positions per shard when relabelling.
        explore_plies: ``kind='trajectory'``: exploring plays only in the first this many plies of a game (0 = in
            every ply).
        source_positions, source_sha256: the relabelled positions' number and fingerprint (:func:`make_labels` sets
            them; :func:`relabel_positions`).
    """

    model: str
    kind: str = "ply1"
    seed: int = 0
    games_per_shard: int = 200
    keep: float = 0.25
    disagree: float = 0.0
    trials: int = 0
    truncate: int = 0
    classes: tuple[str, ...] = ()
    batched: bool | None = None
    explore: float = 0.0
    explorers: tuple[str, ...] = ()
    candidates: int = 0
    relabel: tuple[str, ...] = ()
    per_shard: int = 1000
    source_positions: int = 0
    source_sha256: str = ""
    explore_plies: int = 0

    def check(self) -> None:
        """Raises LabelError naming the first bad field."""
        if self.kind not in LABEL_KINDS:
            raise LabelError(f"label kind must be one of {', '.join(LABEL_KINDS)}, got {self.kind!r}")
        if not 0 <= self.seed < 2**63:
            raise LabelError(f"seed must be in 0..2**63-1, got {self.seed}")
        if not 0 < self.games_per_shard <= 100_000:
            raise LabelError(f"games per shard must be in 1..100000, got {self.games_per_shard}")
        if not 0 < self.keep <= 1:
            raise LabelError(f"keep must be in (0, 1], got {self.keep}")
        if not self.disagree >= 0:
            raise LabelError(f"disagree must be >= 0, got {self.disagree}")
        if self.kind == "rollout" and self.trials < 1:
            raise LabelError("rollout labels need trials >= 1")
        if not 0 <= self.explore < 1:
            raise LabelError(f"explore must be in [0, 1), got {self.explore}")
        if self.explorers and not self.explore:
            raise LabelError("explorers make the exploring plays: give explore > 0 too")
        if any(not isinstance(e, str) or not e.strip() for e in self.explorers):
            raise LabelError(f"explorers: an empty agent name in {list(self.explorers)!r}")
        if len(set(self.explorers)) != len(self.explorers):
            raise LabelError(f"explorers must be distinct agent specs, got {list(self.explorers)!r}")
        if not 0 <= self.candidates <= MAX_CANDIDATES:
            raise LabelError(f"candidates must be in 0..{MAX_CANDIDATES}, got {self.candidates}")
        if self.classes and tuple(self.classes) != parse_classes(",".join(self.classes)):
            raise LabelError(f"classes must be distinct class names in class order, got {self.classes!r}")
        if not 0 <= self.explore_plies <= 10_000:
            raise LabelError(f"explore plies must be in 0..10000, got {self.explore_plies}")
        if self.explore_plies and self.kind != "trajectory":
            raise LabelError("explore plies limit the exploring plays of trajectory labels: use --kind trajectory")
        if self.kind == "trajectory":
            if self.relabel or self.disagree or self.trials or self.truncate or self.explorers:
                raise LabelError("trajectory labels come from their own self-play games: no relabel, disagree, "
                                 "trials, truncate or explorers")
        if self.relabel:
            if self.keep != 1 or self.explore or self.candidates:
                raise LabelError("relabelling takes the folders' positions as they are: keep 1, no explore, "
                                 "no candidates")
            if not 1 <= self.per_shard <= 1_000_000:
                raise LabelError(f"positions per shard must be in 1..1000000, got {self.per_shard}")
            if any(not isinstance(f, str) or not f.strip() for f in self.relabel):
                raise LabelError(f"relabel: an empty folder name in {list(self.relabel)!r}")

    def record(self) -> dict:
        """The settings as ``dataset.json`` holds them (module docstring): ``batched`` only for rollout labels,
        ``classes``, ``explore``, ``candidates`` and the relabelling keys only when given, so that a folder made
        before they existed reads the same."""
        d = asdict(self)
        if not self.candidates:
            del d["candidates"]
        if self.relabel:
            d["relabel"] = [os.path.normpath(f) for f in self.relabel]
            del d["games_per_shard"]  # no games are played
        else:  # self-play samples: none of the relabelling keys
            for k in ("relabel", "per_shard", "source_positions", "source_sha256"):
                del d[k]
        if not self.explore:
            del d["explore"]
        if not self.explore_plies:
            del d["explore_plies"]
        d["explorers"] = list(self.explorers)
        if not self.explorers:
            del d["explorers"]
        d["classes"] = list(self.classes)
        if not self.classes:
            del d["classes"]
        if not (self.kind == "rollout" and self.batched):  # the old per-position scheme: recorded by its absence
            del d["batched"]
        return d


def parse_classes(text: str) -> tuple[str, ...]:
    """``'race,bearoff'`` -> ``('bearoff', 'race')``: position class names (:data:`bgai.model.classes.CLASS_NAMES`
    but ``over``: finished games are never sampled), comma-separated, returned distinct and in class order.

    Raises:
        LabelError: an unknown or repeated name, ``over``, or none given.
    """
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    allowed = [n for i, n in enumerate(CLASS_NAMES) if i != CLASS_OVER]
    if not names:
        raise LabelError(f"classes: give one or more of {', '.join(allowed)}")
    for n in names:
        if n not in allowed:
            raise LabelError(f"unknown position class {n!r}: use {', '.join(allowed)}")
    if len(set(names)) != len(names):
        raise LabelError(f"position class named twice in {text!r}")
    return tuple(n for n in allowed if n in names)


def _labeller(agent: Agent, settings: LabelSettings) -> Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]:
    """``(boards, shard) -> (probs (N, 5), std_errors (N, 5))`` for the settings' label kind and scheme."""
    if settings.kind in ("ply1", "ply2"):
        deep = agent.at_ply(1 if settings.kind == "ply1" else 2)

        def search(boards: np.ndarray, shard: int):
            p = np.asarray(deep.probabilities(boards), dtype=np.float64)
            return p, np.zeros_like(p)

        return search
    if settings.batched is not False:
        def batch(boards: np.ndarray, shard: int):
            r = rollout_positions(agent, boards, trials=settings.trials, truncate=settings.truncate or None,
                                  seed=shard_seed(settings.seed, shard))
            return r.probabilities, r.std_errors

        return batch

    def rolled(boards: np.ndarray, shard: int):
        # one rollout per position, seeded by the job's seed and the position (its Position ID): the same
        # position gets the same dice wherever it is labelled
        res = [rollout_position(agent, b, trials=settings.trials, truncate=settings.truncate or None,
                                seed=position_seed(settings.seed, b)) for b in boards]
        return (np.array([r.probabilities for r in res], dtype=np.float64),
                np.array([r.std_errors for r in res], dtype=np.float64))

    return rolled


def position_seed(seed: int, board: np.ndarray) -> int:
    """A 63-bit seed from the job's seed and a position (sha256 of both)."""
    h = hashlib.sha256(np.int64(seed).tobytes() + np.ascontiguousarray(board, dtype=np.int8).tobytes()).digest()
    return int.from_bytes(h[:8], "little") >> 1


def shard_seed(seed: int, shard: int) -> int:
    """The rollout seed of shard ``shard`` in the batched scheme: 63 bits of ``SeedSequence(seed, spawn_key=(6,
    shard))``, so shards roll independent dice."""
    state = np.random.SeedSequence(seed, spawn_key=(6, shard)).generate_state(2, np.uint32)
    return (int(state[0]) | int(state[1]) << 32) >> 1


class _Exploring(Agent):
    """``agent``'s plays, each replaced with probability ``p`` by the play of one of ``explorers`` (default: a
    uniformly random legal play).  Draws from the rng of :meth:`choose`: one uniform per position; with several
    explorers, then one explorer index per replaced play; then the explorers' own draws, in explorer order."""

    name = "exploring"

    def __init__(self, agent: Agent, p: float, explorers: list[Agent] | None = None):
        self.agent, self.p, self.explorers = agent, p, explorers or [RandomAgent()]

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        plays = np.array(self.agent.choose(boards, dice, rng), dtype=np.int8, copy=True)
        wild = np.flatnonzero(rng.random(len(plays)) < self.p)
        if not wild.size:
            return plays
        boards, dice = np.asarray(boards), np.asarray(dice)
        pick = rng.integers(len(self.explorers), size=wild.size) if len(self.explorers) > 1 \
            else np.zeros(wild.size, dtype=np.int64)
        for j, explorer in enumerate(self.explorers):
            rows = wild[pick == j]
            if rows.size:
                plays[rows] = explorer.choose(boards[rows], dice[rows], rng)
        return plays


@functools.lru_cache(maxsize=8)
def _explorer_agents(specs: tuple[str, ...]) -> tuple[Agent, ...]:
    """The ``--explore-with`` agents, built once per process (a heavy one such as ``gnubg`` loads its nets once,
    not once per shard); their plays depend only on the rng :meth:`~bgai.agents.base.Agent.choose` is given."""
    return tuple(make_agent(e) for e in specs)


def sample_positions(agent: Agent, settings: LabelSettings, shard: int) -> np.ndarray:
    """The positions shard ``shard`` labels (before the ``disagree`` test): its self-play games' positions before
    a roll, kept with probability ``keep`` and of the ``classes`` asked (module docstring).

    Returns:
        ``(N, 2, 25)`` int8 boards, side on roll in row 0, in game and ply order.
    """
    ss = np.random.SeedSequence(settings.seed, spawn_key=(5, shard))
    game_ss, agent_ss, keep_ss = ss.spawn(3)
    dice = [np.random.default_rng(s) for s in game_ss.spawn(settings.games_per_shard)]
    explorers = list(_explorer_agents(tuple(settings.explorers)))
    player = _Exploring(agent, settings.explore, explorers) if settings.explore else agent
    res = play_games((player, player), dice, np.random.default_rng(agent_ss), record=True)
    boards = np.concatenate([r.positions() for r in res.records])
    boards = boards[~is_game_over(boards)]
    keep = np.random.default_rng(keep_ss).random(len(boards)) < settings.keep
    if settings.candidates:
        boards = candidate_positions(agent, boards[keep], settings.candidates,
                                     np.random.default_rng(np.random.SeedSequence(settings.seed,
                                                                                  spawn_key=(7, shard))))
        boards = boards[~is_game_over(boards)]
        keep = np.ones(len(boards), dtype=bool)
    if settings.classes and len(boards):
        keep &= np.isin(classify(boards), [CLASS_NAMES.index(c) for c in settings.classes])
    return boards[keep]


def candidate_positions(agent: Agent, boards: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The afterstates of the ``k`` best plays at 0-ply of each position for a roll drawn for it, opponent on roll.

    Args:
        agent: the agent whose 0-ply equities (``agent.at_ply(0).evaluate_afterstates``) rank the plays.
        boards: ``(N, 2, 25)`` int8 positions before a roll, side on roll in row 0.
        k: plays per position (>= 1); a position with fewer legal plays gives them all.
        rng: draws the rolls: ``rng.integers(1, 7, size=(N, 2))``.

    Returns:
        ``(M, 2, 25)`` int8, the opponent on roll in row 0 (:func:`bgai.core.board.flip` of the afterstates), for
        each position its plays best first, positions in order; an afterstate that appeared earlier in the list is
        left out (the same label twice would weigh it double).
    """
    if not len(boards):
        return np.zeros((0, 2, 25), dtype=np.int8)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    after, src = afterstates(boards, dice)
    eq = np.asarray(agent.at_ply(0).evaluate_afterstates(after), dtype=np.float64)
    order = np.lexsort((-eq, src))  # by position, best first (stable: ties keep generation order)
    first = np.searchsorted(src[order], src[order], side="left")
    top = order[np.arange(len(order)) - first < k]
    out = flip(after[top])
    _, idx = np.unique(out.reshape(len(out), -1), axis=0, return_index=True)
    return out[np.sort(idx)]


def _trajectory_shard(agent: Agent, settings: LabelSettings, shard: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions and labels of a trajectory shard (module docstring, :mod:`bgai.train.trajectory`)."""
    games_ss, keep_ss = np.random.SeedSequence(settings.seed, spawn_key=(8, shard)).spawn(2)
    try:
        boards, probs = trajectory_labels(agent, settings.games_per_shard, np.random.default_rng(games_ss),
                                          explore=settings.explore, explore_plies=settings.explore_plies,
                                          candidates=settings.candidates)
    except BgaiError as exc:
        raise LabelError(str(exc)) from None
    keep = np.random.default_rng(keep_ss).random(len(boards)) < settings.keep
    if settings.classes and len(boards):
        keep &= np.isin(classify(boards), [CLASS_NAMES.index(c) for c in settings.classes])
    return boards[keep], probs[keep]


def label_shard(agent: Agent, settings: LabelSettings, shard: int,
                source: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Make shard ``shard``: play its games, sample positions (:func:`sample_positions`), label them (module
    docstring).

    Args:
        agent: the labelling agent (``settings.model``).
        settings: the job's settings.
        shard: the shard's index.
        source: when relabelling, all the relabelled positions (:func:`relabel_positions`); the shard labels rows
            ``shard * per_shard`` onwards.

    Returns:
        The arrays of a shard file (``boards``, ``position_ids``, ``classes``, ``probs``, ``std_errors``).
    """
    t0 = time.perf_counter()
    if settings.kind == "trajectory":
        boards, probs = _trajectory_shard(agent, settings, shard)
        se = np.full_like(probs, np.nan)
    else:
        if settings.relabel:
            if source is None:
                raise LabelError("relabelling needs the source positions (relabel_positions)")
            boards = source[shard * settings.per_shard : (shard + 1) * settings.per_shard]
        else:
            boards = sample_positions(agent, settings, shard)
        probs, se = (_labeller(agent, settings)(boards, shard) if len(boards)
                     else (np.zeros((0, 5)), np.zeros((0, 5))))
    if settings.disagree > 0 and len(boards):
        eq0 = cubeless_equity(np.asarray(agent.at_ply(0).probabilities(boards)))
        far = np.abs(cubeless_equity(probs) - eq0) > settings.disagree
        boards, probs, se = boards[far], probs[far], se[far]
    meta = {"shard": shard, "games": 0 if settings.relabel else settings.games_per_shard, "positions": int(len(boards)),
            "seconds": round(time.perf_counter() - t0, 3)}
    return {
        "boards": boards.astype(np.int8),
        "position_ids": np.array(encode_position_ids(boards) if len(boards) else [], dtype="<U14"),
        "classes": classify(boards).astype(np.int8) if len(boards) else np.zeros(0, np.int8),
        "probs": probs.astype(np.float32),
        "std_errors": se.astype(np.float32),
        "meta": np.array(json.dumps(meta)),
    }


def _write_shard(folder: str, shard: int, arrays: dict[str, np.ndarray]) -> str:
    import io

    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    path = os.path.join(folder, _SHARD.format(shard))
    atomic_write_bytes(path, buf.getvalue())
    return path


def _model_record(spec: str) -> tuple[str, str]:
    """``(file name with the spec's options, the file's path)``: ``'x/m.pt:bearoff=db'`` -> ``('m.pt:bearoff=db',
    'x/m.pt')``; a spec without options records the bare file name, as datasets always did."""
    name, options = parse_spec(spec)
    shown = os.path.basename(name)
    if options:
        shown += ":" + ",".join(f"{k}={v}" for k, v in sorted(options.items()))
    return shown, name


def _read_folder(folder: str) -> dict | None:
    """The folder's ``dataset.json`` (None when there is none)."""
    meta_path = os.path.join(folder, "dataset.json")
    if not os.path.exists(meta_path):
        return None
    try:
        with open(meta_path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise LabelError(f"{meta_path} is unreadable ({type(exc).__name__}): not a bgai label folder?") from None


def _resolve_scheme(folder: str, settings: LabelSettings) -> LabelSettings:
    """Settings with ``batched`` decided (:class:`LabelSettings`): a folder's recorded scheme wins over None."""
    if settings.kind != "rollout":
        return replace(settings, batched=None)
    if settings.batched is not None:
        return settings
    old = _read_folder(folder)
    if old is not None and isinstance(old.get("settings"), dict) and old["settings"].get("kind") == "rollout":
        return replace(settings, batched=bool(old["settings"].get("batched", False)))
    return replace(settings, batched=True)


def _open_folder(folder: str, settings: LabelSettings) -> dict:
    """Create the dataset folder, or check that an existing one was made with the same settings."""
    shown, path = _model_record(settings.model)
    if not os.path.isfile(path):
        raise CheckpointError(f"model file {path!r} does not exist (labeller {settings.model!r})")
    record = {"format": FORMAT, "format_version": FORMAT_VERSION, "bgai_version": __version__,
              "settings": {**settings.record(), "model": shown, "model_sha256": file_sha256(path)}}
    meta_path = os.path.join(folder, "dataset.json")
    if os.path.exists(meta_path):
        old = _read_folder(folder)
        source_keys = ("source_positions", "source_sha256")
        if (settings.relabel and isinstance(old.get("settings"), dict) and old.get("format") == FORMAT
                and {k: v for k, v in old["settings"].items() if k not in source_keys}
                == {k: v for k, v in record["settings"].items() if k not in source_keys}
                and old["settings"] != record["settings"]):
            raise LabelError(f"the positions of the relabelled folders changed since {folder!r} was started "
                             f"({old['settings'].get('source_positions')} then, {settings.source_positions} now): "
                             "label them into another folder")
        if old.get("format") != FORMAT or old.get("settings") != record["settings"]:
            raise LabelError(f"{folder!r} holds labels made with other settings: use another folder, or the same "
                             f"settings to resume ({meta_path})")
        return old
    ensure_directory(folder, "label folder")
    atomic_write_json(meta_path, record)
    return record


def relabel_positions(settings: LabelSettings) -> tuple[np.ndarray, str]:
    """The positions a relabelling job labels (module docstring) and their fingerprint.

    Returns:
        ``(boards (N, 2, 25) int8, sha256 hex of their Position IDs joined by newlines)``.

    Raises:
        LabelError: a folder that is not a label folder, or an unreadable shard.
    """
    parts = [load_labels(f).boards for f in settings.relabel]
    boards = np.concatenate(parts) if parts else np.zeros((0, 2, 25), np.int8)
    ids = np.array(encode_position_ids(boards, validate=False) if len(boards) else [], dtype="<U14")
    _, first = np.unique(ids, return_index=True)
    keep = np.zeros(len(boards), dtype=bool)
    keep[first] = True
    if settings.classes and len(boards):
        keep &= np.isin(classify(boards), [CLASS_NAMES.index(c) for c in settings.classes])
    boards, ids = boards[keep], ids[keep]
    return boards, hashlib.sha256("\n".join(ids.tolist()).encode()).hexdigest()


def label_context(settings: LabelSettings) -> tuple[Agent, LabelSettings, np.ndarray | None]:
    """The worker context of a label job (:func:`bgai.util.parallel.run_units`): the labelling agent, built once
    per worker, the settings, and when relabelling the positions (checked against the job's fingerprint)."""
    source = None
    if settings.relabel:
        source, digest = relabel_positions(settings)
        if digest != settings.source_sha256:
            raise LabelError("the relabelled folders changed while the job ran: their positions differ from those "
                             "the job started with")
    return make_agent(settings.model), settings, source


def run_label_unit(context: tuple[Agent, LabelSettings, np.ndarray | None], shard: int) -> dict[str, np.ndarray]:
    """One shard as a :func:`~bgai.util.parallel.run_units` unit: :func:`label_shard` of the context's agent."""
    agent, settings, source = context
    return label_shard(agent, settings, shard, source)


class LabelsInterrupted(KeyboardInterrupt):
    """A label job stopped by Ctrl-C / SIGTERM; the shards that finished are written (attribute ``made``)."""

    def __init__(self, signal_name: str, made: list[int]) -> None:
        super().__init__(f"interrupted ({signal_name}) after {len(made)} shard(s) made")
        self.made = made


def make_labels(folder: str, settings: LabelSettings, shards: int | None, *, workers: int = 1,
                progress: Callable[[int, int], None] | None = None, backend: str = "local") -> list[int]:
    """Make shards ``0 .. shards-1`` of a label job in ``folder``, skipping those already there (resume).

    The shards run as :func:`bgai.util.parallel.run_units` units (one shard per unit); each finished shard is
    written at once (atomically), in the order they finish.

    Args:
        folder: the dataset folder (created; an existing one must hold the same settings).
        settings: :class:`LabelSettings`.
        shards: how many shards the job has in all; when relabelling at most as many as the positions fill, None
            = that many.
        workers: processes or Ray actors (1 = this process with the local backend).  The shards do not depend on
            it.
        progress: called as ``progress(done, shards)`` after each shard.
        backend: :func:`~bgai.util.parallel.run_units` backend (``'local'``, or ``'ray'`` once
            :func:`bgai.util.ray_backend.connect` ran).

    Returns:
        The shard indices made by this call, in the order they finished.

    Raises:
        LabelError: bad settings, more than :data:`MAX_SHARDS` shards, or a folder made with other settings.
        CheckpointError: the model file does not exist, or (raised by the first shard) is not a model; a folder
            made by this call is then removed again.
        BgaiError: the folder cannot be made.
        LabelsInterrupted: Ctrl-C / SIGTERM; the finished shards are written (``made``), a later call resumes.
    """
    settings.check()
    if settings.relabel:
        for f in settings.relabel:
            if os.path.abspath(f) == os.path.abspath(folder):
                raise LabelError(f"relabel: {f!r} is the output folder itself; write the new labels elsewhere")
        source, digest = relabel_positions(settings)
        settings = replace(settings, source_positions=len(source), source_sha256=digest)
        fill = -(-len(source) // settings.per_shard)
        if not fill:
            raise LabelError("relabel: the folders hold no positions" + (" of the classes asked" if settings.classes
                                                                          else ""))
        if shards is None:
            shards = fill
        elif shards > fill:
            raise LabelError(f"relabel: {len(source):,} positions fill {fill:,} shard(s) of {settings.per_shard:,}, "
                             f"not {shards:,}")
    elif shards is None:
        raise LabelError("give the number of shards")
    if shards < 1:
        raise LabelError(f"shards must be >= 1, got {shards}")
    if shards > MAX_SHARDS:
        raise LabelError(f"shards must be at most {MAX_SHARDS:,}, got {shards:,}")
    settings = _resolve_scheme(folder, settings)
    existed = {p: os.path.exists(p) for p in (folder, os.path.join(folder, "dataset.json"))}
    _open_folder(folder, settings)
    todo = [i for i in range(shards) if not os.path.exists(os.path.join(folder, _SHARD.format(i)))]
    done = [shards - len(todo)]
    made: list[int] = []
    if not todo:
        return made

    def write(u: int, arrays: dict[str, np.ndarray]) -> None:
        _write_shard(folder, todo[u], arrays)
        made.append(todo[u])
        done[0] += 1
        if progress:
            progress(done[0], shards)

    try:
        run = run_units(run_label_unit, todo, workers=workers, setup=label_context, setup_args=(settings,),
                        backend=backend, on_result=write)
    except BaseException:
        if not made:  # nothing labelled (e.g. the model file is not a model): leave the folder as it was
            for path, was in reversed(existed.items()):
                if not was:
                    with contextlib.suppress(OSError):
                        (os.rmdir if path == folder else os.unlink)(path)
        raise
    if run.interrupted:
        raise LabelsInterrupted(run.interrupted, made)
    return made


@dataclass
class Dataset:
    """A label folder read into memory (arrays as in the shard files, shards concatenated in index order)."""

    boards: np.ndarray
    probs: np.ndarray
    std_errors: np.ndarray
    classes: np.ndarray
    settings: dict

    def __len__(self) -> int:
        return len(self.boards)


def load_labels(folder: str, shards: int | None = None) -> Dataset:
    """Read every shard of a label folder, or with ``shards=N`` its first ``N`` (``shard-00000`` ..
    ``shard-{N-1}``, as a training config names the labels it used while the folder grows).

    Raises:
        LabelError: not a label folder, an unreadable shard (named), or, with ``shards``, a missing one of the
            first ``N`` (named).
    """
    meta_path = os.path.join(folder, "dataset.json")
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as exc:
        raise LabelError(f"{folder!r} is not a bgai label folder ({meta_path}: {type(exc).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise LabelError(f"{folder!r} is not a bgai label folder ({meta_path} is not a {FORMAT} description)")
    names = sorted(n for n in os.listdir(folder) if n.startswith("shard-") and n.endswith(".npz"))
    if shards is not None:
        if not 1 <= shards <= MAX_SHARDS:
            raise LabelError(f"shards must be 1 .. {MAX_SHARDS:,} for {folder!r}, got {shards:,}")
        present = set(names)
        names = [_SHARD.format(i) for i in range(shards)]
        missing = [n for n in names if n not in present]
        if missing:
            raise LabelError(f"{folder!r} lacks {len(missing)} of its first {shards} shards (the first missing: "
                             f"{missing[0]})")
    parts = []
    for n in names:
        path = os.path.join(folder, n)
        try:
            with np.load(path) as z:
                part = {k: z[k] for k in ("boards", "probs", "std_errors", "classes")}
        except Exception as exc:  # zipfile/numpy raise many kinds for a damaged file
            raise LabelError(f"label shard {path!r} is unreadable ({type(exc).__name__})") from None
        problem = _shard_problem(part)
        if problem:
            raise LabelError(f"label shard {path!r} is damaged: {problem}")
        parts.append(part)
    settings = meta.get("settings")
    settings = settings if isinstance(settings, dict) else {}
    if not parts:
        return Dataset(np.zeros((0, 2, 25), np.int8), np.zeros((0, 5), np.float32), np.zeros((0, 5), np.float32),
                       np.zeros(0, np.int8), settings)
    return Dataset(*(np.concatenate([p[k] for p in parts]) for k in ("boards", "probs", "std_errors", "classes")),
                   settings=settings)


def _shard_problem(part: dict[str, np.ndarray]) -> str | None:
    """What is wrong with a shard's arrays (shapes, class values, non-finite probabilities), or None."""
    n = part["boards"].shape[0] if part["boards"].ndim == 3 else -1
    if n < 0 or part["boards"].shape[1:] != (2, 25):
        return f"boards of shape {part['boards'].shape}, not (N, 2, 25)"
    for k in ("probs", "std_errors"):
        if part[k].shape != (n, 5):
            return f"{k} of shape {part[k].shape} for {n} boards, not ({n}, 5)"
    if part["classes"].shape != (n,):
        return f"classes of shape {part['classes'].shape} for {n} boards"
    c = part["classes"]
    if n and (not np.issubdtype(c.dtype, np.integer) or c.min() < 0 or c.max() >= len(CLASS_NAMES)):
        return f"class values outside 0 .. {len(CLASS_NAMES) - 1}"
    if not np.isfinite(part["probs"]).all():
        return "non-finite probabilities"
    return None
