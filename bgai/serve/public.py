"""What bgai's servers tell clients about the agent they serve: a model's file name and id, never its path.

A served checkpoint is named by its file name (``bgai-td128.pt``, with its options: ``bgai-td128.pt:ply=1``) and
identified by the first 16 hex digits of the SHA-256 of the file (``sha256:1f2e...``): enough to tell two models
apart without showing where the server keeps its files.
"""

from __future__ import annotations

import copy
import os

from bgai.agents.registry import parse_spec
from bgai.errors import BgaiError
from bgai.serve.bot import Bot
from bgai.util.fileio import file_sha256

__all__ = ["public_spec", "model_info", "public_bot"]

#: Hex digits of the SHA-256 shown as a model's id.
ID_DIGITS = 16


def _split(spec: str) -> tuple[str, dict]:
    try:
        return parse_spec(spec)
    except BgaiError:
        return spec, {}


def public_spec(spec: str) -> str:
    """``spec`` with a model file's directories removed (``'/srv/m/bgai.pt:ply=1'`` -> ``'bgai.pt:ply=1'``);
    agent names (``'gnubg'``, ``'pubeval'``) unchanged."""
    name, options = _split(spec)
    base = os.path.basename(name.replace("\\", "/").rstrip("/")) or name
    if base == name:
        return spec
    return base + (":" + ",".join(f"{k}={v}" for k, v in options.items()) if options else "")


def model_info(spec: str) -> dict | None:
    """``{"file": name, "id": "sha256:<16 hex digits>"}`` for a spec naming a model file, else ``None``.

    The id is ``None`` when the file cannot be read now.
    """
    name, _ = _split(spec)
    if not os.path.isfile(name):
        return None
    try:
        digest = "sha256:" + file_sha256(name)[:ID_DIGITS]
    except OSError:
        digest = None
    return {"file": os.path.basename(name), "id": digest}


def public_bot(bot: Bot) -> Bot:
    """A view of ``bot`` whose ``spec`` is :func:`public_spec` of the original (same agent, same lock), for the
    answers a server sends."""
    view = copy.copy(bot)
    view.spec = public_spec(bot.spec)
    return view
