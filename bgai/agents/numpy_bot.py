"""Numpy-only inference: run an exported bgai model and pick plays with nothing but numpy installed.

This module (and everything it imports: :mod:`bgai.core.board`, :mod:`bgai.core.movegen`, :mod:`bgai.model.features`,
:mod:`bgai.core.equity`, :mod:`bgai.agents.base`, :mod:`bgai.errors`) uses only numpy and the standard library, so an
exported bot runs on a machine without torch, onnx or onnxruntime (``tests/test_export.py`` checks this by
blocking those imports).

Usage::

    from bgai.agents.numpy_bot import NumpyAgent
    bot = NumpyAgent.load("model.onnx")        # reads model.npz beside it (or give the .npz)
    bot.probabilities(boards)                  # (N, 5) for the side on roll
    bot.best_play(board, (3, 1)).notation      # '8/5 6/5'

The weights come from the ``.npz`` file :mod:`bgai.model.export` writes beside the ``.onnx`` (``W0, b0, ...`` and a
JSON ``meta`` string with the encoding and output order).  The network is evaluated in float32 exactly like
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
from bgai.model.features import check_encoding

__all__ = ["NumpyModel", "NumpyAgent", "load_model", "EXPORT_FORMAT"]

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


def load_model(path: str | os.PathLike) -> NumpyModel:
    """Load an exported model's weights: the ``.npz`` itself, or the ``.onnx`` whose ``.npz`` lies beside it.

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
    except (OSError, ValueError, KeyError) as exc:
        raise CheckpointError(f"{npz!r} is not a bgai numpy export ({exc})") from None
    version = meta.get("bgai_export_format") if isinstance(meta, dict) else None
    if version is None:
        raise CheckpointError(f"{npz!r} is not a bgai numpy export (no 'bgai_export_format' in its metadata)")
    if str(version) != str(EXPORT_FORMAT):
        raise CheckpointError(f"{npz!r} has export format {version!r}; this bgai reads format {EXPORT_FORMAT}")
    return NumpyModel(layers, meta.get("activation", "sigmoid"), meta)


class NumpyAgent(ProbabilityAgent):
    """A bot from an exported model, 0-ply, numpy only (a :class:`~bgai.agents.base.ProbabilityAgent`).

    Args:
        model: the network.
        name: for reports.

    Raises:
        CheckpointError: the model's encoding is unknown to this bgai, or has another version or size.
    """

    def __init__(self, model: NumpyModel, name: str = "numpy") -> None:

        meta = model.meta
        try:
            desc = {"name": meta["encoding"], "version": int(meta["encoding_version"]), "size": int(meta["encoding_size"])}
        except (KeyError, ValueError) as exc:
            raise CheckpointError(f"exported model lacks its encoding description ({exc})") from None
        self.encoder = check_encoding(desc)
        if self.encoder.size != model.n_inputs:
            raise CheckpointError(f"model takes {model.n_inputs} inputs but encoding has {self.encoder.size}")
        self.model = model
        self.name = name

    @classmethod
    def load(cls, path: str | os.PathLike) -> "NumpyAgent":
        """The agent of an exported model (``.onnx`` with its ``.npz`` beside it, or the ``.npz``)."""
        return cls(load_model(path), name=os.path.basename(os.fspath(path)))

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 5)`` float64 probabilities for the side on roll (exact for finished games)."""
        return finished_or_evaluate(as_batch(boards), lambda live: self.model(self.encoder(live)))

    def best_play(self, board: np.ndarray, dice: tuple[int, int]):
        """The chosen :class:`bgai.core.movegen.Play` for one position (``None`` when no play is legal)."""

        plays = [p for p in legal_plays(as_batch(board)[0], dice) if p.steps]
        if not plays:
            return None
        after = np.stack([p.afterstate for p in plays])
        scores = self.evaluate_afterstates(after)
        return plays[int(np.argmax(scores))]
