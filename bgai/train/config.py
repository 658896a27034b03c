"""Training configuration: typed sections for the model, the run and each algorithm, loaded from YAML.

A config file is a YAML mapping with the algorithm's name and one section per concern::

    algorithm: td            # or: supervised
    model:                   # the network: ModelConfig
      encoding: extended
      hidden: [80]
      activation: sigmoid
    run:                     # the run loop: RunConfig (seed, length, evaluations, checkpoints, logs)
      games: 30000
      seed: 1
      eval_every: 10000
    td:                      # the algorithm's own section: TDConfig (or supervised: SupervisedConfig)
      lam: 0.7
      lr: 1e-3
      parallel_games: 512
      workers: 2

The flat layout of earlier bgai versions (every key at the top: ``encoding: extended``, ``lam: 0.7``, ``games:
30000`` ...) is read too: each old key belongs to exactly one section (:func:`nest`).  ``--set key=value`` takes
a plain key (``lr=0.05``, put in the section that has it, the algorithm's first) or a dotted one
(``td.lr=0.05``); values are YAML (``hidden=[128]``).

Numbers: YAML 1.1 (PyYAML) reads ``1e-3`` as a string; bgai's loader reads it, ``1E5`` and ``2.5e-4`` as numbers
(YAML 1.2's rule), and a number field also takes such a string.  An integer field takes a float with an integral
value (``games: 1e6``).  Non-finite numbers are refused.

Every error is a :class:`~bgai.errors.ConfigError` naming the key: an unknown key, a wrong type, a value out of
range, a file that cannot be read or is not UTF-8 text, malformed YAML, a key given twice in one mapping (with
its line: PyYAML alone would keep the last value silently).
"""

from __future__ import annotations

import copy
import math
import os
import re
from dataclasses import dataclass, field, fields
from typing import Any

import yaml

from bgai.errors import CheckpointError, ConfigError
from bgai.model.features import ENCODERS, get_encoder
from bgai.model.nets import ACTIVATIONS, NetSpec

__all__ = [
    "MAX_PARALLEL_GAMES",
    "ALGORITHMS",
    "ModelConfig",
    "RunConfig",
    "TDConfig",
    "SupervisedConfig",
    "TrainConfig",
    "nest",
    "parse_override",
    "load_config",
    "yaml_load",
]

#: Most parallel self-play games (their trajectories alone take about 6 KB each, their afterstates more).
MAX_PARALLEL_GAMES = 65536


# --- YAML with YAML 1.2 floats and no duplicate keys ---------------------------------------------------------

class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, reading ``1e-3`` (no dot) as a float, as YAML 1.2 does, and refusing a key given twice
    in one mapping (YAML requires unique keys; PyYAML would keep the last value silently)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # '<<' merges: its keys may be overridden (a complex key is left to PyYAML)
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in first:
                    raise yaml.YAMLError(f"duplicate key {key!r} on line {line} (first on line {first[key]})")
                first[key] = line
        return super().construct_mapping(node, deep=deep)


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def yaml_load(text: str) -> Any:
    """Parse YAML text with bgai's loader (safe; ``1e-3`` is a number; a key twice in a mapping is an error).

    Raises:
        yaml.YAMLError: malformed YAML, or a duplicate key (``duplicate key 'lr' on line 7 (first on line 5)``).
    """
    return yaml.load(text, Loader=_Loader)


_NUMBER = re.compile(r"^\s*[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?\s*$")


# --- field checks -----------------------------------------------------------------------------------------------

def _as_number(key: str, v: Any) -> float:
    """A finite float from a number or a numeric string, else a ConfigError naming ``key``."""
    if isinstance(v, str) and _NUMBER.match(v):
        v = float(v.replace("_", ""))
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConfigError(f"config key {key!r} must be a number, got {v!r}")
    if not math.isfinite(v):
        raise ConfigError(f"config key {key!r} must be a finite number, got {v!r}")
    return float(v)


#: The largest game or sample count a run takes (a run of 10**12 games would never end on any machine).
MAX_RUN_UNITS = 10**12


def _as_int(key: str, v: Any) -> int:
    """An int from an int, an integral float or a numeric string, else a ConfigError naming ``key``."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, (float, str)) and not isinstance(v, bool):
        try:
            f = _as_number(key, v)
        except ConfigError:
            f = None
        if f is not None and f.is_integer():
            return int(f)
    raise ConfigError(f"config key {key!r} must be an integer, got {v!r}")


def _check_types(section) -> None:
    """Coerce and check every field of a section dataclass by its annotation (``int``, ``float``, ``str``)."""
    for f in fields(section):
        v = getattr(section, f.name)
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if kind == "int":
            setattr(section, f.name, _as_int(f.name, v))
        elif kind == "float":
            setattr(section, f.name, _as_number(f.name, v))
        elif kind == "str" and not isinstance(v, str):
            raise ConfigError(f"config key {f.name!r} must be a string, got {v!r}")


def _at_least(section, minimum: int, *keys: str) -> None:
    for k in keys:
        if getattr(section, k) < minimum:
            raise ConfigError(f"config key {k!r} must be >= {minimum}, got {getattr(section, k)}")


def _in_unit_interval(section, *keys: str) -> None:
    for k in keys:
        if not 0.0 <= getattr(section, k) <= 1.0:
            raise ConfigError(f"config key {k!r} must be in [0, 1], got {getattr(section, k)}")


def _positive(section, *keys: str) -> None:
    for k in keys:
        if not getattr(section, k) > 0:
            raise ConfigError(f"config key {k!r} must be > 0, got {getattr(section, k)}")


def _one_of(section, key: str, allowed) -> None:
    if getattr(section, key) not in allowed:
        choices = " or ".join(repr(a) for a in allowed)
        raise ConfigError(f"config key {key!r} must be {choices}, got {getattr(section, key)!r}")


# --- sections ---------------------------------------------------------------------------------------------------

@dataclass
class ModelConfig:
    """The network: input encoding and architecture (fixed for a run; a resumed run keeps its checkpoint's)."""

    encoding: str = "extended"
    """Input encoding by name (:func:`bgai.model.features.get_encoder`): ``'tesauro198'`` or ``'extended'``."""
    hidden: list[int] = field(default_factory=lambda: [80])
    """Hidden layer sizes; ``[80]`` is TD-Gammon's single layer of 80 units."""
    activation: str = "sigmoid"
    """Hidden-unit nonlinearity, ``'sigmoid'`` (TD-Gammon) or ``'relu'``."""

    def validate(self) -> None:
        """Check types and values (the size limits of :class:`bgai.model.nets.NetSpec` included).

        Raises:
            ConfigError: naming the key.
        """
        _check_types(self)
        if isinstance(self.hidden, int) and not isinstance(self.hidden, bool):
            self.hidden = [self.hidden]
        if not isinstance(self.hidden, list) or not self.hidden or not all(
            isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in self.hidden
        ):
            raise ConfigError(f"config key 'hidden' must be a list of positive integers, got {self.hidden!r}")
        if self.encoding not in ENCODERS:
            raise ConfigError(f"config key 'encoding': unknown encoding {self.encoding!r}; known: {sorted(ENCODERS)}")
        if self.activation not in ACTIVATIONS:
            raise ConfigError(f"config key 'activation' must be one of {ACTIVATIONS}, got {self.activation!r}")
        try:
            NetSpec(ENCODERS[self.encoding].size, tuple(self.hidden), self.activation)
        except ConfigError as exc:
            raise ConfigError(f"config key 'hidden': {exc}") from None


@dataclass
class RunConfig:
    """The run loop: seed, length, evaluations, checkpoints and logs (:mod:`bgai.train.loop`).

    Intervals count the algorithm's unit: self-play games (``td``) or trained samples (``supervised``)."""

    games: int = 100_000
    """Training games to play in total (``td``: the run stops at this game counter; ``supervised`` stops by its
    own ``epochs`` and early stopping)."""
    seed: int = 0
    """Seed of everything random in the run (initial weights, dice, exploration, data split and order)."""
    eval_every: int = 10_000
    """Units between evaluations against pubeval (0 = never, except at the end)."""
    eval_games: int = 2_000
    """Duplicate-dice games per evaluation (even)."""
    eval_seed: int = 12345
    """Dice seed of the evaluation series (the same series each time, so evaluations compare)."""
    checkpoint_every: int = 10_000
    """Units between checkpoints (written atomically to ``OUT/last.pt``; ``OUT/best.pt`` keeps the best
    evaluation)."""
    log_every: int = 1_000
    """Units between tensorboard and ``log.jsonl`` scalar logs."""
    ray: str = ""
    """Run the evaluations on a Ray cluster (``bgai[ray]``): ``'auto'`` (the cluster of ``ray start`` on this
    machine, else a local one) or a cluster address; ``''`` (default): in this process.  One Ray worker per CPU
    of the cluster; the figures are the same either way.  TD self-play's workers run on this cluster too with
    ``td.backend: ray``."""

    def validate(self) -> None:
        """Raises: ConfigError naming the key."""
        _check_types(self)
        _at_least(self, 1, "games", "eval_games", "log_every")
        _at_least(self, 0, "eval_every", "checkpoint_every", "seed", "eval_seed")
        for k in ("seed", "eval_seed"):
            if getattr(self, k) >= 2**63:
                raise ConfigError(f"config key {k!r} must be < 2**63, got {getattr(self, k)}")
        for k in ("games", "eval_games", "eval_every", "checkpoint_every", "log_every"):
            if getattr(self, k) > MAX_RUN_UNITS:
                raise ConfigError(f"config key {k!r} must be <= {MAX_RUN_UNITS:,}, got {getattr(self, k):,}")
        if self.eval_games % 2:
            raise ConfigError(f"config key 'eval_games' must be even (duplicate-dice pairs), got {self.eval_games}")


@dataclass
class TDConfig:
    """TD(lambda) self-play (:mod:`bgai.train.td`)."""

    parallel_games: int = 256
    """Games played in parallel, batched through the move generator, the encoder and the network."""
    exploration: float = 0.0
    """Probability that a self-play move is a uniformly random legal play instead of the 0-ply best
    (epsilon-greedy; TD-Gammon used none).  Random moves still get TD updates."""
    lam: float = 0.7
    """Trace-decay parameter lambda in [0, 1] at the start of the run."""
    lam_end: float = 0.7
    """Lambda reached after ``lam_decay_games`` games (linear in between, constant after)."""
    lam_decay_games: int = 0
    """Games over which lambda goes from ``lam`` to ``lam_end``; 0 = constant ``lam``."""
    optimizer: str = "adam"
    """``'adam'`` or ``'sgd'`` (plain gradient descent, TD-Gammon's)."""
    lr: float = 1e-3
    """Learning rate at the start of the run (per update of the mean squared lambda-return error)."""
    lr_end: float = 1e-3
    """Learning rate reached after ``lr_decay_games`` games (linear in between, constant after)."""
    lr_decay_games: int = 0
    """Games over which the learning rate goes from ``lr`` to ``lr_end``; 0 = constant ``lr``."""
    min_update_states: int = 1
    """An update is made once at least this many positions of finished games are waiting (1 = after every
    self-play step in which a game finished)."""
    workers: int = 1
    """Self-play processes: the parallel games are split between this process and ``workers - 1`` worker
    processes, each single-threaded; set it to the number of cores.  A run's games depend on it, so a run
    resumes with the same value."""
    backend: str = "local"
    """Where the ``workers - 1`` self-play workers run: ``'local'`` (processes on this machine, weights and
    gradients in shared memory) or ``'ray'`` (Ray actors on the cluster of ``run.ray``, ``'auto'`` when that is
    empty; :mod:`bgai.train.ray_selfplay`).  The same run either way (bit for bit), so a run may resume on the
    other backend."""

    def validate(self) -> None:
        """Raises: ConfigError naming the key."""
        _check_types(self)
        _one_of(self, "optimizer", ("adam", "sgd"))
        _one_of(self, "backend", ("local", "ray"))
        _in_unit_interval(self, "lam", "lam_end", "exploration")
        _positive(self, "lr", "lr_end")
        _at_least(self, 1, "parallel_games", "min_update_states", "workers")
        _at_least(self, 0, "lam_decay_games", "lr_decay_games")
        if self.parallel_games > MAX_PARALLEL_GAMES:
            raise ConfigError(
                f"config key 'parallel_games' must be <= {MAX_PARALLEL_GAMES}, got {self.parallel_games}"
            )
        if self.workers > self.parallel_games:
            raise ConfigError(
                f"config key 'workers' ({self.workers}) must not exceed 'parallel_games' ({self.parallel_games})"
            )


#: The most shards a label job makes, and so the most a ``{labels: FOLDER, shards: N}`` item may name
#: (:data:`bgai.train.labels.MAX_SHARDS` is this).
MAX_LABEL_SHARDS = 1_000_000


#: The range of the ``weight`` a ``{labels: FOLDER, ...}`` item of ``supervised.data`` may give its positions.
MIN_DATA_WEIGHT, MAX_DATA_WEIGHT = 0.001, 1_000.0


def _is_label_item(item: Any) -> bool:
    """Whether ``item`` is a ``{labels: FOLDER, shards: N, weight: W}`` list item of ``supervised.data``: a label
    folder, optionally only its first ``N`` shards (so a run can name exactly the labels it used while the folder
    keeps growing), optionally with a loss weight ``W`` for its positions; ``shards`` and ``weight`` may be left out
    (all shards, weight 1)."""
    if not (isinstance(item, dict) and "labels" in item and set(item) <= {"labels", "shards", "weight"}
            and isinstance(item["labels"], str)):
        return False
    shards, weight = item.get("shards", 1), item.get("weight", 1.0)
    return (isinstance(shards, int) and not isinstance(shards, bool) and 1 <= shards <= MAX_LABEL_SHARDS
            and isinstance(weight, (int, float)) and not isinstance(weight, bool)
            and MIN_DATA_WEIGHT <= weight <= MAX_DATA_WEIGHT)


@dataclass
class SupervisedConfig:
    """Supervised training on labelled positions (:mod:`bgai.train.supervised`)."""

    data: str | list = ""
    """Dataset: a ``bgai label`` folder, an ``.npz`` with ``boards`` or ``position_ids`` and ``targets``, or text
    lines ``POSITION_ID p_win p_wg p_wbg p_lg p_lbg`` (:func:`bgai.train.supervised.load_dataset`), or a list of
    such paths (their positions concatenated in list order); a relative path is taken from the working directory.
    A list item ``{labels: FOLDER, shards: N, weight: W}`` takes the first ``N`` shards of a label folder
    (``shard-00000`` .. ``shard-{N-1}``, all of which must exist; without ``shards``, all of them), so that a config
    names exactly the labels a run used while the folder grows on, and multiplies each of their positions' loss by
    ``W`` (0.001 .. 1000, default 1): a small set of better labels (rollouts) can count as much as a large set of
    cheaper ones without repeating positions (the same dataset named twice is refused)."""
    net: str = "all"
    """The bundle net to train: ``'all'`` for a fresh one-net bundle; with ``warm_start``, the name of one of its
    nets (the others are kept as they are, and only positions of that net's classes are used), or a position class
    (``'race'``) the bundle has no net of its own for: a copy of the net that evaluates it is split off and trained."""
    warm_start: str = ""
    """A bundle file (``.pt``) whose net ``net`` is the starting point (empty: fresh weights from the seed)."""
    init: str = "copy"
    """How a position-class net the ``warm_start`` bundle has no net for starts: ``'copy'``, a copy of the net that
    evaluates the class now; ``'fresh'``, a new net of the ``model`` section (its encoding, e.g. ``race``, and
    size) with weights from ``run.seed``; ``'widen'``, the bundle's net (or that copy) grown to the ``model``
    section's hidden sizes computing the same values (new units from ``run.seed``,
    :meth:`bgai.model.nets.ValueNet.widened`).  A net the bundle has is otherwise continued."""
    val_fraction: float = 0.1
    """Share of the positions held out for validation (early stopping), in (0, 0.5]."""
    batch_size: int = 256
    """Positions per mini-batch."""
    epochs: int = 50
    """Most passes over the training positions."""
    optimizer: str = "adam"
    """``'adam'`` or ``'sgd'``."""
    lr: float = 1e-3
    """Learning rate at the start."""
    lr_end: float = 1e-4
    """Learning rate at the end of ``epochs`` (``lr_schedule`` ``'linear'`` or ``'cosine'``)."""
    lr_schedule: str = "cosine"
    """``'constant'``, ``'linear'`` or ``'cosine'`` (from ``lr`` to ``lr_end`` over ``epochs``, per batch)."""
    loss: str = "bce"
    """``'bce'`` (binary cross-entropy of each output, on the logits) or ``'mse'``."""
    patience: int = 5
    """Stop after this many epochs without a validation loss below the best by ``min_delta`` (0: never)."""
    min_delta: float = 0.0
    """Improvement of the validation loss that counts for ``patience``."""

    def validate(self) -> None:
        """Raises: ConfigError naming the key."""
        _check_types(self)
        _one_of(self, "optimizer", ("adam", "sgd"))
        _one_of(self, "lr_schedule", ("constant", "linear", "cosine"))
        _one_of(self, "loss", ("bce", "mse"))
        _one_of(self, "init", ("copy", "fresh", "widen"))
        paths = self.data if isinstance(self.data, list) else [self.data]
        bad = [d for d in paths if not (isinstance(d, str) or _is_label_item(d))]
        if bad or (isinstance(self.data, list) and not self.data):
            got = bad[0] if bad else self.data
            raise ConfigError(f"config key 'data' must be a path or a non-empty list of paths (a list item may be "
                              f"{{labels: FOLDER, shards: N, weight: W}}, N in 1 .. {MAX_LABEL_SHARDS:,}, W in "
                              f"{MIN_DATA_WEIGHT:g} .. {MAX_DATA_WEIGHT:,.0f}, both optional), got {got!r}")
        seen: dict[str, tuple[int, str]] = {}
        for i, item in enumerate(paths, 1):  # one dataset twice (however spelled) would count its positions twice
            name = os.path.normpath(os.path.expanduser(item if isinstance(item, str) else item["labels"]))
            key = os.path.realpath(name)
            if key in seen:
                first, spelled = seen[key]
                raise ConfigError(f"config key 'data' names {spelled!r} twice (items {first} and {i}): its "
                                  "positions would be counted twice")
            seen[key] = (i, name)
        _positive(self, "lr", "lr_end")
        _at_least(self, 1, "batch_size", "epochs")
        _at_least(self, 0, "patience")
        if not 0.0 < self.val_fraction <= 0.5:
            raise ConfigError(f"config key 'val_fraction' must be in (0, 0.5], got {self.val_fraction}")
        if self.min_delta < 0:
            raise ConfigError(f"config key 'min_delta' must be >= 0, got {self.min_delta}")


#: Algorithms and their config section classes.
ALGORITHMS = {"td": TDConfig, "supervised": SupervisedConfig}
_SECTIONS = {"model": ModelConfig, "run": RunConfig, **ALGORITHMS}


def _keys(cls) -> list[str]:
    return [f.name for f in fields(cls)]


def nest(data: dict[str, Any]) -> dict[str, Any]:
    """A config mapping in the sectioned layout: flat keys of the old layout (``lam: 0.7``) and dotted keys
    (``td.lam``) put in their sections; sections given as mappings merged.  Values are not checked here.

    Raises:
        ConfigError: not a mapping, a section that is not a mapping, ``threads`` (replaced by ``workers``), or
            an unknown key (named, with the known ones).
    """
    if not isinstance(data, dict):
        raise ConfigError(f"a config must be a mapping of keys to values, got {type(data).__name__}")
    algorithm = data.get("algorithm", "td")
    if algorithm not in ALGORITHMS:
        raise ConfigError(f"config key 'algorithm' must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    out: dict[str, Any] = {"algorithm": algorithm}
    for key, value in data.items():
        if key == "algorithm":
            continue
        if key in _SECTIONS and not isinstance(value, dict):
            raise ConfigError(f"config section {key!r} must be a mapping of keys to values, got {value!r}")
        if key in _SECTIONS:
            for k, v in value.items():
                _put(out, key, str(k), v)
        else:
            _put(out, *_section_of(str(key), algorithm), value)
    return out


def _section_of(key: str, algorithm: str) -> tuple[str, str]:
    """``(section, key)`` of a plain or dotted key."""
    if key == "threads":
        raise ConfigError("config key 'threads' was replaced by 'workers' (self-play processes)")
    if "." in key:
        section, _, name = key.partition(".")
        if section not in _SECTIONS:
            raise ConfigError(f"unknown config section {section!r} in {key!r}; sections: {', '.join(_SECTIONS)}")
        return section, name
    for section in (algorithm, "model", "run"):
        if key in _keys(_SECTIONS[section]):
            return section, key
    known = sorted(set(_keys(ModelConfig) + _keys(RunConfig) + _keys(ALGORITHMS[algorithm])))
    raise ConfigError(f"unknown config key {key!r}; known keys: {', '.join(known)}")


def _put(out: dict[str, Any], section: str, key: str, value: Any) -> None:
    if key == "threads":
        raise ConfigError("config key 'threads' was replaced by 'workers' (self-play processes)")
    if key not in _keys(_SECTIONS[section]):
        raise ConfigError(
            f"unknown config key {key!r} in section {section!r}; known keys: {', '.join(_keys(_SECTIONS[section]))}"
        )
    out.setdefault(section, {})[key] = copy.deepcopy(value)


@dataclass
class TrainConfig:
    """A training run's config: the algorithm's name and the sections (see the module docstring)."""

    algorithm: str = "td"
    model: ModelConfig = field(default_factory=ModelConfig)
    run: RunConfig = field(default_factory=RunConfig)
    td: TDConfig = field(default_factory=TDConfig)
    supervised: SupervisedConfig = field(default_factory=SupervisedConfig)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check every section in use.

        Raises:
            ConfigError: naming the offending key.
        """
        if self.algorithm not in ALGORITHMS:
            raise ConfigError(f"config key 'algorithm' must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}")
        self.model.validate()
        self.run.validate()
        self.section.validate()
        if self.algorithm == "td" and get_encoder(self.model.encoding).races_only:
            every = ", ".join(name for name, enc in ENCODERS.items() if not enc.races_only)
            raise ConfigError(f"config key 'encoding': {self.model.encoding!r} takes race positions only; self-play "
                              f"needs an encoding of every position ({every})")

    @property
    def section(self):
        """The algorithm's own section (:class:`TDConfig` or :class:`SupervisedConfig`)."""
        return getattr(self, self.algorithm)

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (YAML/checkpoint ready): ``algorithm``, ``model``, ``run`` and the algorithm's
        section."""
        out: dict[str, Any] = {"algorithm": self.algorithm}
        for name in ("model", "run", self.algorithm):
            sec = getattr(self, name)
            out[name] = {f.name: copy.deepcopy(getattr(sec, f.name)) for f in fields(sec)}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        """Build from a mapping, sectioned or in the old flat layout (:func:`nest`).

        Raises:
            ConfigError: not a mapping, an unknown key (named), or a bad value.
        """
        nested = nest(data)
        sections = {name: _SECTIONS[name](**nested.get(name, {})) for name in _SECTIONS}
        return cls(algorithm=nested["algorithm"], **sections)

    def with_overrides(self, overrides: dict[str, Any]) -> "TrainConfig":
        """A new config with ``{key: value}`` changes (plain or dotted keys, as ``--set``).

        Raises:
            ConfigError: an unknown key or a bad value.
        """
        data = self.to_dict()
        for key, value in overrides.items():
            section, name = _section_of(str(key), self.algorithm)
            _put(data, section, name, value)
        return TrainConfig.from_dict(data)


def config_from_checkpoint(data: Any) -> TrainConfig:
    """The config stored in a checkpoint (sectioned, or flat as bgai wrote it before; ``threads``, written
    before ``workers`` existed, is dropped: such a run's training state is refused later, with its reason).

    Raises:
        CheckpointError: the stored config is not valid.
    """
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "threads"}
    try:
        return TrainConfig.from_dict(data)
    except ConfigError as exc:
        raise CheckpointError(f"checkpoint's config is not valid ({exc})") from None


def parse_override(text: str) -> tuple[str, Any]:
    """``'key=value'`` -> ``(key, value)`` with the value parsed as YAML (:func:`yaml_load`: ``1e-3`` a number).

    Raises:
        ConfigError: no ``=``, or an unparsable value.
    """
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key=value")
    key, _, raw = text.partition("=")
    key = key.strip()
    try:
        value = yaml_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {text!r}: cannot parse the value ({str(exc).splitlines()[0]})") from None
    return key, value


def read_yaml_file(path: str | os.PathLike) -> Any:
    """A YAML file's content (UTF-8 text).

    Raises:
        ConfigError: unreadable file, bytes that are not UTF-8 (the offset named), malformed YAML, a duplicate key
            (named, with its line).
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config {name!r}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config {name!r} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None
    try:
        return yaml_load(text)
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        raise ConfigError(f"config {name!r} is not valid YAML: {reason}") from None


def load_config(path: str | os.PathLike | None, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """Read a YAML config file (or start from the defaults when ``path`` is None) and apply ``--set`` overrides.

    Raises:
        ConfigError: unreadable, empty or non-UTF-8 file, malformed YAML, unknown key (named), bad value.
    """
    data: dict[str, Any] = {}
    if path is not None:
        data = read_yaml_file(path)
        if data is None or data == {}:  # an empty file (or only comments) would silently train the defaults
            raise ConfigError(f"config {os.fspath(path)!r} is empty: give at least 'algorithm: td' (or supervised) "
                              "and the settings to change (see configs/quick.yaml)")
        if not isinstance(data, dict):
            raise ConfigError(f"config {os.fspath(path)!r} must be a mapping of keys to values")
    nested = nest(data)
    algorithm = nested["algorithm"]
    for text in overrides:
        key, value = parse_override(text)
        if key == "algorithm":
            raise ConfigError("the algorithm cannot be changed by --set; write it in the config file")
        _put(nested, *_section_of(key, algorithm), value)
    return TrainConfig.from_dict(nested)
