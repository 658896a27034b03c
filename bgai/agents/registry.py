"""Agents by name: the one-string agent specification used on the command line and in evaluation workers.

A spec is a built-in name, optionally with options, or a checkpoint path with options::

    random | pubeval | racer | blocker | gnubg | path/to/model.pt[:ply=N]

Options follow the last ``:`` as comma-separated ``key=value`` pairs (``net.pt:ply=1``).  Built-in bots take no
options.  Checkpoints are loaded by :meth:`bgai.agents.neural.NeuralAgent.load` (imported only when needed).
"""

from __future__ import annotations

import os
from typing import Callable

from bgai.agents.base import Agent
from bgai.errors import AgentSpecError, BgaiError, CheckpointError


def _random() -> Agent:
    from bgai.agents.random import RandomAgent

    return RandomAgent()


def _pubeval() -> Agent:
    from bgai.agents.pubeval import PubevalAgent

    return PubevalAgent()


def _racer() -> Agent:
    from bgai.agents.heuristic import RacerAgent

    return RacerAgent()


def _blocker() -> Agent:
    from bgai.agents.heuristic import BlockerAgent

    return BlockerAgent()


def _gnubg() -> Agent:
    from bgai.agents.gnubg import GnubgAgent

    return GnubgAgent()


#: Built-in agents: name -> factory (a one-line description is in :data:`DESCRIPTIONS`).
BUILTINS: dict[str, Callable[[], Agent]] = {
    "random": _random,
    "pubeval": _pubeval,
    "racer": _racer,
    "blocker": _blocker,
    "gnubg": _gnubg,
}

DESCRIPTIONS = {
    "random": "a uniformly random legal play",
    "pubeval": "Tesauro's public evaluation function (linear, contact and race weights)",
    "racer": "heuristic: pip lead and safe blots",
    "blocker": "heuristic: made points, primes, hits, safe blots",
    "gnubg": "GNU Backgammon 0-ply via gnubg-nn (optional extra)",
}

#: Options a checkpoint spec accepts, with their parsers.
CHECKPOINT_OPTIONS = {"ply": int}


def valid_specs() -> str:
    """Human-readable list of valid agent specs, for error messages and ``--help``."""
    return ", ".join(BUILTINS) + ", or a checkpoint path such as model.pt[:ply=N]"


#: File name endings taken for checkpoint paths.
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")


def _looks_like_path(name: str) -> bool:
    return name.lower().endswith(CHECKPOINT_SUFFIXES) or os.sep in name or "/" in name or os.path.exists(name)


def parse_spec(spec: str) -> tuple[str, dict[str, int]]:
    """Split a spec into ``(name or path, options)``.

    Raises:
        AgentSpecError: empty spec, an option that is not ``key=value``, an unknown option or a bad value.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"empty agent spec; valid agents: {valid_specs()}")
    spec = spec.strip()
    name, opts_text = spec, ""
    head, sep, tail = spec.rpartition(":")
    if sep and head and ("=" in tail or not tail or head.lower().endswith(CHECKPOINT_SUFFIXES)):
        name, opts_text = head, tail
    options: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in opts_text.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise AgentSpecError(f"bad option {item!r} in agent spec {spec!r}: expected key=value")
        if key not in CHECKPOINT_OPTIONS:
            raise AgentSpecError(
                f"unknown option {key!r} in agent spec {spec!r}; valid options: {', '.join(CHECKPOINT_OPTIONS)}"
            )
        try:
            parsed = CHECKPOINT_OPTIONS[key](value)
        except ValueError:
            raise AgentSpecError(f"bad value {value!r} for option {key!r} in agent spec {spec!r}") from None
        if key == "ply" and parsed < 0:
            raise AgentSpecError(f"ply must be >= 0 in agent spec {spec!r}, got {parsed}")
        options[key] = parsed
    return name, options


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec.

    Args:
        spec: ``'random'``, ``'pubeval'``, ``'racer'``, ``'blocker'``, ``'gnubg'``, or a checkpoint path with
            optional ``:ply=N`` (``'runs/x/best.pt:ply=1'``).

    Returns:
        A fresh :class:`~bgai.agents.base.Agent`; its ``spec`` attribute holds the spec string.

    Raises:
        AgentSpecError: an unknown name (the message lists the valid ones), options on a built-in bot, bad options,
            gnubg-nn missing for ``'gnubg'``, or checkpoint support (:mod:`bgai.agents.neural`) missing.
        CheckpointError: a checkpoint path that does not exist or cannot be loaded (the path is named).
    """
    name, options = parse_spec(spec)
    key = name.lower()
    if key in BUILTINS:
        if options:
            raise AgentSpecError(f"agent {key!r} takes no options (got {spec!r})")
        agent = BUILTINS[key]()
    elif _looks_like_path(name):
        if not os.path.isfile(name):
            raise CheckpointError(f"checkpoint file not found: {name!r} (agent spec {spec!r})")
        try:
            from bgai.agents.neural import NeuralAgent
        except ImportError as exc:
            raise AgentSpecError(f"checkpoint agents are not available in this build: {exc}") from exc
        try:
            agent = NeuralAgent.load(name, **options)
        except BgaiError:
            raise
        except Exception as exc:  # torch's unpickler raises many kinds (IndexError, UnpicklingError, ...)
            raise CheckpointError(f"cannot load checkpoint {name!r}: {type(exc).__name__}: {exc}") from exc
    else:
        raise AgentSpecError(f"unknown agent {spec!r}; valid agents: {valid_specs()}")
    try:
        agent.spec = spec
    except AttributeError:  # pragma: no cover - an agent class with __slots__
        pass
    return agent
