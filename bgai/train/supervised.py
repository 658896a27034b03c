"""Supervised training: fit one net of a model bundle to labelled positions (``algorithm: supervised``).

A dataset is a list of positions (side on roll in row 0) with their five outcome probabilities for the side on
roll (:data:`bgai.core.equity.OUTPUTS` order, cumulative: win includes gammons), e.g. a stronger evaluator's
(GNU Backgammon's, or rollouts').  Files (:func:`load_dataset`):

* a label folder of ``bgai label`` (:mod:`bgai.train.labels`: ``dataset.json`` and ``shard-*.npz``; its
  ``probs`` are the targets, clipped into [0, 1]: a rollout with variance reduction is an unbiased estimate that can
  leave [0, 1] by its noise, and up to :data:`LABEL_SLACK_SE` standard errors outside is accepted; the labels of
  ``kind: trajectory``, one-trial rollouts, are not clipped at all: clipping would bias them, and the loss's
  gradient is linear in the target, so their noise averages out; they must lie within
  :data:`UNBIASED_TARGET_RANGE`);
* ``.npz`` with ``targets`` (or ``probs``) ``(N, 5)`` and either ``boards`` ``(N, 2, 25)`` int8 (bgai's layout)
  or ``position_ids`` ``(N,)`` GNU Backgammon Position IDs;
* text (any other name): one position a line, ``POSITION_ID p_win p_wg p_wbg p_lg p_lbg`` separated by spaces,
  tabs or commas; blank lines and lines starting with ``#`` are skipped.

Training (:class:`SupervisedTrainer`, a :class:`bgai.train.trainer.Trainer` counting ``'sample'`` units):

1. The net to train is ``supervised.net`` of the ``warm_start`` bundle (the other nets of that bundle are kept
   as they are; a position class name such as ``'race'`` that the bundle has no net for is split off as a copy
   of the net that evaluates that class, :meth:`bgai.model.bundle.ModelBundle.split_net` (or, when that net
   evaluates only that class already, that net renamed, :meth:`bgai.model.bundle.ModelBundle.rename_net`: so
   ``contact``, then ``crashed``, split off a TD net for contact and crashed positions give a contact and a
   crashed net), or with ``init: fresh`` as a new net of the ``model`` section, e.g. the ``race`` encoding, weights from ``run.seed``;
   with ``init: widen`` the bundle's net, grown to the ``model`` section's hidden sizes with the values it computes
   unchanged, :meth:`bgai.model.nets.ValueNet.widened`), or a
   fresh one-net bundle for ``'all'`` (weights from ``run.seed``).  Only positions of that net's classes
   (:meth:`bgai.model.bundle.ModelBundle.net_index`) are used; finished games never are (their value is exact).
2. The positions are shuffled with ``run.seed`` and ``val_fraction`` of them held out for validation.
3. Each step is one mini-batch of ``batch_size`` training positions (a new random order each epoch) and one
   optimiser step on the loss (``bce``: binary cross-entropy of each of the 5 outputs against its target, on the
   logits; ``mse``: mean squared error of the probabilities; summed over the outputs, times the position's
   ``weight``, :class:`bgai.train.config.SupervisedConfig`, and averaged over the batch), the learning rate
   following ``lr_schedule`` from ``lr`` to ``lr_end`` over ``epochs`` (per batch).
4. After each epoch the validation loss is computed; training stops after ``epochs`` epochs, or after
   ``patience`` epochs without an improvement of at least ``min_delta``, and then the weights of the best
   validation epoch are put back.

Everything random comes from ``run.seed``; :meth:`SupervisedTrainer.state_dict` holds what an exact resume needs.
The trainer runs torch and BLAS single-threaded (:func:`bgai.util.threads.limit_threads`), as self-play does.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import torch

from bgai.core.board import as_batch, validation_errors
from bgai.core.position_id import decode_position_ids
from bgai.errors import BgaiError, CheckpointError, ConfigError
from bgai.model.bundle import BundleNet, ModelBundle, load_model_bundle
from bgai.model.classes import CLASS_NAMES
from bgai.model.features import get_encoder
from bgai.model.nets import NetSpec, ValueNet
from bgai.model.routing import NET_CLASSES, expand_classes
from bgai.train.config import TrainConfig
from bgai.train.labels import load_labels
from bgai.train.trainer import StepReport
from bgai.util.fileio import atomic_write
from bgai.util.threads import limit_threads

__all__ = ["DatasetError", "Dataset", "load_dataset", "load_datasets", "save_dataset", "check_targets",
           "SupervisedTrainer"]

#: Keys of a net's record that say where it came from, kept through training.
_ORIGIN_KEYS = ("split_from", "init", "widened_from", "widened_from_encoding")

#: Tolerance of the consistency checks of target probabilities.
TARGET_TOLERANCE = 1e-4


class DatasetError(BgaiError):
    """A dataset file that cannot be read or holds bad positions or targets (the message names file and row)."""


class Dataset:
    """Labelled positions: ``boards`` ``(N, 2, 25)`` int8, ``targets`` ``(N, 5)`` float32 and ``weights`` ``(N,)``
    float32, each position's loss weight (ones when not given)."""

    def __init__(self, boards: np.ndarray, targets: np.ndarray, weights: np.ndarray | None = None):
        self.boards = boards
        self.targets = targets
        self.weights = np.ones(boards.shape[0], np.float32) if weights is None else weights

    def __len__(self) -> int:
        return int(self.boards.shape[0])


def load_datasets(paths: str | os.PathLike | list) -> Dataset:
    """:func:`load_dataset` of one path, or of each of a list of paths, concatenated in list order.

    Raises:
        DatasetError: an empty list, or as :func:`load_dataset` for any of them.
    """
    if not isinstance(paths, (list, tuple)):
        return load_dataset(paths)
    if not paths:
        raise DatasetError("no dataset: supervised.data is an empty list")
    parts = [load_dataset(p) for p in paths]
    return Dataset(*(np.concatenate([getattr(d, k) for d in parts]) for k in ("boards", "targets", "weights")))


#: The range one-trial (trajectory) labels must lie in (:func:`check_targets` with ``unbiased``): a luck-adjusted
#: outcome strays outside [0, 1] by the sum of a game's luck terms, in practice by less than 0.5.
UNBIASED_TARGET_RANGE = (-2.0, 3.0)


def check_targets(targets: np.ndarray, name: str = "dataset", unbiased: bool = False) -> np.ndarray:
    """Check target probabilities: ``(N, 5)``, finite, in [0, 1] (to :data:`TARGET_TOLERANCE`, then clipped);
    with ``unbiased`` (unbiased estimates such as trajectory labels) in :data:`UNBIASED_TARGET_RANGE`, not clipped.

    They need not be consistent with each other (``wg <= win`` ...): bgai's own nets have five independent
    outputs, and a dataset they label is as good as any.

    Returns:
        ``(N, 5)`` float32.

    Raises:
        DatasetError: naming the first bad row.
    """
    t = np.asarray(targets, dtype=np.float64)
    if t.ndim != 2 or t.shape[1] != 5:
        raise DatasetError(f"{name}: targets must have shape (N, 5), got {t.shape}")
    lo, hi = UNBIASED_TARGET_RANGE if unbiased else (-TARGET_TOLERANCE, 1 + TARGET_TOLERANCE)
    bad = ~np.isfinite(t).all(axis=1) | ((t < lo) | (t > hi)).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = f"unbiased estimates in [{lo:g}, {hi:g}]" if unbiased else "probabilities in [0, 1]"
        raise DatasetError(f"{name} row {i}: targets {t[i].tolist()} are not {what}")
    return (t if unbiased else np.clip(t, 0.0, 1.0)).astype(np.float32)


def _read_text(path: str) -> tuple[np.ndarray, np.ndarray]:
    ids, rows = [], []
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                parts = re.split(r"[\s,]+", text)
                if len(parts) != 6:
                    raise DatasetError(f"dataset {path!r} line {n}: expected a Position ID and 5 probabilities, "
                                       f"got {len(parts)} fields")
                try:
                    rows.append([float(p) for p in parts[1:]])
                except ValueError:
                    raise DatasetError(f"dataset {path!r} line {n}: probabilities must be numbers") from None
                ids.append(parts[0])
    except UnicodeDecodeError:
        raise DatasetError(f"dataset {path!r} is not UTF-8 text (nor an .npz file)") from None
    return decode_position_ids(ids), np.array(rows, dtype=np.float64).reshape(-1, 5)


def _read_npz(path: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            key = "targets" if "targets" in data.files else "probs"
            if key not in data.files:
                raise DatasetError(f"dataset {path!r} has no 'targets' (or 'probs') array")
            targets = data[key]
            if "boards" in data.files:
                boards = as_batch(data["boards"])
            elif "position_ids" in data.files:
                boards = decode_position_ids([str(s) for s in data["position_ids"]])
            else:
                raise DatasetError(f"dataset {path!r} has neither 'boards' nor 'position_ids'")
    except (OSError, ValueError, EOFError) as exc:
        if isinstance(exc, BgaiError):
            raise
        raise DatasetError(f"dataset {path!r} is not a readable .npz file ({type(exc).__name__})") from None
    return boards, targets


#: How many standard errors a rollout label may lie outside [0, 1] before it is an error (variance reduction
#: makes each label an unbiased estimate that can leave [0, 1] by its noise).
LABEL_SLACK_SE = 4.0


def _clip_estimates(probs: np.ndarray, std_errors: np.ndarray, path: str) -> np.ndarray:
    """Label estimates clipped into [0, 1]; an estimate further outside than :data:`LABEL_SLACK_SE` standard
    errors (plus :data:`TARGET_TOLERANCE`) is left as it is, for :func:`check_targets` to report."""
    probs = np.asarray(probs, dtype=np.float32)
    slack = LABEL_SLACK_SE * np.asarray(std_errors, dtype=np.float32) + TARGET_TOLERANCE
    near = (probs >= -slack) & (probs <= 1 + slack)
    return np.where(near, np.clip(probs, 0.0, 1.0), probs).astype(np.float32)


def load_dataset(path: str | os.PathLike | dict) -> Dataset:
    """Read and check a dataset file (module docstring); ``{'labels': FOLDER, 'shards': N, 'weight': W}``: the
    first ``N`` shards of a label folder (:func:`bgai.train.labels.load_labels`; all without ``shards``), each
    position's loss weighted by ``W`` (1 without it; :class:`bgai.train.config.SupervisedConfig` checks it).

    Raises:
        DatasetError: missing or unreadable file, a malformed line, different numbers of positions and targets,
            an impossible position (named by row), bad targets (:func:`check_targets`), or no position at all.
        PositionIDError: a malformed Position ID (its index named).
        LabelError: a folder that is not a readable label folder.
    """
    shards, weight, unbiased = None, 1.0, False
    if isinstance(path, dict):
        path, shards, weight = path["labels"], path.get("shards"), float(path.get("weight", 1.0))
        if not os.path.isdir(path):
            what = "is not a folder" if os.path.exists(path) else "does not exist"
            raise DatasetError(f"label folder {os.fspath(path)!r} {what} (a {{labels: FOLDER, ...}} item names "
                               "a bgai label folder)")
    p = os.fspath(path)
    if not p:
        raise DatasetError("no dataset: set supervised.data to a dataset file")
    if os.path.isdir(p):
        labels = load_labels(p, shards=shards)
        unbiased = labels.settings.get("kind") == "trajectory"
        boards = labels.boards
        targets = labels.probs if unbiased else _clip_estimates(labels.probs, labels.std_errors, p)
    elif not os.path.isfile(p):
        raise DatasetError(f"dataset {p!r} does not exist")
    else:
        boards, targets = _read_npz(p) if p.lower().endswith(".npz") else _read_text(p)
    if boards.shape[0] != np.asarray(targets).shape[0]:
        raise DatasetError(f"dataset {p!r} has {boards.shape[0]} positions but {np.asarray(targets).shape[0]} targets")
    if boards.shape[0] == 0:
        raise DatasetError(f"dataset {p!r} holds no position")
    for i, msg in enumerate(validation_errors(boards)):
        if msg is not None:
            raise DatasetError(f"dataset {p!r} row {i}: impossible position: {msg}")
    return Dataset(boards, check_targets(targets, f"dataset {p!r}", unbiased),
                   np.full(boards.shape[0], weight, np.float32))


def save_dataset(path: str | os.PathLike, boards: np.ndarray, targets: np.ndarray) -> None:
    """Write an ``.npz`` dataset (``boards``, ``targets``) atomically.

    Raises:
        DatasetError: bad targets.  BgaiError: the file cannot be written.
    """
    b = as_batch(boards)
    t = check_targets(targets)
    atomic_write(path, lambda fh: np.savez(fh, boards=b, targets=t))


def lr_at(cfg, fraction: float) -> float:
    """The learning rate after ``fraction`` (0..1) of the planned training (``lr_schedule``)."""
    f = min(max(fraction, 0.0), 1.0)
    if cfg.lr_schedule == "linear":
        return cfg.lr + (cfg.lr_end - cfg.lr) * f
    if cfg.lr_schedule == "cosine":
        return cfg.lr_end + 0.5 * (cfg.lr - cfg.lr_end) * (1.0 + math.cos(math.pi * f))
    return cfg.lr


def _data_names(data) -> str | list[str]:
    """The dataset path(s)' base names, for a net's training record (``NAME[:N shards]`` for a shard prefix,
    ``NAME x W`` for a loss weight other than 1)."""
    if isinstance(data, (list, tuple)):
        return [_data_names(d) for d in data]
    if isinstance(data, dict):
        name = os.path.basename(os.path.normpath(data["labels"]))
        shards = f"[:{data['shards']} shards]" if "shards" in data else ""
        weight = f" x {data['weight']:g}" if data.get("weight", 1) != 1 else ""
        return name + shards + weight
    return os.path.basename(os.path.normpath(data))


#: Version of :meth:`SupervisedTrainer.state_dict`'s layout.
STATE_FORMAT = 1


class SupervisedTrainer:
    """Supervised training of one bundle net (module docstring); a :class:`bgai.train.trainer.Trainer`.

    Args:
        config: the run's config (sections ``model``, ``run``, ``supervised``).
        bundle: the bundle to continue (a resumed run's); else ``supervised.warm_start``'s, else a fresh one.

    Raises:
        DatasetError: a bad dataset; too few positions of the net's classes for a training and a validation set.
        ConfigError: a net name the bundle lacks, a fresh net other than ``'all'``, or a bundle net whose
            encoding or architecture differs from the ``model`` section.
        CheckpointError: an unreadable warm-start bundle.
    """

    algorithm = "supervised"
    unit = "sample"

    def __init__(self, config: TrainConfig, bundle: ModelBundle | None = None):
        self.config = config
        s = config.supervised
        # mini-batches of small nets run fastest single-threaded (16x faster than two threads on a busy 2-core
        # machine), as in self-play
        limit_threads(1)
        if bundle is None:
            bundle = self._start_bundle(config)
        try:
            self.entry = bundle.get(s.net)
        except CheckpointError as exc:
            raise ConfigError(f"config key 'net': {exc}") from None
        self._check_model(self.entry, config)
        self._check_classes(self.entry)
        # where the net came from (split off, grown): kept in its training record
        self._origin = {k: v for k, v in self.entry.record.items() if k in _ORIGIN_KEYS}
        self._bundle, self.net = bundle, self.entry.net
        self.net.train()
        self._split(bundle, load_datasets(s.data))
        params = self.net.parameters()
        self.opt = torch.optim.Adam(params, lr=s.lr) if s.optimizer == "adam" else torch.optim.SGD(params, lr=s.lr)
        self.rng = np.random.default_rng(np.random.SeedSequence(int(config.run.seed), spawn_key=(13,)))
        self.order = np.arange(self.n_train)
        self.pos = self.epoch = self.samples = self.bad_epochs = 0
        self.best_val = math.inf
        self.best_state: dict | None = None
        self.stopped = False
        self.val_history: list[float] = []

    # -- setup --
    @staticmethod
    def _start_bundle(config: TrainConfig) -> ModelBundle:
        s, m = config.supervised, config.model
        if s.warm_start:
            bundle, _ = load_model_bundle(s.warm_start)
            if s.net not in bundle.names() and s.net in NET_CLASSES:
                # a per-class net warm-started from the net that evaluates that class now
                # (:meth:`ModelBundle.split_net`): e.g. 'race' from a TD net for every class
                k = int(bundle.rule.net_of[CLASS_NAMES.index(s.net)])
                try:
                    if k < len(bundle.nets) and expand_classes(list(bundle.nets[k].classes)) == (s.net,):
                        # the net already evaluates that class alone (the rest split off before): named for it
                        bundle = bundle.rename_net(bundle.nets[k].name, s.net)
                    else:
                        bundle = bundle.split_net([s.net], s.net)
                except CheckpointError as exc:
                    raise ConfigError(f"config key 'net': {exc}") from None
                if s.init == "fresh":  # the split-off copy replaced by a new net of the model section
                    fresh, enc = SupervisedTrainer._fresh_net(config), get_encoder(m.encoding)
                    nets = [BundleNet(n.name, n.classes, fresh, enc, {"init": "fresh"}) if n.name == s.net else n
                            for n in bundle.nets]
                    bundle = ModelBundle(nets, bundle.classifier, bundle.databases)
            if s.init == "widen":
                bundle = SupervisedTrainer._widen(bundle, config)
            return bundle
        if s.init == "widen":
            raise ConfigError("config key 'init': widen grows the net of a warm start; give supervised.warm_start")
        if s.net != "all":
            raise ConfigError(f"config key 'net': a fresh model has one net, 'all'; to train the net {s.net!r}, "
                              "give the bundle that has it as warm_start")
        return ModelBundle.single(SupervisedTrainer._fresh_net(config), get_encoder(m.encoding))

    @staticmethod
    def _widen(bundle: ModelBundle, config: TrainConfig) -> ModelBundle:
        """The bundle with net ``supervised.net`` widened to the ``model`` section's hidden sizes
        (:meth:`bgai.model.nets.ValueNet.widened`, new weights from ``run.seed``): same values, more units."""
        s, m = config.supervised, config.model
        try:
            entry = bundle.get(s.net)
        except CheckpointError as exc:
            raise ConfigError(f"config key 'net': {exc}") from None
        enc = get_encoder(m.encoding)
        if not enc.starts_with(entry.encoder.name):
            raise ConfigError(f"config key 'init': widen cannot take the net {s.net!r} from the encoding "
                              f"{entry.encoder.name!r} to {enc.name!r}, which does not extend it")
        if m.activation != entry.net.spec.activation:
            raise ConfigError(f"config key 'init': widen keeps the net's activation {entry.net.spec.activation!r}; "
                              f"the model section has {m.activation!r}")
        gen = torch.Generator().manual_seed(int(config.run.seed))
        try:
            wide = entry.net.widened(m.hidden, generator=gen, n_inputs=enc.size)
        except ConfigError as exc:
            raise ConfigError(f"config key 'init': net {s.net!r}: {exc}") from None
        record = {**entry.record, "init": "widen", "widened_from": list(entry.net.spec.hidden)}
        if enc.name != entry.encoder.name:
            record["widened_from_encoding"] = entry.encoder.name
        nets = [BundleNet(n.name, n.classes, wide, enc, record) if n.name == s.net else n for n in bundle.nets]
        return ModelBundle(nets, bundle.classifier, bundle.databases)

    @staticmethod
    def _fresh_net(config: TrainConfig) -> ValueNet:
        """A new net of the ``model`` section, weights from ``run.seed``."""
        m = config.model
        gen = torch.Generator().manual_seed(int(config.run.seed))
        return ValueNet(NetSpec(get_encoder(m.encoding).size, tuple(m.hidden), m.activation), generator=gen)

    @staticmethod
    def _check_model(entry: BundleNet, config: TrainConfig) -> None:
        m = config.model
        have = (entry.encoder.name, list(entry.net.spec.hidden), entry.net.spec.activation)
        want = (m.encoding, list(m.hidden), m.activation)
        if have != want:
            raise ConfigError(
                f"the net {entry.name!r} to train has encoding, hidden, activation = {have}, the config's model "
                f"section {want}; make them agree"
            )

    @staticmethod
    def _check_classes(entry: BundleNet) -> None:
        """A races-only encoding (:attr:`bgai.model.features.Encoder.races_only`) only on a net of races."""
        others = [c for c in expand_classes(list(entry.classes)) if c not in ("race", "bearoff")]
        if entry.encoder.races_only and others:
            raise ConfigError(
                f"config key 'encoding': {entry.encoder.name!r} takes race positions only; net {entry.name!r} "
                f"evaluates {', '.join(others)} positions too"
            )

    def _split(self, bundle: ModelBundle, data: Dataset) -> None:
        """The positions of the net's classes, shuffled with the seed, split into training and validation."""
        k = bundle.names().index(self.entry.name)
        mine = np.flatnonzero(bundle.net_index(data.boards) == k)
        n = mine.size
        n_val = max(1, int(round(self.config.supervised.val_fraction * n)))
        if n - n_val < 1:
            raise DatasetError(f"dataset has {n} position(s) of the classes of net {self.entry.name!r}: too few "
                               "for a training and a validation set")
        rng = np.random.default_rng(np.random.SeedSequence(int(self.config.run.seed), spawn_key=(11,)))
        perm = mine[rng.permutation(n)]
        enc = self.entry.encoder
        self.x_val = torch.from_numpy(enc(data.boards[perm[:n_val]]))
        self.y_val = torch.from_numpy(data.targets[perm[:n_val]])
        self.w_val = torch.from_numpy(data.weights[perm[:n_val]])
        self.x_train = torch.from_numpy(enc(data.boards[perm[n_val:]]))
        self.y_train = torch.from_numpy(data.targets[perm[n_val:]])
        self.w_train = torch.from_numpy(data.weights[perm[n_val:]])
        self.n_train, self.n_val = n - n_val, n_val

    @classmethod
    def create(cls, config: TrainConfig, bundle: ModelBundle | None = None, state: dict | None = None):
        """The trainer of a run: fresh, or a checkpoint's bundle and state (checked, then loaded)."""
        trainer = cls(config, bundle)
        if state is not None:
            trainer.load_state_dict(state)
        return trainer

    # -- the Trainer protocol --
    @property
    def done(self) -> int:
        """Samples trained (mini-batch positions, counted again each epoch)."""
        return self.samples

    @property
    def total(self) -> int:
        """``epochs`` x training positions."""
        return self.config.supervised.epochs * self.n_train

    def finished(self) -> bool:
        """All epochs done, or stopped early."""
        return self.stopped or self.epoch >= self.config.supervised.epochs

    def loss(self, x: torch.Tensor, y: torch.Tensor, w: torch.Tensor | None = None) -> torch.Tensor:
        """Mean loss of features ``x`` ``(B, F)`` against targets ``y`` ``(B, 5)`` (``supervised.loss``), summed
        over the 5 outputs, each position's loss times its weight in ``w`` ``(B,)`` (the data items' ``weight``;
        ones when None) before the mean over the batch."""
        if self.config.supervised.loss == "bce":
            per = torch.nn.functional.binary_cross_entropy_with_logits(self.net.logits(x), y, reduction="none")
        else:
            per = (torch.sigmoid(self.net.logits(x)) - y) ** 2
        per = per.sum(dim=1)
        return (per if w is None else per * w).mean()

    def validation_loss(self) -> float:
        """The loss on the validation positions, current weights."""
        with torch.no_grad():
            return float(self.loss(self.x_val, self.y_val, self.w_val))

    def step(self) -> StepReport:
        """One mini-batch; at the end of an epoch the validation loss and early stopping."""
        s = self.config.supervised
        if self.pos == 0:
            self.order = self.rng.permutation(self.n_train)
        idx = torch.from_numpy(self.order[self.pos : self.pos + s.batch_size])
        lr = lr_at(s, self.samples / self.total)
        for group in self.opt.param_groups:
            group["lr"] = lr
        loss = self.loss(self.x_train[idx], self.y_train[idx], self.w_train[idx])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        n = int(idx.numel())
        self.pos += n
        self.samples += n
        sums = {"loss_sum": float(loss.detach()) * n, "loss_n": float(n)}
        if self.pos >= self.n_train:
            sums.update(self._end_epoch())
        return StepReport(n, sums)

    def _end_epoch(self) -> dict[str, float]:
        s = self.config.supervised
        val = self.validation_loss()
        self.val_history.append(val)
        self.epoch += 1
        self.pos = 0
        if val < self.best_val - s.min_delta:
            self.best_val, self.bad_epochs = val, 0
            self.best_state = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
        else:
            self.bad_epochs += 1
            if s.patience and self.bad_epochs >= s.patience:
                self.stopped = True
        if self.finished() and self.best_state is not None:
            self.net.load_state_dict(self.best_state)  # the best validation epoch's weights
        return {"val_loss_sum": val, "val_n": 1.0}

    def scalars(self, sums: dict[str, float]) -> dict[str, float]:
        """Training and validation losses, learning rate, epoch."""
        out = {"charts/lr": lr_at(self.config.supervised, self.samples / self.total), "charts/epoch": float(self.epoch)}
        if sums.get("loss_n"):
            out["losses/train"] = sums["loss_sum"] / sums["loss_n"]
        if sums.get("val_n"):
            out["losses/validation"] = sums["val_loss_sum"] / sums["val_n"]
        return out

    def counters(self) -> dict[str, int]:
        """``{'samples_trained', 'epochs'}``."""
        return {"samples_trained": int(self.samples), "epochs": int(self.epoch)}

    def bundle(self) -> ModelBundle:
        """The bundle with the trained net (live weights), its record up to date."""
        self.entry.record = {
            "algorithm": "supervised",
            "samples_trained": int(self.samples),
            "epochs": int(self.epoch),
            "best_validation_loss": float(self.best_val) if math.isfinite(self.best_val) else None,
            "validation_losses": list(self.val_history),
            "data": _data_names(self.config.supervised.data),
            "train_positions": int(self.n_train),
            "validation_positions": int(self.n_val),
            "config": {k: v for k, v in self.config.to_dict().items() if k in ("model", "supervised")},
            **self._origin,
        }
        return self._bundle

    def state_dict(self) -> dict:
        """Optimiser, generator, the epoch's order and place, early-stopping state, counters."""
        return {
            "format": STATE_FORMAT,
            "algorithm": "supervised",
            "optimizer": self.opt.state_dict(),
            "rng": self.rng.bit_generator.state,
            "order": torch.from_numpy(self.order.astype(np.int64)),
            "pos": int(self.pos),
            "epoch": int(self.epoch),
            "samples": int(self.samples),
            "best_val": float(self.best_val),
            "best_state": self.best_state,
            "bad_epochs": int(self.bad_epochs),
            "stopped": bool(self.stopped),
            "val_history": list(self.val_history),
            "n_train": int(self.n_train),
            "n_val": int(self.n_val),
            "weight_sum": self._weight_sum(),
        }

    def _weight_sum(self) -> float:
        """The sum of the positions' loss weights (training and validation): a resume with other weights is refused."""
        return float(self.w_train.double().sum() + self.w_val.double().sum())

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output.

        Raises:
            CheckpointError: another layout or algorithm, a dataset of another size or other loss weights (the data
                items' ``weight``), or a malformed state.
        """
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT or state.get("algorithm") != "supervised":
            raise CheckpointError("checkpoint's training state is not a supervised trainer's of this bgai version")
        try:
            if (int(state["n_train"]), int(state["n_val"])) != (self.n_train, self.n_val):
                raise CheckpointError(
                    f"the dataset changed since the checkpoint ({state['n_train']} + {state['n_val']} positions "
                    f"then, {self.n_train} + {self.n_val} now); resume with the same data"
                )
            saved, now = state.get("weight_sum"), self._weight_sum()
            if saved is not None and not math.isclose(float(saved), now, rel_tol=1e-9):
                raise CheckpointError(
                    f"the data items' loss weights changed since the checkpoint (their sum over the positions "
                    f"{float(saved):,.6g} then, {now:,.6g} now); resume with the same data")
            self.opt.load_state_dict(state["optimizer"])
            self.rng.bit_generator.state = state["rng"]
            self.order = state["order"].numpy().astype(np.int64).copy()
            self.pos, self.epoch, self.samples = int(state["pos"]), int(state["epoch"]), int(state["samples"])
            self.best_val, self.best_state = float(state["best_val"]), state["best_state"]
            self.bad_epochs, self.stopped = int(state["bad_epochs"]), bool(state["stopped"])
            self.val_history = [float(v) for v in state["val_history"]]
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as exc:
            raise CheckpointError(f"checkpoint's training state is incomplete or malformed ({exc})") from None

    def close(self) -> None:
        """Nothing to release."""
