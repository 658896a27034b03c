"""Model files before any framework reads them: the checks every loader shares, and short, safe error messages.

numpy-free and torch-free: the numpy-only bot and the agent registry use it without the training extra.
"""

from __future__ import annotations

import os

from bgai.errors import AgentSpecError, CheckpointError

__all__ = ["CONFIG_SUFFIXES", "check_checkpoint_file", "checkpoint_load_error", "short_reason"]

#: File endings of configuration files, refused with a hint when given as an agent.
CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini")
#: Longest torch message quoted in a CheckpointError.
MAX_REASON = 160
#: Phrases of torch's messages that must never reach the user (advice to load unsafely) or are noise.
UNSAFE_PHRASES = ("weights_only", "weights only", "arbitrary code", "trusted source", "add_safe_globals", "safe_globals")


def short_reason(exc: BaseException) -> str:
    """The first sentence of an exception's message, cut to :data:`MAX_REASON` characters; empty when it
    carries unsafe advice or is empty."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if any(u in text.lower() for u in UNSAFE_PHRASES):
        return ""
    text = text.split(". ")[0].strip().rstrip(".")
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def checkpoint_load_error(path: str, exc: BaseException) -> CheckpointError:
    """A short, safe :class:`CheckpointError` for a failure to load the checkpoint ``path``.

    A :class:`CheckpointError` from :mod:`bgai.model.bundle` whose message is already one of bgai's own
    (foreign torch file, newer format version, missing entries, weights that do not fit) is kept; one that
    quotes torch's unpickler (corrupt archive, and torch's advice to load with ``weights_only=False``, which
    would run arbitrary code from the file) is replaced by ``checkpoint PATH is corrupt or not a bgai
    checkpoint (...)``.  Any other exception becomes the same short message with the exception's type.
    """
    msg = str(exc)
    if isinstance(exc, CheckpointError) and "not a readable bgai checkpoint" not in msg:
        if not any(u in msg.lower() for u in UNSAFE_PHRASES) and "\n" not in msg.strip():
            return exc
    reason = "torch could not read it"
    if not isinstance(exc, CheckpointError):
        reason = f"{type(exc).__name__}"
        short = short_reason(exc)
        if short:
            reason += f": {short}"
    return CheckpointError(f"checkpoint {path!r} is corrupt or not a bgai checkpoint ({reason})")


def check_checkpoint_file(path: str) -> None:
    """Checks before loading ``path`` as a checkpoint: it exists and is not a config file (what else a
    checkpoint file must be, :func:`bgai.model.bundle.read_checkpoint` checks).

    Raises:
        CheckpointError: missing file.
        AgentSpecError: a configuration file (``.yaml`` ...) given where a model was expected.
    """
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint file {path!r} does not exist")
    if path.lower().endswith(CONFIG_SUFFIXES):
        raise AgentSpecError(
            f"{path!r} is a configuration file, not a model: pass a checkpoint (.pt, e.g. written by 'bgai train') "
            "or an exported model (.onnx / .npz from 'bgai export')"
        )
