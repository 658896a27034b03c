"""Exported models as agents: numpy-only inference (or onnxruntime), one or more nets routed by position class.

This module (and everything it imports: :mod:`bgai.core.board`, :mod:`bgai.core.movegen`, :mod:`bgai.model.features`,
:mod:`bgai.core.equity`, :mod:`bgai.agents.base`, :mod:`bgai.model.routing`, :mod:`bgai.model.classes`,
:mod:`bgai.model.bearoff`, :mod:`bgai.errors`) uses only numpy and the standard library, so an
exported bot runs on a machine without torch, onnx or onnxruntime (``tests/test_export.py`` checks this by
blocking those imports).

Usage::

    from bgai.agents.numpy_bot import NumpyAgent
    bot = NumpyAgent.load("model.onnx")        # reads model.npz beside it (or give the .npz)
    bot.probabilities(boards)                  # (N, 5) for the side on roll
    bot.best_play(board, (3, 1)).notation      # '8/5 6/5'

The weights come from the ``.npz`` file :mod:`bgai.model.export` writes beside the ``.onnx`` (``W0, b0, ...`` and a
JSON ``meta`` string with the encoding, the output order and the class rule).  An ``.onnx`` file without its ``.npz``
is played through onnxruntime when that is installed (:class:`OnnxModel`).  An export of several nets (one per
group of position classes) is loaded whole from any of its files: the ``class_rule`` in every file's metadata names
the others, and positions are routed as :mod:`bgai.model.routing` says: a set exported from a bundle with the
bear-off database (its class rule's ``databases`` entry) values bear-off positions by
:mod:`bgai.model.bearoff` (numpy only: built on first use or loaded from the user's data directory), and
``NumpyAgent.load(path, bearoff='db')`` attaches the database to any export.  The network is evaluated in float32 exactly like
:class:`bgai.model.nets.ValueNet` (``x @ W.T + b``, sigmoid or ReLU hidden units, sigmoid outputs); finished games are
valued exactly (:func:`bgai.agents.base.finished_or_evaluate`), as :class:`bgai.agents.neural.NeuralAgent` does, so
both choose the same plays at 0-ply.
"""

from __future__ import annotations

import json
import os

import numpy as np

from bgai.agents.base import ProbabilityAgent, finished_or_evaluate
from bgai.core.board import as_batch
from bgai.core.equity import OUTPUTS
from bgai.core.movegen import legal_plays
from bgai.errors import CheckpointError
from bgai.model.classes import CLASS_RACE
from bgai.model.features import Encoder, check_encoding
from bgai.model.routing import ALL, DEFAULT_CLASSIFIER, ClassRule, DatabaseEntry, expand_classes

__all__ = ["NumpyModel", "OnnxModel", "ExportedNet", "NumpyAgent", "load_model", "load_export", "load_export_set",
           "EXPORT_FORMAT"]

#: The export layout this module reads (the same number as :data:`bgai.model.export.EXPORT_FORMAT`, which needs torch
#: to import; ``tests/test_registry_models.py`` checks they agree).
EXPORT_FORMAT = 1


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # numerically stable logistic function in float32
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


class NumpyModel:
    """An exported value network: ``(N, F) float32 features -> (N, 5) float32`` probabilities.

    Args:
        layers: ``[(W (out, in) float32, b (out,) float32), ...]``.
        activation: ``'sigmoid'`` or ``'relu'`` for the hidden layers (outputs are always sigmoid).
        meta: the export metadata (``encoding``, ``encoding_version``, ``encoding_size``, ``outputs``, ...).

    Raises:
        CheckpointError: inconsistent layer shapes, an unknown activation, or an output order other than
            :data:`bgai.core.equity.OUTPUTS`.
    """

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, meta: dict) -> None:
        if activation not in ("sigmoid", "relu"):
            raise CheckpointError(f"unknown activation {activation!r} in exported model")
        if not layers:
            raise CheckpointError("exported model has no layers")
        width = layers[0][0].shape[1]
        for i, (w, b) in enumerate(layers):
            if w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != width:
                raise CheckpointError(f"exported model: layer {i} has inconsistent shapes {w.shape}, {b.shape}")
            width = w.shape[0]
        if width != len(OUTPUTS):
            raise CheckpointError(f"exported model has {width} outputs, expected {len(OUTPUTS)}")
        outputs = meta.get("outputs")
        if outputs is not None and outputs != ",".join(OUTPUTS):
            raise CheckpointError(f"exported model's output order {outputs!r} is not {','.join(OUTPUTS)!r}")
        self.layers = [(np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32)) for w, b in layers]
        self._wt = [np.ascontiguousarray(w.T) for w, _ in self.layers]
        self.activation = activation
        self.meta = dict(meta)

    @property
    def n_inputs(self) -> int:
        """Number of input features."""
        return int(self.layers[0][0].shape[1])

    def __call__(self, features: np.ndarray) -> np.ndarray:
        """Probabilities ``(N, 5)`` float32 for ``(N, F)`` features.

        Raises:
            ValueError: features of the wrong width.
        """
        h = np.asarray(features, dtype=np.float32)
        if h.ndim != 2 or h.shape[1] != self.n_inputs:
            raise ValueError(f"features must have shape (N, {self.n_inputs}), got {h.shape}")
        last = len(self.layers) - 1
        for i, ((_, b), wt) in enumerate(zip(self.layers, self._wt)):
            h = h @ wt + b
            if i < last:
                h = _sigmoid(h) if self.activation == "sigmoid" else np.maximum(h, 0, out=h)
        return _sigmoid(h)


def _check_meta(meta, name: str) -> dict:
    """The export metadata of file ``name``, checked for bgai's export format."""
    version = meta.get("bgai_export_format") if isinstance(meta, dict) else None
    if version is None:
        raise CheckpointError(f"{name!r} is not a bgai numpy export (no 'bgai_export_format' in its metadata)")
    if str(version) != str(EXPORT_FORMAT):
        raise CheckpointError(f"{name!r} has export format {version!r}; this bgai reads format {EXPORT_FORMAT}")
    return meta


def load_model(path: str | os.PathLike) -> NumpyModel:
    """Load one exported net's weights: the ``.npz`` itself, or the ``.onnx`` whose ``.npz`` lies beside it.

    Raises:
        CheckpointError: no ``.npz`` file, or one that is not a bgai export (missing arrays or metadata, no
            ``bgai_export_format`` in the metadata) or of another export format version.
    """
    p = os.fspath(path)
    npz = p[:-5] + ".npz" if p.lower().endswith(".onnx") else p
    if not os.path.exists(npz):
        raise CheckpointError(
            f"no numpy weights {npz!r}: export with 'bgai export CHECKPOINT --format onnx --out MODEL.onnx', which "
            "writes MODEL.npz beside the ONNX file"
        )
    try:
        with np.load(npz, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            layers = []
            i = 0
            while f"W{i}" in data.files:
                layers.append((data[f"W{i}"], data[f"b{i}"]))
                i += 1
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise CheckpointError(f"{npz!r} is not a bgai numpy export ({exc})") from None
    _check_meta(meta, npz)
    return NumpyModel(layers, meta.get("activation", "sigmoid"), meta)


class OnnxModel:
    """An exported net run by onnxruntime (for an ``.onnx`` file without its ``.npz``): ``(N, F) float32 features
    -> (N, 5) float32``; ``meta`` and ``n_inputs`` as :class:`NumpyModel`.

    Raises:
        CheckpointError: onnxruntime is not installed, cannot read the file, or the file is not a bgai export.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        p = os.fspath(path)
        try:
            import onnxruntime
        except ImportError:
            raise CheckpointError("onnxruntime is not installed (pip install onnxruntime)") from None
        try:
            self.session = onnxruntime.InferenceSession(p, providers=["CPUExecutionProvider"])
            meta = dict(self.session.get_modelmeta().custom_metadata_map)
            width = self.session.get_inputs()[0].shape[1]
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own kinds for unreadable files
            raise CheckpointError(f"onnxruntime cannot read {p!r} ({type(exc).__name__})") from None
        self.meta = _check_meta(meta, p)
        outputs = meta.get("outputs")
        if outputs is not None and outputs != ",".join(OUTPUTS):
            raise CheckpointError(f"exported model's output order {outputs!r} is not {','.join(OUTPUTS)!r}")
        self.n_inputs = int(width)

    def __call__(self, features: np.ndarray) -> np.ndarray:
        """Probabilities ``(N, 5)`` float32 for ``(N, F)`` features."""
        x = np.ascontiguousarray(features, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.n_inputs:
            raise ValueError(f"features must have shape (N, {self.n_inputs}), got {x.shape}")
        return self.session.run(["probs"], {"features": x})[0]


def _load_file(path: str):
    """One net's model from an export file: the ``.npz`` (or the ``.npz`` beside an ``.onnx``), else the ``.onnx``
    through onnxruntime."""
    if not path.lower().endswith(".onnx"):
        return load_model(path)
    npz = path[:-5] + ".npz"
    if os.path.exists(npz):
        return load_model(npz)
    if not os.path.exists(path):
        raise CheckpointError(f"model file {path!r} does not exist")
    try:
        return OnnxModel(path)
    except CheckpointError as exc:
        raise CheckpointError(
            f"no numpy weights {npz!r} beside {os.path.basename(path)!r}, and it cannot be played through "
            f"onnxruntime: {exc}"
        ) from None


class ExportedNet:
    """One net of an export set: ``name``, ``classes`` (position classes), ``model`` (features -> probabilities)
    and ``encoder`` (from the metadata).

    Raises:
        CheckpointError: the model's encoding is unknown to this bgai, or has another version or size.
    """

    def __init__(self, model, name: str = ALL, classes: tuple[str, ...] = (ALL,)) -> None:
        meta = model.meta
        try:
            desc = {"name": meta["encoding"], "version": int(meta["encoding_version"]), "size": int(meta["encoding_size"])}
        except (KeyError, ValueError) as exc:
            raise CheckpointError(f"exported model lacks its encoding description ({exc})") from None
        self.encoder: Encoder = check_encoding(desc)
        if self.encoder.size != model.n_inputs:
            raise CheckpointError(f"model takes {model.n_inputs} inputs but encoding has {self.encoder.size}")
        self.model, self.name, self.classes = model, str(name), tuple(classes)


def load_export_set(path: str | os.PathLike) -> tuple[list[ExportedNet], str, list[DatabaseEntry]]:
    """Every net of the export set ``path`` belongs to, the classifier's name and the set's databases (the
    ``databases`` entry of its class rule: classes valued by a database, :class:`bgai.model.routing.DatabaseEntry`).

    Args:
        path: any file of the set (``.npz``, or ``.onnx``: its ``.npz`` if beside it, else onnxruntime).

    Raises:
        CheckpointError: a file of the set missing or unusable (named), a malformed class rule, an unknown
            database.
    """
    p = os.fspath(path)
    first = _load_file(p)
    text = first.meta.get("class_rule")
    if not text:  # exports of bgai before bundles: one net for every class
        return [ExportedNet(first)], DEFAULT_CLASSIFIER, []
    try:
        rule = json.loads(text)
        entries = [(str(e["name"]), tuple(e["classes"]), e.get("onnx"), e.get("npz")) for e in rule["nets"]]
        classifier = str(rule["classifier"])
        db_entries = rule.get("databases", [])
        if not isinstance(db_entries, list):
            raise TypeError("'databases' is not a list")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"{p!r}: malformed class rule in its metadata ({exc})") from None
    try:
        databases = [DatabaseEntry.from_dict(e) for e in db_entries]
    except CheckpointError as exc:
        raise CheckpointError(f"{p!r}: {exc}") from None
    folder = os.path.dirname(os.path.abspath(p))
    nets = []
    for name, classes, onnx_name, npz_name in entries:
        if name == first.meta.get("net_name"):
            model = first
        else:
            sibling = os.path.join(folder, npz_name or "")
            if not npz_name or not os.path.exists(sibling):
                sibling = os.path.join(folder, onnx_name or npz_name or "")
            if not os.path.exists(sibling):
                raise CheckpointError(f"{p!r} belongs to an export set whose net {name!r} is missing "
                                      f"({npz_name or onnx_name!r} not found beside it)")
            model = _load_file(sibling)
        nets.append(ExportedNet(model, name, classes))
    return nets, classifier, databases


def load_export(path: str | os.PathLike) -> tuple[list[ExportedNet], str]:
    """The nets and classifier of :func:`load_export_set` (without its databases)."""
    nets, classifier, _ = load_export_set(path)
    return nets, classifier


class NumpyAgent(ProbabilityAgent):
    """A bot from an exported model, 0-ply (a :class:`~bgai.agents.base.ProbabilityAgent`): numpy weights, or
    onnxruntime for an ``.onnx`` without them; one or more nets routed by position class.

    Args:
        model: a :class:`NumpyModel` / :class:`OnnxModel` (one net for every class), or the
            :class:`ExportedNet` list of a set (:func:`load_export`).
        name: for reports.
        classifier: the position classifier of a set (:data:`bgai.model.routing.CLASSIFIERS`).
        databases: classes valued by a database instead of a net (:class:`bgai.model.routing.DatabaseEntry`).

    Raises:
        CheckpointError: a model's encoding is unknown to this bgai, or has another version or size; a class rule
            that leaves a class without a net (or gives one to two).
    """

    def __init__(self, model, name: str = "numpy", classifier: str = DEFAULT_CLASSIFIER,
                 databases: tuple[DatabaseEntry, ...] | list[DatabaseEntry] = ()) -> None:
        self.nets = list(model) if isinstance(model, (list, tuple)) else [ExportedNet(model)]
        self.databases = tuple(databases)
        self.rule = ClassRule([n.classes for n in self.nets] + [d.classes for d in self.databases], classifier)
        self.name = name

    @property
    def exact_bearoff(self) -> bool:
        """Whether bear-off positions are valued by the exact bear-off database (rollouts then end trials there)."""
        return any("bearoff" in d.classes for d in self.databases)

    @property
    def model(self):
        """The first net's model (the only one of a one-net export)."""
        return self.nets[0].model

    @property
    def encoder(self) -> Encoder:
        """The first net's encoder (the only one of a one-net export)."""
        return self.nets[0].encoder

    @classmethod
    def load(cls, path: str | os.PathLike, bearoff: str | None = None) -> "NumpyAgent":
        """The agent of an exported model: any file of its set (:func:`load_export_set`).

        Args:
            path: any file of the set.
            bearoff: None = bear-offs as the set routes them; ``'db'`` = by the exact bear-off database (the net
                that had them keeps its other classes); ``'net'`` = by the set's race net even if the set has the
                database (as :meth:`bgai.model.bundle.ModelBundle.with_bearoff_database` / ``without_databases``).

        Raises:
            CheckpointError: see :func:`load_export_set`; a bad ``bearoff``.
        """
        if bearoff not in (None, "db", "net"):
            raise CheckpointError(f"bearoff must be 'db' (the exact database) or 'net', got {bearoff!r}")
        nets, classifier, databases = load_export_set(path)
        has_db = any("bearoff" in d.classes for d in databases)
        if bearoff == "db" and not has_db:
            nets = [ExportedNet(n.model, n.name, tuple(c for c in expand_classes(list(n.classes)) if c != "bearoff"))
                    for n in nets]
            nets = [n for n in nets if n.classes]
            databases = list(databases) + [DatabaseEntry()]
        elif bearoff == "net" and databases:
            race = int(ClassRule([n.classes for n in nets] + [d.classes for d in databases], classifier).net_of[
                CLASS_RACE])
            extra = [c for d in databases for c in d.classes]
            nets = [ExportedNet(n.model, n.name, expand_classes(list(n.classes) + extra)) if k == race else n
                    for k, n in enumerate(nets)]
            databases = []
        return cls(nets, name=os.path.basename(os.fspath(path)), classifier=classifier, databases=databases)

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 5)`` float64 probabilities for the side on roll (exact for finished games)."""
        return finished_or_evaluate(as_batch(boards), self._evaluate_live)

    def _evaluate_live(self, b: np.ndarray) -> np.ndarray:
        """The nets' probabilities ``(N, 5)`` of unfinished positions, one call per net (class routing)."""
        out = np.empty((b.shape[0], 5), dtype=np.float64)
        n_nets = len(self.nets)
        for k, idx in self.rule.route(b, np.ones(b.shape[0], dtype=bool)):
            sub = b if idx.size == b.shape[0] else b[idx]
            if k < n_nets:
                out[idx] = self.nets[k].model(self.nets[k].encoder(sub))
            else:
                out[idx] = self.databases[k - n_nets].probabilities(sub, validate=False)
        return out

    def best_play(self, board: np.ndarray, dice: tuple[int, int]):
        """The chosen :class:`bgai.core.movegen.Play` for one position (``None`` when no play is legal)."""

        plays = [p for p in legal_plays(as_batch(board)[0], dice) if p.steps]
        if not plays:
            return None
        after = np.stack([p.afterstate for p in plays])
        scores = self.evaluate_afterstates(after)
        return plays[int(np.argmax(scores))]
