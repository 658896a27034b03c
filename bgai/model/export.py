"""Export a trained network for use outside bgai: ONNX, numpy weights, and a golden file.

``export_model(net, encoder, 'model.onnx')`` writes three files (each atomically with :mod:`bgai.util.fileio`: mode
``0o666 & ~umask``; the destination directory must exist, it is never created):

``model.onnx``
    The network as an ONNX graph (``Gemm`` -> ``Sigmoid``/``Relu`` per hidden layer -> ``Gemm`` -> ``Sigmoid``),
    opset :data:`OPSET`, float32.  Input ``features`` ``[batch, F]``, output ``probs`` ``[batch, 5]``; ``batch``
    is a dynamic axis.  Metadata (``metadata_props``): ``bgai_export_format``, ``bgai_version``,
    ``encoding`` / ``encoding_version`` / ``encoding_size`` (:mod:`bgai.model.features`), ``outputs`` (the output
    order, :data:`bgai.core.equity.OUTPUTS`), ``perspective`` (side on roll, before it rolls), ``hidden``,
    ``activation``, ``source``, ``source_sha256`` and ``games_trained`` (the checkpoint it came from).
``model.npz``
    The same weights for the numpy-only path (:mod:`bgai.agents.numpy_bot`): ``W0, b0, W1, b1, ...`` (``W`` of shape
    ``(out, in)`` float32, as in ``torch.nn.Linear``) and ``meta``, a JSON string with the metadata above.
``model.golden.json``
    A check for consumers: for a few reference positions (GNU Backgammon Position IDs), the encoded
    ``features`` and the expected ``probs`` (computed by the torch network), with ``tolerance``.

The graph is written with the ``onnx`` package directly (the MLP needs four node kinds) rather than through
``torch.onnx.export``, whose default exporter needs ``onnxscript`` and whose TorchScript exporter is
deprecated; ``tests/test_export.py`` checks onnxruntime, numpy and torch agree.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

from bgai import __version__
from bgai.core.equity import OUTPUTS
from bgai.core.position_id import decode_position_id
from bgai.errors import BgaiError
from bgai.util.fileio import atomic_write, atomic_write_bytes, check_destination

__all__ = [
    "OPSET",
    "EXPORT_FORMAT",
    "GOLDEN_POSITIONS",
    "build_onnx",
    "export_model",
    "export_checkpoint",
    "companion_paths",
]

#: ONNX opset of exported models (fixed, so consumers know what runtime they need).
OPSET = 17
#: Version of the export layout (metadata keys, npz arrays, golden file).
EXPORT_FORMAT = 1

#: Reference positions of the golden file (GNU Backgammon Position IDs, side on roll's view): the start, a few
#: middle games, a position with checkers on the bar, a race and a bear-off (from PROTOCOLS.md's test vectors).
GOLDEN_POSITIONS = (
    "4HPwATDgc/ABMA",
    "HC/wATDg8+AxAA",
    "zGbiIQgxH/AAWA",
    "AACAewAAgAYAAA",
    "8N4ZAAbg/xMAIA",
    "GW+DAUi03ZABBg",
    "ADAAAQAkIAAAAA",
)


def companion_paths(onnx_path: str | os.PathLike) -> tuple[str, str]:
    """``(npz path, golden path)`` written beside an ONNX file: ``model.onnx`` -> ``model.npz``,
    ``model.golden.json``."""
    p = os.fspath(onnx_path)
    base = p[:-5] if p.lower().endswith(".onnx") else p
    return base + ".npz", base + ".golden.json"


def _layers(net) -> list[tuple[np.ndarray, np.ndarray]]:
    import torch

    out = []
    for m in net.body:
        if isinstance(m, torch.nn.Linear):
            out.append(
                (m.weight.detach().cpu().numpy().astype(np.float32), m.bias.detach().cpu().numpy().astype(np.float32))
            )
    return out


def _metadata(net, encoder, source: str | None, source_sha256: str | None, extra: dict | None = None) -> dict[str, str]:

    meta = {
        "bgai_export_format": str(EXPORT_FORMAT),
        "bgai_version": __version__,
        "encoding": encoder.name,
        "encoding_version": str(encoder.version),
        "encoding_size": str(encoder.size),
        "outputs": ",".join(OUTPUTS),
        "perspective": "side on roll, before it rolls; cumulative probabilities (win includes gammons)",
        "hidden": ",".join(str(h) for h in net.spec.hidden),
        "activation": net.spec.activation,
        "source": source or "",
        "source_sha256": source_sha256 or "",
    }
    meta.update({k: str(v) for k, v in (extra or {}).items()})
    return meta


def build_onnx(net, encoder, metadata: dict[str, str]):
    """The ONNX ``ModelProto`` of ``net`` (see the module docstring).  Needs the ``onnx`` package."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    layers = _layers(net)
    nodes, inits = [], []
    x = "features"
    act = "Sigmoid" if net.spec.activation == "sigmoid" else "Relu"
    for i, (w, b) in enumerate(layers):
        inits.append(numpy_helper.from_array(w, name=f"W{i}"))
        inits.append(numpy_helper.from_array(b, name=f"b{i}"))
        last = i == len(layers) - 1
        z = f"z{i}"
        nodes.append(helper.make_node("Gemm", [x, f"W{i}", f"b{i}"], [z], name=f"dense{i}", transB=1))
        y = "probs" if last else f"h{i}"
        nodes.append(helper.make_node("Sigmoid" if last else act, [z], [y], name=f"act{i}"))
        x = y
    graph = helper.make_graph(
        nodes,
        "bgai_value_net",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", encoder.size])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", len(OUTPUTS)])],
        initializer=inits,
    )
    model = helper.make_model(
        graph, producer_name="bgai", producer_version=metadata["bgai_version"], opset_imports=[helper.make_opsetid("", OPSET)]
    )
    model.ir_version = 8  # readable by onnxruntime >= 1.10
    model.doc_string = (
        "bgai value network: features (encoding %s v%s) -> probs %s for the side on roll"
        % (encoder.name, encoder.version, ",".join(OUTPUTS))
    )
    helper.set_model_props(model, metadata)
    onnx.checker.check_model(model)
    return model


def _golden(net, encoder) -> dict[str, Any]:
    import torch


    boards = np.stack([decode_position_id(p) for p in GOLDEN_POSITIONS])
    feats = encoder(boards).astype(np.float32)
    with torch.no_grad():
        probs = net(torch.from_numpy(feats)).numpy().astype(np.float64)
    return {
        "bgai_export_format": EXPORT_FORMAT,
        "encoding": encoder.describe(),
        "outputs": list(OUTPUTS),
        "tolerance": 1e-5,
        "positions": list(GOLDEN_POSITIONS),
        "features": [[float(v) for v in row] for row in feats],
        "probs": [[float(v) for v in row] for row in probs],
    }


def export_model(
    net, encoder, out: str | os.PathLike, *, source: str | None = None, source_sha256: str | None = None,
    formats: tuple[str, ...] = ("onnx", "npz", "golden"), extra_metadata: dict | None = None,
) -> dict[str, str]:
    """Write the ONNX model, the numpy weights and the golden file for ``net``.

    Args:
        net: a :class:`bgai.model.nets.ValueNet`.
        encoder: its :class:`bgai.model.features.Encoder`.
        out: the ``.onnx`` path; the others go beside it (:func:`companion_paths`).
        source, source_sha256: the checkpoint's name and hash, recorded in the metadata.
        extra_metadata: more ``key: value`` pairs for the metadata (e.g. ``games_trained``).
        formats: which of ``'onnx'``, ``'npz'``, ``'golden'`` to write.

    Returns:
        ``{'onnx': path, 'npz': path, 'golden': path}`` of the files written.

    Raises:
        BgaiError: a missing or unwritable destination directory, or a destination that is a directory
            (checked before anything is written).  ValueError: an unknown format name.
    """
    unknown = set(formats) - {"onnx", "npz", "golden"}
    if unknown:
        raise ValueError(f"unknown export formats {sorted(unknown)}")
    out = os.fspath(out)
    npz_path, golden_path = companion_paths(out)
    for kind, p in (("onnx", out), ("npz", npz_path), ("golden", golden_path)):
        if kind in formats:
            check_destination(p)  # refuse a missing directory before any work (directories are never created)
    meta = _metadata(net, encoder, source, source_sha256, extra_metadata)
    written: dict[str, str] = {}
    if "onnx" in formats:
        model = build_onnx(net, encoder, meta)
        atomic_write_bytes(out, model.SerializeToString())
        written["onnx"] = out
    if "npz" in formats:
        arrays: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(_layers(net)):
            arrays[f"W{i}"] = w
            arrays[f"b{i}"] = b
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
        atomic_write(npz_path, lambda fh: np.savez(fh, **arrays))
        written["npz"] = npz_path
    if "golden" in formats:
        text = json.dumps(_golden(net, encoder), indent=1).encode()
        atomic_write_bytes(golden_path, text)
        written["golden"] = golden_path
    return written


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def export_checkpoint(checkpoint: str | os.PathLike, out: str | os.PathLike, *, fmt: str = "onnx") -> dict[str, str]:
    """Export a bgai checkpoint (:mod:`bgai.model.bundle`).

    Args:
        checkpoint: the ``.pt`` file.
        out: destination (``.onnx`` for ``fmt='onnx'``, which also writes the ``.npz`` and golden file;
            ``.npz`` for ``fmt='npz'``).
        fmt: ``'onnx'`` or ``'npz'``.

    Raises:
        CheckpointError: missing, corrupt or foreign checkpoint (one short line naming it; see
        :func:`bgai.model.bundle.load_checkpoint_net`).  AgentSpecError: a configuration file given as the
        checkpoint.  BgaiError: an unknown format or an unwritable destination.
    """
    from bgai.model.bundle import load_checkpoint_net

    path = os.fspath(checkpoint)
    check_destination(out, probe=True)  # before loading: a missing or unwritable output directory is refused first
    net, encoder, ckpt = load_checkpoint_net(path)  # short, safe errors for corrupt or foreign files
    src, sha = os.path.basename(path), _sha256(path)
    extra = {"games_trained": int(ckpt.get("games_trained", 0))}
    if fmt == "onnx":
        return export_model(net, encoder, out, source=src, source_sha256=sha, extra_metadata=extra)
    if fmt == "npz":
        o = os.fspath(out)
        stem = o[:-4] if o.lower().endswith(".npz") else o
        return export_model(
            net, encoder, stem + ".onnx", source=src, source_sha256=sha, formats=("npz",), extra_metadata=extra
        )
    raise BgaiError(f"unknown export format {fmt!r}; use 'onnx' (also writes .npz and a golden file) or 'npz'")

