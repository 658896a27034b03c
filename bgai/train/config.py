"""Training configuration: one typed dataclass, loaded from YAML, overridable with ``key=value`` strings.

A config file is a YAML mapping whose keys are the fields of :class:`TrainConfig` (``configs/quick.yaml``,
``configs/tdgammon.yaml``).  :func:`load_config` reads it, applies ``--set key=value`` overrides (the value is
parsed as YAML: ``lr=0.05``, ``hidden=[128]``, ``encoding=tesauro198``) and checks every field; an unknown key,
a wrong type or a value out of range raises :class:`~bgai.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from typing import Any

import yaml

from bgai.errors import ConfigError
from bgai.model.features import ENCODERS
from bgai.model.nets import ACTIVATIONS

#: Most parallel self-play games (their trajectories alone take about 6 KB each, their afterstates more).
MAX_PARALLEL_GAMES = 65536


@dataclass
class TrainConfig:
    """Every setting of a TD(lambda) self-play run (see :mod:`bgai.train.td` for how each is used)."""

    # --- network ---
    encoding: str = "extended"
    """Input encoding by name (:func:`bgai.model.features.get_encoder`): ``'tesauro198'`` or ``'extended'``."""
    hidden: list[int] = field(default_factory=lambda: [80])
    """Hidden layer sizes; ``[80]`` is TD-Gammon's single layer of 80 units."""
    activation: str = "sigmoid"
    """Hidden-unit nonlinearity, ``'sigmoid'`` (TD-Gammon) or ``'relu'``."""

    # --- self-play ---
    games: int = 100_000
    """Training games to play in total (the run stops at this game counter)."""
    parallel_games: int = 256
    """Games played in parallel, batched through the move generator, the encoder and the network."""
    exploration: float = 0.0
    """Probability that a self-play move is a uniformly random legal play instead of the 0-ply best
    (epsilon-greedy; TD-Gammon used none).  Random moves still get TD updates."""
    seed: int = 0
    """Seed of everything random in the run (initial weights, dice, exploration)."""

    # --- TD(lambda) ---
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

    # --- evaluation, logging, checkpoints ---
    eval_every: int = 10_000
    """Games between evaluations against pubeval (0 = never, except at the end)."""
    eval_games: int = 2_000
    """Duplicate-dice games per evaluation (even)."""
    eval_seed: int = 12345
    """Dice seed of the evaluation series (the same series each time, so evaluations compare)."""
    checkpoint_every: int = 10_000
    """Games between checkpoints (written atomically to ``OUT/last.pt``; ``OUT/best.pt`` keeps the best
    evaluation)."""
    log_every: int = 1_000
    """Games between tensorboard scalar logs."""
    workers: int = 1
    """Self-play processes: the parallel games are split between this process and ``workers - 1`` worker
    processes (move generation, encoding, the network and the gradients of their games), each single-threaded;
    set it to the number of cores.  A run's games depend on it, so a run resumes with the same value."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check types and ranges.

        Raises:
            ConfigError: naming the offending key.
        """

        for f in fields(self):
            v = getattr(self, f.name)
            want = f.type if isinstance(f.type, str) else f.type.__name__
            if want == "int" and (isinstance(v, bool) or not isinstance(v, int)):
                raise ConfigError(f"config key {f.name!r} must be an integer, got {v!r}")
            if want == "float":
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise ConfigError(f"config key {f.name!r} must be a number, got {v!r}")
                setattr(self, f.name, float(v))
            if want == "str" and not isinstance(v, str):
                raise ConfigError(f"config key {f.name!r} must be a string, got {v!r}")
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
        if self.optimizer not in ("adam", "sgd"):
            raise ConfigError(f"config key 'optimizer' must be 'adam' or 'sgd', got {self.optimizer!r}")
        for k in ("lam", "lam_end", "exploration"):
            if not 0.0 <= getattr(self, k) <= 1.0:
                raise ConfigError(f"config key {k!r} must be in [0, 1], got {getattr(self, k)}")
        for k in ("lr", "lr_end"):
            if not getattr(self, k) > 0:
                raise ConfigError(f"config key {k!r} must be > 0, got {getattr(self, k)}")
        for k in ("games", "parallel_games", "eval_games", "min_update_states", "workers", "log_every"):
            if getattr(self, k) < 1:
                raise ConfigError(f"config key {k!r} must be >= 1, got {getattr(self, k)}")
        for k in ("eval_every", "checkpoint_every", "lam_decay_games", "lr_decay_games", "seed", "eval_seed"):
            if getattr(self, k) < 0:
                raise ConfigError(f"config key {k!r} must be >= 0, got {getattr(self, k)}")
        for k in ("seed", "eval_seed"):
            if getattr(self, k) >= 2**63:
                raise ConfigError(f"config key {k!r} must be < 2**63, got {getattr(self, k)}")
        if self.parallel_games > MAX_PARALLEL_GAMES:
            raise ConfigError(
                f"config key 'parallel_games' must be <= {MAX_PARALLEL_GAMES}, got {self.parallel_games}"
            )
        if self.workers > self.parallel_games:
            raise ConfigError(
                f"config key 'workers' ({self.workers}) must not exceed 'parallel_games' ({self.parallel_games})"
            )
        if self.eval_games % 2:
            raise ConfigError(f"config key 'eval_games' must be even (duplicate-dice pairs), got {self.eval_games}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (YAML/checkpoint ready)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        """Build from a mapping.

        Raises:
            ConfigError: not a mapping, an unknown key (named), or a bad value.
        """
        if not isinstance(data, dict):
            raise ConfigError(f"a config must be a mapping of keys to values, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        for k in data:
            if k == "threads":
                raise ConfigError("config key 'threads' was replaced by 'workers' (self-play processes)")
            if k not in known:
                raise ConfigError(f"unknown config key {k!r}; known keys: {', '.join(sorted(known))}")
        try:
            return cls(**data)
        except TypeError as exc:  # pragma: no cover - guarded above
            raise ConfigError(str(exc)) from None


def parse_override(text: str) -> tuple[str, Any]:
    """``'key=value'`` -> ``(key, value)`` with the value parsed as YAML.

    Raises:
        ConfigError: no ``=``, or an unparsable value.
    """
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key=value")
    key, _, raw = text.partition("=")
    key = key.strip()
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {text!r}: cannot parse the value ({exc})") from None
    return key, value


def load_config(path: str | os.PathLike | None, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """Read a YAML config file (or start from the defaults when ``path`` is None) and apply overrides.

    Raises:
        ConfigError: unreadable file, malformed YAML, unknown key (named), bad value.
    """
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with open(path, encoding="utf-8") as fh:
                data = yaml.safe_load(fh) or {}
        except OSError as exc:
            raise ConfigError(f"cannot read config {os.fspath(path)!r}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"config {os.fspath(path)!r} is not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config {os.fspath(path)!r} must be a mapping of keys to values")
    for text in overrides:
        key, value = parse_override(text)
        data[key] = value
    return TrainConfig.from_dict(data)
