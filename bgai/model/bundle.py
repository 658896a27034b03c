"""Checkpoint files: self-describing, written atomically, loaded safely.

A checkpoint is a ``torch.save`` file holding only tensors and plain Python values, loaded with
``torch.load(weights_only=True)`` (no arbitrary code runs on load).  Its top-level mapping (format version 1):

==================  ==========================================================================================
``format``          the string ``'bgai-checkpoint'`` (a foreign file lacks it)
``format_version``  :data:`FORMAT_VERSION`
``net``             ``{'spec': NetSpec.to_dict(), 'state_dict': {name: tensor}}`` - the architecture travels
                    with the weights; loaders never take it from flags
``encoding``        ``{'name', 'version', 'size'}`` of the input encoder (:mod:`bgai.model.features`)
``config``          the :class:`~bgai.train.config.TrainConfig` as a dict
``games_trained``   training games played
``evals``           list of evaluation records (dicts: ``games_trained``, ``opponent``, ``games``, ``ppg``,
                    ``ci95`` ...)
``trainer``         (training checkpoints only) :meth:`SelfPlayTrainer.state_dict`: optimiser, random
                    generator, the games in progress, counters - what ``--resume`` needs
``bgai_version``    the writing bgai's version
==================  ==========================================================================================

Writing goes to a temporary file in the same folder, then ``os.replace`` (never a half-written file).
"""

from __future__ import annotations

import os
import zipfile
from typing import Any

import torch

from bgai import __version__
from bgai.errors import BgaiError, CheckpointError
from bgai.model.features import Encoder, check_encoding
from bgai.model.files import check_checkpoint_file, checkpoint_load_error
from bgai.model.nets import NetSpec, ValueNet
from bgai.util.fileio import atomic_write

FORMAT = "bgai-checkpoint"
FORMAT_VERSION = 1


def build_checkpoint(
    net: ValueNet,
    encoder: Encoder,
    config: dict,
    games_trained: int,
    evals: list[dict],
    trainer: dict | None = None,
) -> dict[str, Any]:
    """The checkpoint mapping (see the module docstring)."""

    ckpt = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "net": {"spec": net.spec.to_dict(), "state_dict": {k: v.detach().clone() for k, v in net.state_dict().items()}},
        "encoding": encoder.describe(),
        "config": dict(config),
        "games_trained": int(games_trained),
        "evals": [dict(e) for e in evals],
        "bgai_version": __version__,
    }
    if trainer is not None:
        ckpt["trainer"] = trainer
    return ckpt


def save_checkpoint(ckpt: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``ckpt`` to ``path`` atomically (:func:`bgai.util.fileio.atomic_write`: temporary file in the same folder,
    fsync, ``os.replace``; the usual file permissions).  The folder is created if needed.

    Raises:
        CheckpointError: the folder cannot be written (the message names the path).
    """
    path = os.fspath(path)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        atomic_write(path, lambda fh: torch.save(ckpt, fh))
    except OSError as exc:
        raise CheckpointError(f"cannot write checkpoint {path!r}: {exc.strerror or exc}") from None
    except BgaiError as exc:
        raise CheckpointError(str(exc)) from None


def read_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Load and check a checkpoint file (safe loading: ``weights_only=True``).

    Returns:
        The checkpoint mapping.

    Raises:
        CheckpointError: missing file, a directory, an unreadable file, not a torch file, truncated/corrupt, a
            foreign torch file, or a newer format version.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint {path!r} does not exist")
    if not os.path.isfile(path):
        raise CheckpointError(f"checkpoint {path!r} is not a file")
    try:
        is_zip = zipfile.is_zipfile(path)  # every torch.save since torch 1.6 writes a zip archive
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {path!r}: {exc.strerror or exc}") from None
    if not is_zip:
        raise CheckpointError(f"checkpoint {path!r} is corrupt or not a bgai checkpoint (not a torch zip file)")
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()  # every member against its CRC-32: torch does not check them
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise CheckpointError(f"checkpoint {path!r} is corrupt ({type(exc).__name__})") from None
    if bad is not None:
        raise CheckpointError(f"checkpoint {path!r} is corrupt (checksum mismatch in {bad!r})")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # never quote torch's text: it advises weights_only=False, which runs code
        raise CheckpointError(
            f"checkpoint {path!r} is corrupt or not a bgai checkpoint (torch could not read it)"
        ) from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise CheckpointError(f"{path!r} is a torch file but not a bgai checkpoint (no 'format': {FORMAT!r})")
    version = ckpt.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        raise CheckpointError(f"{path!r} has checkpoint format version {version!r}; this bgai reads 1..{FORMAT_VERSION}")
    for key in ("net", "encoding", "config", "games_trained"):
        if key not in ckpt:
            raise CheckpointError(f"{path!r} lacks the {key!r} entry")
    return ckpt


def net_from_checkpoint(ckpt: dict[str, Any], path: str = "checkpoint") -> tuple[ValueNet, Encoder]:
    """Build the network (architecture from the checkpoint) and its encoder, weights loaded.

    Raises:
        CheckpointError: unknown encoding, architecture/weights mismatch.
    """
    encoder = check_encoding(ckpt["encoding"])
    try:
        spec = NetSpec.from_dict(ckpt["net"]["spec"])
        state = ckpt["net"]["state_dict"]
    except (KeyError, TypeError) as exc:
        raise CheckpointError(f"{path!r}: malformed 'net' entry ({exc})") from None
    if spec.n_inputs != encoder.size:
        raise CheckpointError(f"{path!r}: network takes {spec.n_inputs} inputs but encoding has {encoder.size}")
    net = ValueNet(spec)
    try:
        net.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError) as exc:
        msg = str(exc).splitlines()[0]
        raise CheckpointError(f"{path!r}: weights do not fit the stored architecture ({msg})") from None
    net.eval()
    return net, encoder


def load_net(path: str | os.PathLike) -> tuple[ValueNet, Encoder, dict[str, Any]]:
    """``read_checkpoint`` + ``net_from_checkpoint``: ``(net, encoder, checkpoint mapping)``."""
    ckpt = read_checkpoint(path)
    net, enc = net_from_checkpoint(ckpt, os.fspath(path))
    return net, enc, ckpt


def load_checkpoint_net(path: str):
    """:func:`load_net` behind :func:`check_checkpoint_file` and
    :func:`checkpoint_load_error`: ``(net, encoder, checkpoint mapping)``.

    Raises:
        CheckpointError, AgentSpecError: as :func:`check_checkpoint_file`; any load failure (short message).
    """
    check_checkpoint_file(path)
    try:
        return load_net(path)
    except BgaiError as exc:
        raise checkpoint_load_error(path, exc) from None
    except Exception as exc:  # torch's unpickler raises many kinds (IndexError, UnpicklingError, ...)
        raise checkpoint_load_error(path, exc) from None
