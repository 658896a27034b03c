"""Export a model bundle for use outside bgai: one ONNX graph and one numpy weight file per net, a golden file.

``export_bundle(bundle, 'model.onnx')`` writes, for a bundle of one net (what TD training makes):

``model.onnx``
    The network as an ONNX graph (``Gemm`` -> ``Sigmoid``/``Relu`` per hidden layer -> ``Gemm`` -> ``Sigmoid``),
    opset :data:`OPSET`, float32.  Input ``features`` ``[batch, F]``, output ``probs`` ``[batch, 5]``; ``batch``
    is a dynamic axis.  Metadata (``metadata_props``): ``bgai_export_format``, ``bgai_version``,
    ``encoding`` / ``encoding_version`` / ``encoding_size`` (:mod:`bgai.model.features`), ``outputs`` (the output
    order, :data:`bgai.core.equity.OUTPUTS`), ``perspective`` (side on roll, before it rolls), ``hidden``,
    ``activation``, ``source``, ``source_sha256`` and ``games_trained`` (the checkpoint it came from), and the
    class rule: ``net_name``, ``net_classes`` (this net's position classes, comma-separated) and ``class_rule``
    (JSON: ``{"classifier": NAME, "nets": [{"name", "classes", "onnx", "npz"}, ...]}``, every net of the set with
    its file names; :mod:`bgai.model.routing`; a bundle with the bear-off database adds ``"databases": [{"kind":
    "bearoff-os", "classes": ["bearoff"], "version": 1}]``, and the numpy bot then values bear-offs by
    :mod:`bgai.model.bearoff`, which it builds or loads with numpy alone).
``model.npz``
    The same weights for the numpy-only path (:mod:`bgai.agents.numpy_bot`): ``W0, b0, W1, b1, ...`` (``W`` of shape
    ``(out, in)`` float32, as in ``torch.nn.Linear``) and ``meta``, a JSON string with the metadata above.
``model.golden.json``
    A check for consumers: for a few reference positions (GNU Backgammon Position IDs), the encoded
    ``features`` and the expected ``probs`` (bgai's evaluation of the bundle,
    :meth:`~bgai.model.bundle.ModelBundle.probabilities`), with ``tolerance``; with several nets also each
    position's ``net`` (index) and ``class``, the features being those of that net's encoding (a position a
    database values has ``net`` -2 and no features).

A bundle of several nets writes its first net as above and each other net ``NAME`` beside it as
``model.NAME.onnx`` / ``model.NAME.npz`` (one graph per net; every file's ``class_rule`` names the whole set, so a
loader given any of them plays the set).  ``--format npz`` (an ``OUT`` ending in ``.npz``) writes only the numpy
files.  An export is one set: every file is written to a temporary file first and all are then renamed
together (:func:`bgai.util.fileio.write_file_set`); on any failure the temporaries are removed and the files
of an earlier export stay as they were.

The graph is written with the ``onnx`` package directly (the MLP needs four node kinds) rather than through
``torch.onnx.export``, whose default exporter needs ``onnxscript`` and whose TorchScript exporter is
deprecated; ``tests/test_export.py`` checks onnxruntime, numpy and torch agree.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import numpy as np

from bgai import __version__
from bgai.core.equity import OUTPUTS
from bgai.core.position_id import decode_position_id
from bgai.errors import BgaiError
from bgai.model.bundle import BundleNet, ModelBundle, load_model_bundle
from bgai.model.classes import CLASS_NAMES
from bgai.util.fileio import check_destination, file_sha256, write_file_set

__all__ = [
    "OPSET",
    "EXPORT_FORMAT",
    "FORMATS",
    "GOLDEN_POSITIONS",
    "build_onnx",
    "export_paths",
    "export_bundle",
    "export_model",
    "export_checkpoint",
    "companion_paths",
    "format_for",
]

#: ONNX opset of exported models (fixed, so consumers know what runtime they need).
OPSET = 17
#: Version of the export layout (metadata keys, npz arrays, golden file) of one net's files.
EXPORT_FORMAT = 1
#: Export formats and the file ending each writes.
FORMATS = {"onnx": ".onnx", "npz": ".npz"}

#: Reference positions of the golden file (GNU Backgammon Position IDs, side on roll's view): the start, a few
#: middle games and positions with checkers on the bar (from PROTOCOLS.md's test vectors), then a race and a
#: bear-off (GNU Backgammon's classes 3 and 2, ``gnubg_nn.classify``), so a set of several nets is checked on each.
GOLDEN_POSITIONS = (
    "4HPwATDgc/ABMA",
    "HC/wATDg8+AxAA",
    "zGbiIQgxH/AAWA",
    "AACAewAAgAYAAA",
    "8N4ZAAbg/xMAIA",
    "GW+DAUi03ZABBg",
    "ADAAAQAkIAAAAA",
    "zjlnAIA5Z84AAA",
    "Z14AANh2DQAAAA",
)


def format_for(out: str | os.PathLike, fmt: str | None = None) -> str:
    """The export format of destination ``out``: ``fmt`` checked against its ending, or taken from it.

    Raises:
        BgaiError: an unknown format, an ending that is neither ``.onnx`` nor ``.npz``, or one that does not
            match ``fmt`` (e.g. ``--format npz --out w.onnx``).
    """
    path = os.fspath(out)
    ending = os.path.splitext(path)[1].lower()
    by_ending = {v: k for k, v in FORMATS.items()}.get(ending)
    if fmt is not None and fmt not in FORMATS:
        raise BgaiError(f"unknown export format {fmt!r}; use 'onnx' (also writes .npz and a golden file) or 'npz'")
    if by_ending is None:
        want = FORMATS[fmt] if fmt else ".onnx or .npz"
        raise BgaiError(f"export destination {path!r} must end in {want} (ONNX model: .onnx, with .npz and "
                        ".golden.json beside it; numpy weights only: .npz)")
    if fmt is not None and fmt != by_ending:
        raise BgaiError(f"--format {fmt} writes a {FORMATS[fmt]} file, but the destination {path!r} ends in {ending}")
    return by_ending


def companion_paths(onnx_path: str | os.PathLike) -> tuple[str, str]:
    """``(npz path, golden path)`` written beside an ONNX file: ``model.onnx`` -> ``model.npz``,
    ``model.golden.json``."""
    p = os.fspath(onnx_path)
    base = p[:-5] if p.lower().endswith(".onnx") else p
    return base + ".npz", base + ".golden.json"


def export_paths(bundle: ModelBundle, out: str | os.PathLike, fmt: str) -> list[dict[str, str | None]]:
    """Per net, ``{'onnx': path or None, 'npz': path}``: the first net at ``out`` (and its companion), net
    ``NAME`` at ``STEM.NAME.onnx`` / ``STEM.NAME.npz``."""
    stem = os.path.splitext(os.fspath(out))[0]
    paths = []
    for k, n in enumerate(bundle.nets):
        base = stem if k == 0 else f"{stem}.{n.name}"
        paths.append({"onnx": base + ".onnx" if fmt == "onnx" else None, "npz": base + ".npz"})
    return paths


def _layers(net) -> list[tuple[np.ndarray, np.ndarray]]:
    import torch

    out = []
    for m in net.body:
        if isinstance(m, torch.nn.Linear):
            out.append(
                (m.weight.detach().cpu().numpy().astype(np.float32), m.bias.detach().cpu().numpy().astype(np.float32))
            )
    return out


def _metadata(entry: BundleNet, base: dict[str, str], rule: str) -> dict[str, str]:
    net, encoder = entry.net, entry.encoder
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
        "net_name": entry.name,
        "net_classes": ",".join(entry.classes),
        "class_rule": rule,
    }
    meta.update(base)
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


def _golden(bundle: ModelBundle) -> dict[str, Any]:
    boards = np.stack([decode_position_id(p) for p in GOLDEN_POSITIONS])
    which = bundle.net_index(boards)
    feats = [bundle.nets[k].encoder(b[None])[0].astype(np.float32) if k >= 0 else np.zeros(0, np.float32)
             for k, b in zip(which, boards)]
    probs = bundle.probabilities(boards)
    golden = {
        "bgai_export_format": EXPORT_FORMAT,
        "encoding": bundle.nets[0].encoder.describe(),
        "outputs": list(OUTPUTS),
        "tolerance": 1e-5,
        "positions": list(GOLDEN_POSITIONS),
        "features": [[float(v) for v in row] for row in feats],
        "probs": [[float(v) for v in row] for row in probs],
    }
    if bundle.databases:
        golden["databases"] = [d.describe() for d in bundle.databases]
    if len(bundle.nets) > 1 or bundle.databases:
        golden["nets"] = [{"name": n.name, "encoding": n.encoder.describe()} for n in bundle.nets]
        golden["net"] = [int(k) for k in which]
        golden["class"] = [CLASS_NAMES[c] for c in bundle.classify(boards)]
    return golden


def _npz_bytes(entry: BundleNet, meta: dict[str, str]) -> bytes:
    arrays: dict[str, np.ndarray] = {}
    for i, (w, b) in enumerate(_layers(entry.net)):
        arrays[f"W{i}"] = w
        arrays[f"b{i}"] = b
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def export_bundle(
    bundle: ModelBundle, out: str | os.PathLike, *, fmt: str | None = None, source: str | None = None,
    source_sha256: str | None = None, extra_metadata: dict | None = None,
) -> dict[str, str]:
    """Write the export set of ``bundle`` (module docstring), all files or none.

    Args:
        bundle: the model.
        out: the first net's file: ``.onnx`` (ONNX + numpy + golden) or ``.npz`` (numpy only).
        fmt: ``'onnx'`` or ``'npz'``; None takes it from ``out``'s ending (:func:`format_for`).
        source, source_sha256: the checkpoint's name and hash, recorded in the metadata.
        extra_metadata: more ``key: value`` pairs for the metadata (e.g. ``games_trained``).

    Returns:
        ``{kind: path}`` of the files written: ``'onnx'``, ``'npz'``, ``'golden'`` for the first net, and
        ``'onnx:NAME'``, ``'npz:NAME'`` for the others.

    Raises:
        BgaiError: a destination ending that does not fit the format; a missing or unwritable destination
            directory, or a destination that is a directory (checked before anything is written); a write that
            fails (then no file of the set is changed).
    """
    fmt = format_for(out, fmt)
    out = os.fspath(out)
    paths = export_paths(bundle, out, fmt)
    golden_path = companion_paths(os.path.splitext(out)[0] + ".onnx")[1]
    for p in paths:
        for path in p.values():
            if path:
                check_destination(path)  # a missing directory is refused before any work (never created)
    rule_d: dict[str, Any] = {"classifier": bundle.classifier, "nets": [
        {"name": n.name, "classes": list(n.classes),
         "onnx": os.path.basename(p["onnx"]) if p["onnx"] else None, "npz": os.path.basename(p["npz"])}
        for n, p in zip(bundle.nets, paths)
    ]}
    if bundle.databases:
        rule_d["databases"] = [d.describe() for d in bundle.databases]
    rule = json.dumps(rule_d, sort_keys=True)
    base = {"source": source or "", "source_sha256": source_sha256 or ""}
    base.update({k: str(v) for k, v in (extra_metadata or {}).items()})
    files: dict[str, bytes] = {}
    written: dict[str, str] = {}
    for k, (entry, p) in enumerate(zip(bundle.nets, paths)):
        meta = _metadata(entry, base, rule)
        suffix = "" if k == 0 else f":{entry.name}"
        if p["onnx"]:
            files[p["onnx"]] = build_onnx(entry.net, entry.encoder, meta).SerializeToString()
            written["onnx" + suffix] = p["onnx"]
        files[p["npz"]] = _npz_bytes(entry, meta)
        written["npz" + suffix] = p["npz"]
    if fmt == "onnx":
        check_destination(golden_path)
        files[golden_path] = json.dumps(_golden(bundle), indent=1).encode()
        written["golden"] = golden_path
    write_file_set(files)
    return dict(sorted(written.items(), key=lambda kv: ("onnx", "npz", "golden").index(kv[0].split(":")[0])))


def export_model(net, encoder, out: str | os.PathLike, **kwargs) -> dict[str, str]:
    """:func:`export_bundle` of a one-net bundle (:meth:`ModelBundle.single`)."""
    return export_bundle(ModelBundle.single(net, encoder), out, **kwargs)


def export_checkpoint(checkpoint: str | os.PathLike, out: str | os.PathLike, *, fmt: str | None = None) -> dict[str, str]:
    """Export a bundle file (:mod:`bgai.model.bundle`).

    Args:
        checkpoint: the ``.pt`` file.
        out: destination, ``.onnx`` (also writes the ``.npz`` and golden file) or ``.npz`` (numpy weights only).
        fmt: ``'onnx'`` or ``'npz'``, which must match ``out``'s ending; None: from the ending.

    Raises:
        CheckpointError: missing, corrupt or foreign checkpoint (one short line naming it; see
        :func:`bgai.model.bundle.load_model_bundle`).  AgentSpecError: a configuration file given as the
        checkpoint.  BgaiError: an unknown format, a destination ending that does not fit it, an unwritable
        destination, a failed write (no file of the set changed).
    """
    fmt = format_for(out, fmt)  # first: a wrong ending is an input error, before any file is looked at
    path = os.fspath(checkpoint)
    check_destination(out, probe=True)  # before loading: a missing or unwritable output directory is refused first
    bundle, ckpt = load_model_bundle(path)  # short, safe errors for corrupt or foreign files
    extra = {"games_trained": int(ckpt.get("games_trained", 0))}
    return export_bundle(bundle, out, fmt=fmt, source=os.path.basename(path), source_sha256=file_sha256(path),
                         extra_metadata=extra)
