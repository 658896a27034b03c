"""Agents by name: the one-string agent specification used on the command line and in evaluation workers.

A spec is a built-in name, optionally with options, or a model file with options::

    random | pubeval | racer | blocker | gnubg[:ply=N] | bgsage[:ply=N] | default[:ply=N] | path/to/model.pt[:ply=N]
    | path/to/model.onnx | path/to/model.npz

Options follow the name as ``key=value`` pairs separated by ``,`` or ``:`` (``net.pt:ply=1``,
``net.pt:ply=1,bearoff=db`` = ``net.pt:ply=1:bearoff=db``); an option given twice is refused.  Option names, the
values of enumerations (``bearoff=DB``) and built-in names (``PubEval``) are case-insensitive; a file path is
taken as typed.  Built-in bots take no options, except those in :data:`BUILTIN_OPTIONS` (``gnubg:ply=1``: GNU
Backgammon's 1-ply search; ``bgsage:ply=1``: Open Sage with a 1-ply look-ahead, bgai's ply numbering).  Model
files take ``ply=N`` (checkpoints: 0, 1 or 2; exports: 0) and ``bearoff=db`` or ``bearoff=net``:
``db`` values bear-off positions (both sides' checkers all home) by the exact one-sided bear-off database
(:mod:`bgai.model.bearoff`, as GNU Backgammon does) instead of the net, at every ply and in rollouts
(``checkpoints/bgai-td128.pt:bearoff=db,ply=1``); ``net`` by the model's race net even if the file attaches the
database; without the option, as the file says.

* ``model.pt`` (also ``.pth``, ``.ckpt``, or any existing file that is not an export): a training checkpoint,
  loaded by :meth:`bgai.agents.neural.NeuralAgent.load` (imported only when needed; 0/1/2-ply).  The file is
  checked by :func:`bgai.model.bundle.read_checkpoint` (a torch checkpoint is a zip archive) and every load
  failure becomes a short :class:`~bgai.errors.CheckpointError` naming the file -- never torch's advice to retry
  with ``weights_only=False`` (which would run arbitrary code from the file).
* ``model.onnx`` / ``model.npz``: a model written by ``bgai export`` (:mod:`bgai.model.export`), played by
  :class:`bgai.agents.numpy_bot.NumpyAgent` at 0-ply (the weights come from the ``.npz``; for ``.onnx`` the
  ``.npz`` written beside it, or, without one, the ``.onnx`` itself through onnxruntime when it is installed; an
  export of several nets is loaded whole from any of its files).
* ``default``: the shipped model (:func:`default_model_spec`): ``$BGAI_MODEL`` if set, else the model named by
  the manifest ``checkpoints/models.json``; an error when there is none (never a silent substitute).
"""

from __future__ import annotations

import json
import os
from typing import Callable

from bgai.agents.base import Agent
from bgai.agents.bgsage import BgsageAgent
from bgai.agents.gnubg import GnubgAgent
from bgai.agents.heuristic import BlockerAgent, RacerAgent
from bgai.agents.numpy_bot import NumpyAgent
from bgai.agents.pubeval import PubevalAgent
from bgai.agents.random import RandomAgent
from bgai.errors import AgentSpecError, BgaiError, CheckpointError
from bgai.model.files import check_checkpoint_file, checkpoint_load_error
from bgai.util.journal import spec_file_sha256


def _random() -> Agent:

    return RandomAgent()


def _pubeval() -> Agent:

    return PubevalAgent()


def _racer() -> Agent:

    return RacerAgent()


def _blocker() -> Agent:

    return BlockerAgent()


def _gnubg(ply: int = 0) -> Agent:

    return GnubgAgent(ply)


def _bgsage(ply: int = 0) -> Agent:

    return BgsageAgent(ply)


#: Built-in agents: name -> factory (a one-line description is in :data:`DESCRIPTIONS`).
BUILTINS: dict[str, Callable[..., Agent]] = {
    "random": _random,
    "pubeval": _pubeval,
    "racer": _racer,
    "blocker": _blocker,
    "gnubg": _gnubg,
    "bgsage": _bgsage,
}

#: Built-in agents that take options: name -> the option names they accept (passed to the factory).
BUILTIN_OPTIONS = {"gnubg": ("ply",), "bgsage": ("ply",)}

DESCRIPTIONS = {
    "random": "a uniformly random legal play",
    "pubeval": "Tesauro's public evaluation function (linear, contact and race weights)",
    "racer": "heuristic: pip lead and safe blots",
    "blocker": "heuristic: made points, primes, hits, safe blots",
    "gnubg": "GNU Backgammon 0-ply (gnubg:ply=N for its N-ply search, N = 1, 2) via gnubg-nn (optional extra)",
    "bgsage": "Open Sage's production model, 0-ply (bgsage:ply=N for N = 1..3), via bgsage (optional extra)",
}

def _bearoff_option(value: str) -> str:
    value = value.lower()
    if value not in ("db", "net"):
        raise ValueError(value)
    return value


#: Options a checkpoint spec accepts, with their parsers.
CHECKPOINT_OPTIONS = {"ply": int, "bearoff": _bearoff_option}


def valid_specs() -> str:
    """Human-readable list of valid agent specs, for error messages and ``--help``."""
    return (
        ", ".join(n + ("[:ply=N]" if "ply" in BUILTIN_OPTIONS.get(n, ()) else "") for n in BUILTINS)
        + ", default (the shipped model), a checkpoint path such as model.pt[:ply=N], or an "
        "exported model.onnx / model.npz (0-ply only; model options: ply=N for checkpoints, bearoff=db for the exact "
        "bear-off database)"
    )


#: File name endings taken for checkpoint paths.
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")
#: File name endings of models written by ``bgai export`` (played by :class:`bgai.agents.numpy_bot.NumpyAgent`).
EXPORT_SUFFIXES = (".onnx", ".npz")
#: Name of the spec that means the shipped model.
DEFAULT = "default"
#: Environment variable naming the model ``default`` stands for (a path, optionally with ``:ply=N``).
MODEL_ENV = "BGAI_MODEL"
#: The manifest in :data:`CHECKPOINT_DIR` naming the shipped default model (``{"default": "FILE.pt", ...}``).
MANIFEST = "models.json"
#: Where shipped models live: ``checkpoints/`` in the repository root (the parent of the ``bgai`` package).
CHECKPOINT_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "checkpoints")
def default_model_spec(checkpoint_dir: str | None = None) -> str:
    """The spec ``default`` stands for: ``$BGAI_MODEL`` if set and non-empty, else the model the manifest
    ``checkpoints/models.json`` names as ``"default"`` (in ``checkpoint_dir``, default :data:`CHECKPOINT_DIR`, the
    repository's ``checkpoints/`` folder, found relative to the ``bgai`` package, not the working directory).
    Other files in the folder (a user's copied checkpoint) never change what ``default`` means.

    Returns:
        A path spec (``'/repo/checkpoints/bgai-td128.pt'``; ``$BGAI_MODEL`` may add ``':ply=1'``).

    Raises:
        CheckpointError: ``$BGAI_MODEL`` or the manifest names a file that does not exist.
        AgentSpecError: ``$BGAI_MODEL`` is ``default`` or a built-in bot name; no manifest or an unreadable one
            (the message says how to provide a model or name another agent).
    """
    env = os.environ.get(MODEL_ENV, "").strip()
    if env:
        try:
            name, _ = parse_spec(env)
        except AgentSpecError as exc:
            raise AgentSpecError(f"${MODEL_ENV}={env!r}: {exc}") from None
        if name.lower() == DEFAULT or name.lower() in BUILTINS:
            raise AgentSpecError(f"${MODEL_ENV}={env!r} must name a model file (.pt, .onnx or .npz), not an agent name")
        if not os.path.isfile(name):
            raise CheckpointError(f"${MODEL_ENV}={env!r}: model file {name!r} does not exist")
        return env
    folder = checkpoint_dir or CHECKPOINT_DIR
    manifest = os.path.join(folder, MANIFEST)
    hint = f"set {MODEL_ENV}=path/to/model.pt or name an agent ({', '.join(BUILTINS)}, or a model file)"
    try:
        with open(manifest, encoding="utf-8") as f:
            entry = json.load(f)["default"]
    except FileNotFoundError:
        raise AgentSpecError(f"no default model: {manifest} does not exist and ${MODEL_ENV} is not set; {hint}") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AgentSpecError(f"no default model: {manifest} is unreadable or has no 'default' entry "
                             f"({type(exc).__name__}); {hint}") from None
    if not isinstance(entry, str) or not entry or os.path.basename(entry) != entry:
        raise AgentSpecError(f"no default model: {manifest}'s 'default' must be a file name in {folder}, got {entry!r}")
    path = os.path.join(folder, entry)
    if not os.path.isfile(path):
        raise CheckpointError(f"the default model {path!r} named in {manifest} does not exist")
    return path


def resolve_spec(spec: str) -> str:
    """``spec`` with ``default`` replaced by the model it stands for (options kept: ``default:ply=1`` ->
    ``'/repo/checkpoints/model.pt:ply=1'``); any other spec unchanged.

    Raises:
        AgentSpecError, CheckpointError: see :func:`default_model_spec`; a bad spec (:func:`parse_spec`).
    """
    name, options = parse_spec(spec)
    if name.lower() != DEFAULT:
        return spec
    model = default_model_spec()
    model_name, model_options = parse_spec(model)
    merged = {**model_options, **options}
    if not merged:
        return model_name
    return model_name + ":" + ",".join(f"{k}={v}" for k, v in merged.items())


def _export_agent(name: str, options: dict[str, int | str], spec: str) -> Agent:
    """A :class:`bgai.agents.numpy_bot.NumpyAgent` for an exported model (0-ply only; ``bearoff`` as
    :meth:`~bgai.agents.numpy_bot.NumpyAgent.load`)."""
    if options.get("ply", 0) != 0:
        raise AgentSpecError(
            f"exported models play at 0-ply only (agent spec {spec!r}); use the checkpoint (.pt) for ply >= 1"
        )
    if not os.path.isfile(name):
        raise CheckpointError(f"model file {name!r} does not exist (agent spec {spec!r})")

    try:
        return NumpyAgent.load(name, bearoff=options.get("bearoff"))
    except BgaiError as exc:
        raise CheckpointError(f"{name!r} is not a usable bgai export: {exc}") from None
    except Exception as exc:
        raise CheckpointError(
            f"{name!r} is not a bgai export ({type(exc).__name__}); export one with 'bgai export CHECKPOINT --out "
            "MODEL.onnx'"
        ) from None


def _checkpoint_agent(name: str, options: dict[str, int | str], spec: str, given: str | None = None) -> Agent:
    """A :class:`bgai.agents.neural.NeuralAgent` for a checkpoint file (errors short and safe; an option's error
    names ``given``, the spec as the user wrote it, such as ``default:ply=7``, else ``spec``)."""
    if not os.path.exists(name):
        raise CheckpointError(f"checkpoint file {name!r} does not exist (agent spec {spec!r})")
    check_checkpoint_file(name)
    try:
        from bgai.agents.neural import NeuralAgent
    except ImportError as exc:
        raise AgentSpecError(f"checkpoint agents are not available in this build: {exc}") from exc
    try:
        return NeuralAgent.load(name, **options)
    except AgentSpecError as exc:
        if (given or spec) in str(exc):
            raise
        shown = repr(given or spec)
        if given and given != spec:  # 'default' resolved: say what it stood for ($BGAI_MODEL's options included)
            shown += f", that is {spec!r}"
        raise AgentSpecError(f"{exc} (agent spec {shown})") from None
    except Exception as exc:
        raise checkpoint_load_error(name, exc) from None


def _looks_like_path(name: str) -> bool:
    return name.lower().endswith(CHECKPOINT_SUFFIXES) or os.sep in name or "/" in name or os.path.exists(name)


def parse_spec(spec: str) -> tuple[str, dict[str, int | str]]:
    """Split a spec into ``(name or path, options)``.

    Raises:
        AgentSpecError: empty spec, an option that is not ``key=value``, an unknown option (for a built-in bot: one
            not in :data:`BUILTIN_OPTIONS`) or a bad value.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"empty agent spec; valid agents: {valid_specs()}")
    spec = spec.strip()
    name, groups = spec, []
    while True:  # peel ':options' groups off the end: 'm.pt:ply=1:bearoff=db', 'm.pt:ply=1,bearoff=db'
        head, sep, tail = name.rpartition(":")
        # 'm.pt:x', 'default:x', 'random:x': x is a (bad) option, not part of a name
        model_options = not groups and (
            head.lower().endswith(CHECKPOINT_SUFFIXES + EXPORT_SUFFIXES)
            or head.strip().lower() in (DEFAULT, *BUILTINS)
        )
        if not (sep and head and ("=" in tail or not tail or model_options)):
            break
        if not tail.strip():
            raise AgentSpecError(f"empty options after ':' in agent spec {spec!r}: drop the ':' or give key=value")
        name, groups = head, [tail, *groups]
    options: dict[str, int | str] = {}
    builtin = name.strip().lower()
    allowed = BUILTIN_OPTIONS.get(builtin, ())  # a built-in bot takes these options only
    for item in filter(None, (s.strip() for s in ",".join(groups).split(","))):
        key, eq, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq:
            raise AgentSpecError(f"bad option {item!r} in agent spec {spec!r}: expected key=value")
        if key in options:
            raise AgentSpecError(f"option {key!r} given twice in agent spec {spec!r}")
        if builtin in BUILTINS and key not in allowed:
            takes = f"takes only {', '.join(allowed)}" if allowed else "takes no options"
            raise AgentSpecError(f"unknown option {key!r} in agent spec {spec!r}: agent {builtin!r} {takes}")
        if key not in CHECKPOINT_OPTIONS:
            raise AgentSpecError(
                f"unknown option {key!r} in agent spec {spec!r}; valid options: {', '.join(CHECKPOINT_OPTIONS)}"
            )
        try:
            parsed = CHECKPOINT_OPTIONS[key](value)
        except ValueError:
            hint = " (use db or net)" if key == "bearoff" else ""
            raise AgentSpecError(f"bad value {value!r} for option {key!r} in agent spec {spec!r}{hint}") from None
        if key == "ply" and parsed < 0:
            raise AgentSpecError(f"ply must be 0 or more, got {parsed} (agent spec {spec!r})")
        options[key] = parsed
    return name, options


def agent_identity(spec: str) -> dict:
    """What an agent's play depends on, whatever the spelling of its spec: for a model file, its sha256 (the
    file's bytes, so ``model.pt`` and ``/abs/path/model.pt`` are the same agent, a retrained file at the same path
    is not) and the options; for a built-in bot, its name (lower case) and options.  ``default`` is resolved
    first.  Used to key journals (:mod:`bgai.util.journal`).

    Returns:
        ``{'model_sha256': HEX, 'options': {...}}`` or ``{'agent': NAME, 'options': {...}}`` (options by name,
        sorted, values parsed: ``{'bearoff': 'db', 'ply': 1}``).

    Raises:
        AgentSpecError, CheckpointError: a bad spec (:func:`parse_spec`, :func:`resolve_spec`); BgaiError: the
            model file cannot be read.
    """
    name, options = parse_spec(resolve_spec(spec))
    opts = dict(sorted(options.items()))
    sha = None if name.lower() in BUILTINS else spec_file_sha256(name)
    return {"agent": name.lower(), "options": opts} if sha is None else {"model_sha256": sha, "options": opts}


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec.

    Args:
        spec: ``'random'``, ``'pubeval'``, ``'racer'``, ``'blocker'``, ``'gnubg[:ply=N]'``, ``'bgsage[:ply=N]'``,
            ``'default'`` (the shipped model, :func:`default_model_spec`), a checkpoint path with optional ``:ply=N``
            and ``bearoff=db|net`` (``'runs/x/best.pt:ply=1'``, ``'runs/x/best.pt:bearoff=db,ply=1'``), or an
            exported ``model.onnx`` / ``model.npz`` (0-ply; ``bearoff`` too).

    Returns:
        A fresh :class:`~bgai.agents.base.Agent`; its ``spec`` attribute holds the spec string, with
        ``default`` resolved to the model file it stands for.

    Raises:
        AgentSpecError: an unknown name (the message lists the valid ones), options on a built-in bot, bad options,
            gnubg-nn missing for ``'gnubg'`` or its ply out of 0..2, bgsage missing for ``'bgsage'`` or its ply
            out of 0..3, checkpoint support (:mod:`bgai.agents.neural`) missing, a configuration file given as a
            model, ``ply`` > 0 for an exported model, or ``default`` with no model.
        CheckpointError: a model file that does not exist or cannot be loaded (the path is named; one line).
    """
    given, spec = spec, resolve_spec(spec)
    name, options = parse_spec(spec)
    key = name.lower()
    if key in BUILTINS:  # its options were checked against BUILTIN_OPTIONS by parse_spec
        agent = BUILTINS[key](**options)
    elif key.endswith(EXPORT_SUFFIXES):
        agent = _export_agent(name, options, spec)
    elif _looks_like_path(name):
        agent = _checkpoint_agent(name, options, spec, given.strip())
    else:
        raise AgentSpecError(f"unknown agent {spec!r}; valid agents: {valid_specs()}")
    try:
        agent.spec = spec
    except AttributeError:  # pragma: no cover - an agent class with __slots__
        pass
    return agent
