"""Generations of supervised training: new net -> new positions -> labels -> train -> evaluate, repeated.

The loop the strongest engines ran (wildbg went through 17 generations; each gave +0.01..+0.02 equity): the
current model plays self-play games, positions of them are labelled by a deeper evaluation of that model (its
1-ply or 2-ply search, or a rollout: :mod:`bgai.train.labels`), a copy of the model is trained on them
(:mod:`bgai.train.supervised`, warm-started from the model), and the new model is evaluated.  If it is accepted
(``accept``) it becomes the parent of the next generation; else the next generation starts again from the same
parent (with new positions: every generation has its own seeds).

Config (YAML, :class:`GenerationsConfig`; unknown keys and bad values are one-line :class:`~bgai.errors.ConfigError`
naming the key)::

    start: checkpoints/bgai-td128.pt:bearoff=db   # the first parent: a model file, option bearoff=db|net allowed
    generations: 3         # generations after the start model (a finished job may be extended by raising it)
    seed: 1                # generation K: labels seed seed + K, training seed seed + K
    workers: 1             # processes for labels and evaluations (the figures do not depend on it)
    accept: not_worse      # always | not_worse | better (below)
    checkpoint_every: 100000   # training checkpoints (samples)
    labels: {kind: ply2, shards: 20, games_per_shard: 50, keep: 0.25, trials: 0, truncate: 0, classes: [],
             disagree: 0.0, explore: 0.0, explorers: [], candidates: 0, explore_plies: 0}   # LabelSettings
    supervised: {net: all, epochs: 10, lr: 3e-4, ...}            # SupervisedConfig without data and warm_start
    eval: {games: 2000, seed: 2026, parent_games: 0, bench: data/bench/strength-v1}

The ``model`` section of each training run (encoding, hidden sizes, activation) is the parent's net's, and
``supervised.data`` / ``supervised.warm_start`` are the generation's labels and its parent's model file (setting
them in the config is an error).

Output folder ``OUT``:

* ``config.json``: the resolved config.  A rerun with the same config resumes; one that differs (but for a larger
  ``generations`` or another ``workers``: the label shards and the evaluations are pure functions of their seeds,
  whatever the number of processes) is refused with one line naming the first changed key.
* ``gen-0/model.pt``: the start model (options applied: ``bearoff=db`` attaches the bear-off database, which every
  later generation keeps); ``gen-0/eval.json``: its evaluation, the learning curve's first point.
* ``gen-K/labels/``: the label folder (:mod:`bgai.train.labels`); ``gen-K/train/``: the training run folder
  (:mod:`bgai.train.loop`, no tensorboard, no evaluation during training); ``gen-K/model.pt``: the trained model
  (a model file without training state, ``generation`` entry added); ``gen-K/eval.json``: its evaluations
  (``pubeval``, ``parent``, ``bench``, each written as soon as it is done); ``gen-K/cpu.json``: CPU seconds per
  step; ``gen-K/generation.json``: the generation's record, written last (a generation is finished when it is
  there).
* ``generations.jsonl``: one JSON line per finished generation, in order (rewritten atomically after each):
  ``generation``, ``model`` (path), ``sha256``, ``parent``, ``accepted``, ``labels`` (positions), ``label_kind``,
  ``label_cpu_s``, ``train_cpu_s``, ``eval_cpu_s``, ``train`` (epochs, samples, best validation loss),
  ``pubeval`` (``games``, ``seed``, ``ppg``, ``ci95``, ``win``, ``gammon``, ``seconds``), ``parent_match`` (the
  same, or null), ``er`` (per class ``er``, ``se``, ``n``, ``outside``; or null).  By design the file is not
  byte-identical between two runs of the same config: ``label_cpu_s``, ``train_cpu_s`` and ``eval_cpu_s`` (CPU
  seconds, :func:`cpu_seconds`) and ``pubeval.seconds`` / ``parent_match.seconds`` (wall-clock seconds of the
  evaluation) are measurements of the run, kept as its cost; compare runs on the other fields (the results),
  not on the file's bytes or SHA-256.  ``docs/lineage/generations.jsonl`` is a curated summary of the shipped
  models' lineage in a shorter form, without these fields; there ``labels`` is likewise the generation's new
  labels, and ``labels_trained`` adds, per class, the labelled positions its nets were trained on (training and
  validation split; an inherited net's count is its parent's).

Resume (the same command again, also after Ctrl-C or a crash): labels make only their missing shards, training
continues ``train/last.pt`` exactly (``--resume``), a finished ``model.pt`` is not trained again, evaluations
already in ``eval.json`` are not played again, a finished generation is skipped.  ``OUT`` is locked while a job runs.

CPU seconds of a step: :func:`cpu_seconds` (this process's user + system time and that of its finished child
processes, e.g. label and evaluation workers) after minus before, added up over the sessions that ran the step
(Ray workers are not counted).

Acceptance (``accept``): ``always``; ``not_worse`` (default): accepted unless measurably worse, i.e. unless the
upper end of the 95% interval of its score against the parent is below 0; ``better``: only if the lower end is
above 0.  The score against the parent is the head-to-head match (``eval.parent_games`` > 0) or else the
difference of the two pubeval scores (same seed and games, interval sqrt(ci_new^2 + ci_parent^2), which overstates
the noise of a difference of duplicate-dice series played on the same dice).
"""

from __future__ import annotations

import copy
import json
import math
import os
import resource
import time
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Callable

from bgai.agents.registry import make_agent, parse_spec, resolve_spec
from bgai.analysis.rollout import MAX_TRIALS
from bgai.errors import BgaiError, ConfigError
from bgai.evaluate.series import MAX_SERIES, evaluate
from bgai.evaluate.strength import class_error_rates, load_benchmark
from bgai.model.bundle import FORMAT_VERSION, load_model_bundle, save_checkpoint
from bgai.model.files import check_checkpoint_file
from bgai.model.routing import NET_CLASSES
from bgai.train.config import ModelConfig, RunConfig, SupervisedConfig, TrainConfig, read_yaml_file
from bgai.train.labels import LABEL_KINDS, LabelSettings, LabelsInterrupted, load_labels, make_labels, parse_classes
from bgai.train.loop import lock_run_folder
from bgai.train.run import train
from bgai.util.fileio import atomic_write_bytes, atomic_write_json, file_sha256

__all__ = ["ACCEPT", "LabelsSection", "EvalSection", "GenerationsConfig", "load_generations_config",
           "GenerationsInterrupted", "GenerationsResult", "cpu_seconds", "run_generations", "read_records"]

#: Acceptance rules (module docstring).
ACCEPT = ("always", "not_worse", "better")
#: Supervised keys the driver sets itself.
_DRIVER_KEYS = ("data", "warm_start")
#: ``labels`` keys added after the first generations jobs: written to ``config.json`` only when set, so that a job
#: started before they existed resumes with the same config.
_NEWER_LABEL_KEYS = ("explore", "explorers", "candidates", "explore_plies")


def _default_newer_label_key(f: Field, value: Any) -> bool:
    """Whether ``f`` is one of :data:`_NEWER_LABEL_KEYS` and ``value`` its default."""
    if f.name not in _NEWER_LABEL_KEYS:
        return False
    return value == (f.default_factory() if f.default_factory is not MISSING else f.default)


class GenerationsInterrupted(KeyboardInterrupt):
    """A generations job stopped by Ctrl-C / SIGTERM; what finished is on disk and the same command resumes."""


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its waited-for child processes (``getrusage``)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# --- config -------------------------------------------------------------------------------------------------------

def _coerce(section: Any, where: str) -> None:
    """Check and coerce the fields of a section by their annotation (``int``, ``float``, ``str``, ``bool``)."""
    for f in fields(section):
        v, key = getattr(section, f.name), f"{where}{f.name}"
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if kind == "int":
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"config key {key!r} must be an integer, got {v!r}")
        elif kind == "float":
            if isinstance(v, str):
                try:
                    v = float(v)
                except ValueError:
                    pass
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ConfigError(f"config key {key!r} must be a finite number, got {v!r}")
            v = float(v)
        elif kind == "str" and not isinstance(v, str):
            raise ConfigError(f"config key {key!r} must be a string, got {v!r}")
        setattr(section, f.name, v)


def _build(cls, data: Any, where: str):
    """``cls(**data)`` with unknown keys named (``where`` is the section's dotted prefix)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config section {where.rstrip('.')!r} must be a mapping of keys to values, got {data!r}")
    known = [f.name for f in fields(cls)]
    for k in data:
        if k not in known:
            raise ConfigError(f"unknown config key {where + str(k)!r}; known keys: {', '.join(known)}")
    return cls(**copy.deepcopy(data))


@dataclass
class LabelsSection:
    """Each generation's labels (:class:`bgai.train.labels.LabelSettings`; the parent's model labels)."""

    kind: str = "ply1"
    """``ply1``, ``ply2`` (the parent's n-ply search), ``rollout`` or ``trajectory`` (every position of the
    parent's self-play games labelled with its luck-adjusted outcome, :mod:`bgai.train.trajectory`)."""
    shards: int = 10
    """Shards per generation (each a resumable unit)."""
    games_per_shard: int = 50
    """Self-play games of the parent per shard."""
    keep: float = 0.25
    """Share of the games' positions kept."""
    disagree: float = 0.0
    """Keep only positions whose 0-ply and label equities differ by more than this (0: all)."""
    trials: int = 0
    """Rollout trials per position (``kind: rollout``)."""
    truncate: int = 0
    """Rollout truncation in plies (``kind: rollout``; 0: to the end)."""
    classes: list = field(default_factory=list)
    """Keep only positions of these classes (``[contact, crashed]``; empty: all)."""
    explore: float = 0.0
    """Probability that a play of the sampling games is an exploring play (0: the parent's self-play)."""
    explorers: list = field(default_factory=list)
    """Agents that make the exploring plays, one drawn per play (``[pubeval, racer, blocker, random]``; empty:
    random legal plays)."""
    candidates: int = 0
    """Label the afterstates of each sampled position's K best 0-ply plays instead of the position (0: off); with
    ``kind: trajectory`` the exploring plays are drawn among the K best (0: among all legal plays)."""
    explore_plies: int = 0
    """``kind: trajectory``: exploring plays only in the first this many plies of a game (0: every ply)."""

    def validate(self) -> None:
        """Raises: ConfigError naming the key."""
        _coerce(self, "labels.")
        if self.kind not in LABEL_KINDS:
            raise ConfigError(f"config key 'labels.kind' must be one of {', '.join(LABEL_KINDS)}, got {self.kind!r}")
        if self.trials > MAX_TRIALS:
            raise ConfigError(f"config key 'labels.trials' must be at most {MAX_TRIALS:,}, got {self.trials:,}")
        if not 1 <= self.shards <= 100_000:
            raise ConfigError(f"config key 'labels.shards' must be in 1..100000, got {self.shards}")
        if not isinstance(self.classes, list) or not all(isinstance(c, str) for c in self.classes):
            raise ConfigError(f"config key 'labels.classes' must be a list of class names, got {self.classes!r}")
        if not isinstance(self.explorers, list) or not all(isinstance(c, str) for c in self.explorers):
            raise ConfigError(f"config key 'labels.explorers' must be a list of agent specs, got {self.explorers!r}")
        for spec in self.explorers:  # an unknown agent now, not after generation 0 was made and evaluated
            try:
                make_agent(spec)
            except BgaiError as exc:
                raise ConfigError(f"config key 'labels.explorers': {exc}") from None
        try:
            self.settings("x", 0).check()
        except ConfigError:
            raise
        except BgaiError as exc:
            raise ConfigError(f"config section 'labels': {exc}") from None

    def settings(self, model: str, seed: int) -> LabelSettings:
        """The label job of a generation: ``model`` labels with ``seed``."""
        try:
            classes = parse_classes(",".join(self.classes)) if self.classes else ()
        except BgaiError as exc:
            raise ConfigError(f"config key 'labels.classes': {exc}") from None
        return LabelSettings(model=model, kind=self.kind, seed=seed, games_per_shard=self.games_per_shard,
                             keep=self.keep, disagree=self.disagree, trials=self.trials, truncate=self.truncate,
                             classes=classes, explore=self.explore, explorers=tuple(self.explorers),
                             candidates=self.candidates, explore_plies=self.explore_plies)


@dataclass
class EvalSection:
    """Each generation's evaluation (cubeless money, duplicate dice, 0-ply)."""

    games: int = 2000
    """Games against pubeval (even; > 0)."""
    seed: int = 2026
    """Dice seed of every series (the same dice for every generation, so that they compare)."""
    parent_games: int = 0
    """Games against the parent model (even; 0: none, acceptance then compares pubeval scores)."""
    bench: str = ""
    """Strength benchmark folder (or shard) for the ER per class (:mod:`bgai.evaluate.strength`); empty: none."""

    def validate(self) -> None:
        """Raises: ConfigError naming the key."""
        _coerce(self, "eval.")
        if self.games < 2 or self.games % 2:
            raise ConfigError(f"config key 'eval.games' must be even and >= 2, got {self.games}")
        if self.parent_games < 0 or self.parent_games % 2:
            raise ConfigError(f"config key 'eval.parent_games' must be even and >= 0, got {self.parent_games}")
        if not 0 <= self.seed < 2**63:
            raise ConfigError(f"config key 'eval.seed' must be in 0..2**63-1, got {self.seed}")
        for key in ("games", "parent_games"):
            if getattr(self, key) > MAX_SERIES:
                raise ConfigError(f"config key 'eval.{key}' must be at most {MAX_SERIES:,}, got {getattr(self, key):,}")
        if self.bench and not os.path.exists(self.bench):
            raise ConfigError(f"config key 'eval.bench': no strength benchmark at {self.bench!r}")


@dataclass
class GenerationsConfig:
    """A generations job (module docstring)."""

    start: str = ""
    """The first parent: a model file (``.pt``) or ``default`` (the shipped model), optionally ``:bearoff=db`` or
    ``:bearoff=net``."""
    generations: int = 1
    """Generations after the start model."""
    seed: int = 1
    """Generation K uses seed + K for its labels and its training."""
    workers: int = 1
    """Processes for labels and evaluations."""
    accept: str = "not_worse"
    """``always``, ``not_worse`` or ``better`` (module docstring)."""
    checkpoint_every: int = 100_000
    """Training checkpoints every this many samples."""
    labels: LabelsSection = field(default_factory=LabelsSection)
    supervised: SupervisedConfig = field(default_factory=SupervisedConfig)
    eval: EvalSection = field(default_factory=EvalSection)

    def validate(self) -> None:
        """Raises: ConfigError naming the key."""
        _coerce(self, "")
        if not self.start:
            raise ConfigError("config key 'start' is required: the first parent model file")
        name, options = parse_spec(self.start)
        if set(options) - {"bearoff"}:
            raise ConfigError(f"config key 'start' takes only the option bearoff=db|net, got {self.start!r}")
        if not 1 <= self.generations <= 1000:
            raise ConfigError(f"config key 'generations' must be in 1..1000, got {self.generations}")
        if not 0 <= self.seed < 2**62:
            raise ConfigError(f"config key 'seed' must be in 0..2**62-1, got {self.seed}")
        if not 1 <= self.workers <= 1024:
            raise ConfigError(f"config key 'workers' must be in 1..1024, got {self.workers}")
        if self.accept not in ACCEPT:
            raise ConfigError(f"config key 'accept' must be one of {', '.join(ACCEPT)}, got {self.accept!r}")
        if self.checkpoint_every < 0:
            raise ConfigError(f"config key 'checkpoint_every' must be >= 0, got {self.checkpoint_every}")
        self.labels.validate()
        try:
            self.supervised.validate()
        except ConfigError as exc:
            raise ConfigError(f"config section 'supervised': {exc}") from None
        if self.supervised.net != "all" and self.supervised.net not in NET_CLASSES:
            raise ConfigError(f"config key 'supervised.net' must be 'all' or one of {', '.join(NET_CLASSES)}, "
                              f"got {self.supervised.net!r}")
        self.eval.validate()

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (JSON ready)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = ({g.name: copy.deepcopy(getattr(v, g.name)) for g in fields(v)
                            if not (f.name == "supervised" and g.name in _DRIVER_KEYS)
                            and not (f.name == "labels" and _default_newer_label_key(g, getattr(v, g.name)))}
                           if f.name in ("labels", "supervised", "eval") else v)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> "GenerationsConfig":
        """Build and validate from a mapping.

        Raises:
            ConfigError: not a mapping, an unknown key (named with the known ones), a bad value.
        """
        if not isinstance(data, dict):
            raise ConfigError(f"a generations config must be a mapping of keys to values, got {type(data).__name__}")
        top = [f.name for f in fields(cls)]
        for k in data:
            if k not in top:
                raise ConfigError(f"unknown config key {str(k)!r}; known keys: {', '.join(top)}")
        sup = data.get("supervised") or {}
        if isinstance(sup, dict):
            for k in _DRIVER_KEYS:
                if k in sup:
                    raise ConfigError(f"config key 'supervised.{k}' is set by the driver (each generation's "
                                      f"{'labels' if k == 'data' else 'parent model'}); leave it out")
        plain = {k: copy.deepcopy(v) for k, v in data.items() if k not in ("labels", "supervised", "eval")}
        cfg = cls(**plain, labels=_build(LabelsSection, data.get("labels"), "labels."),
                  supervised=_build(SupervisedConfig, sup, "supervised."),
                  eval=_build(EvalSection, data.get("eval"), "eval."))
        cfg.validate()
        return cfg


def load_generations_config(path: str | os.PathLike) -> GenerationsConfig:
    """Read a generations config (YAML, :func:`bgai.train.config.read_yaml_file`: ``1e-3`` is a number).

    Raises:
        ConfigError: unreadable, non-UTF-8 or malformed file, unknown key, bad value (one line each).
    """
    return GenerationsConfig.from_dict(read_yaml_file(path) or {})


# --- the job ------------------------------------------------------------------------------------------------------

@dataclass
class GenerationsResult:
    """What a call of :func:`run_generations` did.

    Attributes:
        records: every finished generation's record (``generations.jsonl``'s lines), generation 0 first.
        steps: the steps this call ran, e.g. ``'gen-1/labels'``, ``'gen-1/train'``, ``'gen-1/eval/pubeval'``
            (steps found finished on disk are not listed).
    """

    records: list[dict]
    steps: list[str]


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise BgaiError(f"{path} is unreadable ({type(exc).__name__}); remove it to redo that step") from None


def read_records(out: str) -> list[dict]:
    """The records of ``OUT/generations.jsonl`` (empty when there is none).

    Raises:
        BgaiError: a line that is not JSON (its number named).
    """
    path = os.path.join(out, "generations.jsonl")
    if not os.path.exists(path):
        return []
    records = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except ValueError:
                    raise BgaiError(f"{path} line {n} is not JSON") from None
    return records


def _first_difference(old: Any, new: Any, prefix: str = "") -> str | None:
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            d = _first_difference(old.get(k), new.get(k), f"{prefix}{k}.")
            if d:
                return d
        return None
    return None if old == new else f"{prefix.rstrip('.')}: {old!r} -> {new!r}"


def _check_config(out: str, config: GenerationsConfig) -> None:
    """Write ``OUT/config.json``, or check that the folder's config is this one (``generations`` may grow,
    ``workers`` change; the file is then rewritten)."""
    path = os.path.join(out, "config.json")
    new = config.to_dict()
    if os.path.exists(path):
        old = _read_json(path)
        if not isinstance(old, dict):
            raise ConfigError(f"{path} is not a generations config")
        if isinstance(old.get("generations"), int) and new["generations"] < old["generations"]:
            raise ConfigError(f"{out!r} was started for {old['generations']} generations; 'generations' may only "
                              f"grow (got {new['generations']}), or use another --out")
        same = {**old, "generations": new["generations"], "workers": new["workers"]}
        diff = _first_difference(same, new)
        if diff:
            raise ConfigError(f"{out!r} was started with another config ({diff}); rerun with the same config to "
                              "resume, or use another --out")
        if old == new:
            return
    atomic_write_json(path, new)


class _Cpu:
    """CPU seconds of a step, added to ``gen-K/cpu.json`` when the step ends (finished or interrupted)."""

    def __init__(self, folder: str, step: str):
        self.path, self.step = os.path.join(folder, "cpu.json"), step

    def __enter__(self) -> "_Cpu":
        self.t0 = cpu_seconds()
        return self

    def __exit__(self, *exc) -> None:
        spent = cpu_seconds() - self.t0
        data = _read_json(self.path) if os.path.exists(self.path) else {}
        data[self.step] = round(data.get(self.step, 0.0) + spent, 3)
        atomic_write_json(self.path, data)


def _start_model(config: GenerationsConfig, path: str) -> None:
    """Write the start model file (its ``bearoff`` option applied; no training state)."""
    name, options = parse_spec(resolve_spec(config.start))
    bundle, ckpt = load_model_bundle(name)
    if options.get("bearoff") == "db":
        bundle = bundle if bundle.exact_bearoff else bundle.with_bearoff_database()
    elif options.get("bearoff") == "net":
        bundle = bundle.without_databases()
    out = {k: v for k, v in ckpt.items() if k not in ("trainer", "upgraded_from", "nets", "databases", "classifier")}
    out.update(bundle.file_entries())
    out["format_version"] = FORMAT_VERSION
    out["generation"] = {"generation": 0, "start": config.start}
    save_checkpoint(out, path)


def _train_config(config: GenerationsConfig, k: int, parent: str, labels: str) -> TrainConfig:
    """The supervised run of generation ``k``: the parent's net architecture, its labels, warm start."""
    s = config.supervised
    bundle, _ = load_model_bundle(parent)
    if s.net in bundle.names():
        entry = bundle.get(s.net)
    elif s.net in NET_CLASSES:
        entry = bundle.split_net([s.net], s.net).get(s.net)
    else:
        raise ConfigError(f"config key 'supervised.net': the parent model has no net {s.net!r} (nets: "
                          f"{', '.join(bundle.names())}; or a class: {', '.join(NET_CLASSES)})")
    model = ModelConfig(encoding=entry.encoder.name, hidden=list(entry.net.spec.hidden),
                        activation=entry.net.spec.activation)
    sup = SupervisedConfig(**{f.name: copy.deepcopy(getattr(s, f.name)) for f in fields(s)})
    sup.data, sup.warm_start = labels, parent
    run = RunConfig(seed=config.seed + k, eval_every=0, checkpoint_every=config.checkpoint_every,
                    log_every=10**9)
    return TrainConfig(algorithm="supervised", model=model, run=run, supervised=sup)


def _write_model(train_dir: str, path: str, k: int, parent: str) -> None:
    """``gen-K/model.pt``: the trained bundle of ``train/last.pt`` without its training state."""
    _, ckpt = load_model_bundle(os.path.join(train_dir, "last.pt"))
    out = {key: v for key, v in ckpt.items() if key != "trainer"}
    out["generation"] = {"generation": k, "parent": os.path.abspath(parent)}
    save_checkpoint(out, path)


def _score(rep, **extra) -> dict:
    if rep.partial:
        raise GenerationsInterrupted(f"evaluation interrupted ({rep.interrupted})")
    return {"games": int(rep.games), "seed": int(rep.seed), "ppg": float(rep.ppg), "ci95": float(rep.ci95),
            "win": float(rep.a.win), "gammon": float(rep.a.gammon), **extra}


def _margin(new: dict, parent_eval: dict | None) -> tuple[float, float] | None:
    """``(difference, 95% half-width)`` of the new model against its parent (module docstring), or None."""
    if new.get("parent"):
        return new["parent"]["ppg"], new["parent"]["ci95"]
    if parent_eval and parent_eval.get("pubeval"):
        a, b = new["pubeval"], parent_eval["pubeval"]
        return a["ppg"] - b["ppg"], math.hypot(a["ci95"], b["ci95"])
    return None


def _accepted(rule: str, margin: tuple[float, float] | None) -> bool:
    if rule == "always" or margin is None:
        return True
    diff, half = margin
    return diff + half >= 0 if rule == "not_worse" else diff - half > 0


def run_generations(
    config: GenerationsConfig,
    out: str,
    *,
    lines: Callable[[str], None] | None = None,
    progress: bool = False,
    on_step: Callable[[str], None] | None = None,
    on_train_step: Callable[[Any], None] | None = None,
) -> GenerationsResult:
    """Run (or resume) a generations job into ``out`` (module docstring).

    Args:
        config: the job's config.
        out: output folder (created; an existing one is resumed when its config is the same).
        lines: where one-line progress messages go (None: nowhere).
        progress: training progress bars on stderr.
        on_step: called with a step's name (as in :attr:`GenerationsResult.steps`) after it finished (tests).
        on_train_step: passed to :func:`bgai.train.run.train` as ``on_step`` (tests).

    Returns:
        :class:`GenerationsResult`.

    Raises:
        ConfigError: a folder made with another config, or in use; bad settings met on the way.
        GenerationsInterrupted: Ctrl-C / SIGTERM; the finished steps are on disk, the same call resumes.
        BgaiError: unreadable models or labels, files that cannot be written (one line each).
    """
    say = lines or (lambda text: None)
    if not os.path.exists(os.path.join(out, "gen-0", "model.pt")):
        check_checkpoint_file(parse_spec(resolve_spec(config.start))[0])  # before the folder is made
    if os.path.exists(out) and not os.path.isdir(out):
        raise BgaiError(f"--out {out!r} is a file, not a folder")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise BgaiError(f"cannot make the output folder {out!r}: {exc.strerror or exc}") from None
    try:
        lock = lock_run_folder(out)
    except ConfigError:
        raise ConfigError(f"{out!r} is in use by another 'bgai generations'; wait for it, or use another --out") \
            from None
    try:
        _check_config(out, config)
        return _Job(config, out, say, progress, on_step, on_train_step).run()
    finally:
        if lock is not None:
            lock.close()


class _Job:
    def __init__(self, config, out, say, progress, on_step, on_train_step):
        self.config, self.out, self.say, self.progress = config, out, say, progress
        self.on_step, self.on_train_step = on_step, on_train_step
        self.steps: list[str] = []
        self.bench = None

    def _done(self, step: str) -> None:
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def folder(self, k: int) -> str:
        return os.path.join(self.out, f"gen-{k}")

    def run(self) -> GenerationsResult:
        records = []
        parent_k = 0
        for k in range(self.config.generations + 1):
            rec_path = os.path.join(self.folder(k), "generation.json")
            if os.path.exists(rec_path):
                rec = _read_json(rec_path)
            else:
                rec = self.generation(k, parent_k)
                atomic_write_json(rec_path, rec)
                self._write_jsonl(records + [rec])
                self._done(f"gen-{k}")
                self.say(_summary(rec))
            records.append(rec)
            if rec["accepted"]:
                parent_k = k
        self._write_jsonl(records)
        return GenerationsResult(records, self.steps)

    def _write_jsonl(self, records: list[dict]) -> None:
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
        atomic_write_bytes(os.path.join(self.out, "generations.jsonl"), text.encode("utf-8"))

    # -- one generation --
    def generation(self, k: int, parent_k: int) -> dict:
        c, folder = self.config, self.folder(k)
        os.makedirs(folder, exist_ok=True)
        model = os.path.join(folder, "model.pt")
        parent = os.path.join(self.folder(parent_k), "model.pt")
        n_labels, train_info = 0, None
        if k == 0:
            if not os.path.exists(model):
                _start_model(c, model)
        else:
            labels = os.path.join(folder, "labels")
            n_labels = self.labels(k, parent, labels)
            train_info = self.train(k, parent, labels, model)
        ev = self.evaluate(k, model, parent if k else None)
        cpu = _read_json(os.path.join(folder, "cpu.json")) if os.path.exists(os.path.join(folder, "cpu.json")) else {}
        parent_eval = _read_json(os.path.join(self.folder(parent_k), "eval.json")) if k else None
        margin = _margin(ev, parent_eval) if k else None
        return {
            "generation": k,
            "model": model,
            "sha256": file_sha256(model),
            "parent": parent if k else c.start,
            "accepted": _accepted(c.accept, margin) if k else True,
            "vs_parent": {"ppg": margin[0], "ci95": margin[1]} if margin else None,
            "labels": n_labels,
            "label_kind": c.labels.kind if k else None,
            "label_cpu_s": cpu.get("labels", 0.0),
            "train_cpu_s": cpu.get("train", 0.0),
            "eval_cpu_s": cpu.get("eval", 0.0),
            "train": train_info,
            "pubeval": ev["pubeval"],
            "parent_match": ev.get("parent"),
            "er": ev.get("bench"),
        }

    def labels(self, k: int, parent: str, folder: str) -> int:
        c = self.config
        settings = c.labels.settings(parent, c.seed + k)
        shards = c.labels.shards
        have = sum(os.path.exists(os.path.join(folder, f"shard-{i:05d}.npz")) for i in range(shards))
        if have < shards:
            self.say(f"gen-{k}: labels ({c.labels.kind}), {shards - have} of {shards} shard(s) to make")

            def progress(done: int, total: int) -> None:
                self.say(f"gen-{k}: labels {done}/{total} shards")

            with _Cpu(self.folder(k), "labels"):
                try:
                    make_labels(folder, settings, shards, workers=c.workers, progress=progress)
                except LabelsInterrupted as stop:
                    raise GenerationsInterrupted(f"gen-{k} labels: {stop}") from None
            self._done(f"gen-{k}/labels")
        return len(load_labels(folder))

    def train(self, k: int, parent: str, labels: str, model: str) -> dict:
        run_dir = os.path.join(self.folder(k), "train")
        if not os.path.exists(model):
            resume = os.path.exists(os.path.join(run_dir, "last.pt"))
            config = None if resume else _train_config(self.config, k, parent, labels)
            self.say(f"gen-{k}: training" + (" (resumed)" if resume else ""))
            with _Cpu(self.folder(k), "train"):
                res = train(config, run_dir, resume=resume, progress=self.progress, tensorboard=False,
                            evaluate=False, on_step=self.on_train_step)
            if res.interrupted:
                raise GenerationsInterrupted(f"gen-{k} training interrupted after {res.games} samples")
            _write_model(run_dir, model, k, parent)
            self._done(f"gen-{k}/train" + (f" (resumed from {res.resumed_from} samples)" if resume else ""))
        _, ckpt = load_model_bundle(model)
        entry = next((n for n in ckpt.get("nets", []) if n.get("name") in (self.config.supervised.net,)), None)
        record = (entry or {}).get("record") or {}
        return {"epochs": record.get("epochs"), "samples": record.get("samples_trained"),
                "best_validation_loss": record.get("best_validation_loss"),
                "train_positions": record.get("train_positions"),
                "validation_positions": record.get("validation_positions")}

    def evaluate(self, k: int, model: str, parent: str | None) -> dict:
        c, path = self.config.eval, os.path.join(self.folder(k), "eval.json")
        ev = _read_json(path) if os.path.exists(path) else {}
        jobs = [("pubeval", lambda: _score(evaluate(model, "pubeval", c.games, c.seed, workers=self.config.workers)))]
        if parent and c.parent_games:
            jobs.append(("parent", lambda: _score(evaluate(model, parent, c.parent_games, c.seed,
                                                           workers=self.config.workers))))
        if c.bench:
            jobs.append(("bench", lambda: self.error_rates(model)))
        for name, job in jobs:
            if name in ev:
                continue
            self.say(f"gen-{k}: evaluation {name}")
            with _Cpu(self.folder(k), "eval"):
                t0 = time.perf_counter()
                ev[name] = job()
                if name != "bench":
                    ev[name]["seconds"] = round(time.perf_counter() - t0, 3)
            atomic_write_json(path, ev)
            self._done(f"gen-{k}/eval/{name}")
        return ev

    def error_rates(self, model: str) -> dict:
        if self.bench is None:
            self.bench = load_benchmark(self.config.eval.bench)
        res = class_error_rates(model, self.bench)
        return {name: {"er": r["er"], "se": r["se"], "n": r["n"], "outside": r["outside"]} for name, r in res.items()}


def _summary(rec: dict) -> str:
    p = rec["pubeval"]
    text = (f"gen-{rec['generation']}: {rec['labels']} labels, labels {rec['label_cpu_s']:.0f} CPU s, train "
            f"{rec['train_cpu_s']:.0f} CPU s; ppg vs pubeval {p['ppg']:+.3f} +- {p['ci95']:.3f} ({p['games']} games)")
    if rec.get("er"):
        text += "; ER " + ", ".join(f"{c} {r['er']:.1f} +- {r['se']:.1f}" for c, r in rec["er"].items())
    if rec.get("vs_parent"):
        v = rec["vs_parent"]
        text += f"; vs parent {v['ppg']:+.3f} +- {v['ci95']:.3f}: {'accepted' if rec['accepted'] else 'rejected'}"
    return text
