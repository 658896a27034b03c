"""Model bundles: one or more value nets routed by position class, and their files (safe save/load).

A :class:`ModelBundle` is what bgai plays with and what training writes: a list of :class:`BundleNet` (a
:class:`~bgai.model.nets.ValueNet`, its input encoder, the position classes it evaluates and its training record)
and a class rule (:class:`bgai.model.routing.ClassRule`: a named classifier and which net takes each class).  A
bundle of TD self-play has one net for ``'all'`` classes; a bundle may hold one net each for contact, crashed,
race and bear-off positions.  :meth:`ModelBundle.probabilities` evaluates a batch with one network call per net
that has positions in it; finished games are valued exactly (:func:`bgai.core.equity.finished_probabilities`).

A bundle may also give a class to a database instead of a net (:class:`bgai.model.routing.DatabaseEntry`): the
``bearoff`` class to the exact one-sided bear-off database (:mod:`bgai.model.bearoff`), as GNU Backgammon values
bear-offs.  :meth:`ModelBundle.with_bearoff_database` attaches it to any bundle (the net that evaluated bear-offs
keeps its other classes), :meth:`ModelBundle.without_databases` gives the class back to the race net; every agent
built on the bundle (0/1/2-ply search, the analysis API, the servers) then uses the database's probabilities for
bear-offs, and :attr:`ModelBundle.exact_bearoff` says so.

Files
-----
A bundle file (``.pt``; also called a checkpoint) is a ``torch.save`` file holding only tensors and plain Python
values, loaded with ``torch.load(weights_only=True)`` (no code runs on load).  Top-level mapping, format version 2:

==================  ==========================================================================================
``format``          the string ``'bgai-checkpoint'`` (a foreign file lacks it)
``format_version``  :data:`FORMAT_VERSION` (2)
``classifier``      name of the position classifier (:data:`bgai.model.routing.CLASSIFIERS`)
``nets``            list of ``{'name', 'classes', 'spec': NetSpec.to_dict(), 'encoding': {'name', 'version',
                    'size'}, 'state_dict': {name: tensor}, 'record': {...}}`` - the architecture travels with the
                    weights (loaders never take it from flags); ``record`` is the net's training record
                    (``algorithm``, ``games_trained`` or ``samples_trained``, its config sections)
``config``          the run's config as a dict (:class:`bgai.train.config.TrainConfig`)
``games_trained``   training games played (self-play runs; 0 otherwise)
``databases``       (only when the bundle has one) list of ``{'kind': 'bearoff-os', 'classes': ['bearoff'],
                    'version': 1}``: classes valued by a database instead of a net (the database itself is
                    not in the file: bgai builds it, :mod:`bgai.model.bearoff`).  A bgai older than this entry
                    refuses such a file ("no net for the position class(es) bearoff"), never plays it wrongly
``evals``           list of evaluation records (dicts: ``games_trained``, ``opponent``, ``games``, ``ppg`` ...)
``trainer``         (training checkpoints only) the trainer's state (optimiser, generators, games in
                    progress, counters): what ``--resume`` needs
``bgai_version``    the writing bgai's version
==================  ==========================================================================================

Format version 1 (one net: ``net: {'spec', 'state_dict'}`` and ``encoding`` at the top; the shipped
``checkpoints/bgai-td128.pt``) is read and converted in memory to a one-net bundle for ``'all'``.

Loading checks, before building anything: the format and version, each net's size against the limits of
:mod:`bgai.model.nets` (no huge allocation for a file declaring ``hidden=[10**9]``), that every weight is a
finite number (no NaN or infinity), the encodings and the class rule; then that the weights fit the stored
architecture.  Writing serialises the whole file in memory first, then writes it atomically
(:func:`bgai.util.fileio.atomic_write_bytes`: a temporary file in the same folder, ``os.replace``), so a full
disk gives a :class:`~bgai.errors.CheckpointError` naming the file and never a half-written one; a bundle with
non-finite weights is refused.
"""

from __future__ import annotations

import copy
import io
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from bgai import __version__
from bgai.core.equity import finished_or_evaluate, finished_probabilities
from bgai.errors import BgaiError, CheckpointError
from bgai.model import classes
from bgai.model.classes import CLASS_NAMES, CLASS_RACE
from bgai.model.features import Encoder, check_encoding
from bgai.model.files import check_checkpoint_file, checkpoint_load_error
from bgai.model.nets import FastForward, NetSpec, ValueNet
from bgai.model.routing import ALL, DEFAULT_CLASSIFIER, NET_CLASSES, ClassRule, DatabaseEntry, expand_classes
from bgai.util.fileio import atomic_write_bytes

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "BundleNet",
    "ModelBundle",
    "bundle_file",
    "build_checkpoint",
    "save_checkpoint",
    "read_checkpoint",
    "bundle_from_checkpoint",
    "load_bundle",
    "load_model_bundle",
    "load_net",
]

FORMAT = "bgai-checkpoint"
FORMAT_VERSION = 2


@dataclass
class BundleNet:
    """One net of a bundle.

    Attributes:
        name: unique within the bundle (``'all'``, ``'contact'`` ...); names the net's files in exports.
        classes: the position classes it evaluates (``('all',)`` or names of :data:`bgai.model.routing.NET_CLASSES`).
        net: the network.
        encoder: its input encoding.
        record: its training record (plain values: ``algorithm``, ``games_trained`` / ``samples_trained``,
            ``config`` ...).
    """

    name: str
    classes: tuple[str, ...]
    net: ValueNet
    encoder: Encoder
    record: dict = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """``{'name', 'classes', 'spec', 'encoding', 'record'}`` (no weights)."""
        return {
            "name": self.name,
            "classes": list(self.classes),
            "spec": self.net.spec.to_dict(),
            "encoding": self.encoder.describe(),
            "record": copy.deepcopy(self.record),
        }


class ModelBundle:
    """Value nets routed by position class (see the module docstring).

    Args:
        nets: the nets, each for its classes; with ``databases`` they cover every class but ``over`` exactly once.
        classifier: the position classifier's name (:data:`bgai.model.routing.CLASSIFIERS`).
        databases: classes valued by a database instead of a net (:class:`bgai.model.routing.DatabaseEntry`).

    Raises:
        CheckpointError: duplicate net names, a class covered twice or not at all, a net whose input size is
            not its encoder's, or an unknown classifier.
    """

    def __init__(self, nets: list[BundleNet], classifier: str = DEFAULT_CLASSIFIER,
                 databases: tuple[DatabaseEntry, ...] | list[DatabaseEntry] = ()):
        if not nets:
            raise CheckpointError("a model bundle needs at least one net")
        names = [n.name for n in nets]
        if len(set(names)) != len(names):
            raise CheckpointError(f"net names in a bundle must be unique, got {names}")
        for n in nets:
            if n.net.spec.n_inputs != n.encoder.size:
                raise CheckpointError(
                    f"net {n.name!r} takes {n.net.spec.n_inputs} inputs but its encoding has {n.encoder.size}"
                )
        self.nets = list(nets)
        self.databases = tuple(databases)
        self.rule = ClassRule([n.classes for n in nets] + [d.classes for d in self.databases], classifier)
        self._fast: list[FastForward] | None = None
        self._fixed = False  # fix_weights(): the weights no longer change

    @classmethod
    def single(cls, net: ValueNet, encoder: Encoder, record: dict | None = None, name: str = ALL) -> "ModelBundle":
        """A bundle of one net for every class."""
        return cls([BundleNet(name, (ALL,), net, encoder, dict(record or {}))])

    # -- databases --
    @property
    def exact_bearoff(self) -> bool:
        """Whether bear-off positions are valued by the exact bear-off database (not by a net)."""
        return any("bearoff" in d.classes for d in self.databases)

    def with_bearoff_database(self) -> "ModelBundle":
        """This bundle with the ``bearoff`` class valued by the one-sided bear-off database (module docstring).

        The net that evaluated bear-offs keeps its other classes (``['all']`` becomes ``race, crashed,
        contact``); a net that evaluated only bear-offs is left out.  The nets are shared, not copied.  A bundle
        that already has the database is returned as it is.
        """
        if self.exact_bearoff:
            return self
        nets = []
        for n in self.nets:
            classes = expand_classes(list(n.classes))
            if "bearoff" in classes:
                classes = tuple(c for c in classes if c != "bearoff")
                if not classes:
                    continue
                n = BundleNet(n.name, classes, n.net, n.encoder, n.record)
            nets.append(n)
        return ModelBundle(nets, self.classifier, self.databases + (DatabaseEntry(),))

    def without_databases(self) -> "ModelBundle":
        """This bundle with the classes of its databases given back to its nets: to the net that evaluates races
        (the nets are shared, not copied); the bundle itself when it has no database.  A net whose classes are
        then all of them is called ``['all']`` again."""
        if not self.databases:
            return self
        race = int(self.rule.net_of[CLASS_RACE])
        extra = [c for d in self.databases for c in d.classes]
        nets = []
        for k, n in enumerate(self.nets):
            if k == race:
                classes = expand_classes(list(n.classes) + extra)
                classes = (ALL,) if classes == NET_CLASSES else classes
                n = BundleNet(n.name, classes, n.net, n.encoder, n.record)
            nets.append(n)
        return ModelBundle(nets, self.classifier)

    def split_net(self, classes, name: str) -> "ModelBundle":
        """This bundle with ``classes`` given to a new net ``name``: a copy (weights copied, record kept) of the net
        that evaluates them, which keeps its other classes; the start of per-class training (a race net
        warm-started from a TD net for every class: bgsage and wildbg warm-start their phase nets this way).

        Args:
            classes: position class names (:data:`bgai.model.routing.NET_CLASSES`), all evaluated by one net now.
            name: the new net's name, not used in the bundle yet.

        Raises:
            CheckpointError: unknown classes, classes a database or several nets evaluate, a used name, or
                classes that are all of their net's (nothing to split off).
        """
        want = expand_classes(list(classes))
        owners = {int(self.rule.net_of[CLASS_NAMES.index(c)]) for c in want}
        if len(owners) != 1 or next(iter(owners)) >= len(self.nets):
            raise CheckpointError(f"the classes {', '.join(want)} are not all evaluated by one net of the model")
        if name in self.names():
            raise CheckpointError(f"the model already has a net {name!r}")
        k = owners.pop()
        src = self.nets[k]
        rest = tuple(c for c in expand_classes(list(src.classes)) if c not in want)
        if not rest:
            raise CheckpointError(f"the net {src.name!r} evaluates only {', '.join(want)}: nothing to split off")
        record = dict(copy.deepcopy(src.record), split_from=src.name)
        nets = list(self.nets)
        nets[k] = BundleNet(src.name, rest, src.net, src.encoder, src.record)
        nets.insert(k + 1, BundleNet(name, want, copy.deepcopy(src.net), src.encoder, record))
        return ModelBundle(nets, self.classifier, self.databases)

    def rename_net(self, name: str, new: str) -> "ModelBundle":
        """This bundle with the net ``name`` called ``new`` (weights shared, classes kept, record copied with
        ``renamed_from``): e.g. the TD net left with only the ``crashed`` class after ``contact`` and ``race``
        were split off it, named for that class before it is trained on its own.

        Raises:
            CheckpointError: no net ``name``, or ``new`` already used by another net.
        """
        src = self.get(name)
        if new != name and new in self.names():
            raise CheckpointError(f"the model already has a net {new!r}")
        record = dict(copy.deepcopy(src.record), renamed_from=name)
        nets = [BundleNet(new, n.classes, n.net, n.encoder, record) if n is src else n for n in self.nets]
        return ModelBundle(nets, self.classifier, self.databases)

    # -- access --
    @property
    def classifier(self) -> str:
        """The classifier's name."""
        return self.rule.classifier_name

    @property
    def only(self) -> BundleNet:
        """The bundle's net when it has exactly one.

        Raises:
            CheckpointError: the bundle has several nets.
        """
        if len(self.nets) != 1:
            raise CheckpointError(f"the model has {len(self.nets)} nets ({', '.join(self.names())}), not one")
        return self.nets[0]

    def names(self) -> list[str]:
        """The nets' names, in order."""
        return [n.name for n in self.nets]

    def get(self, name: str) -> BundleNet:
        """The net called ``name``.

        Raises:
            CheckpointError: no such net (the message lists the bundle's).
        """
        for n in self.nets:
            if n.name == name:
                return n
        raise CheckpointError(f"the model has no net {name!r}; its nets: {', '.join(self.names())}")

    # -- evaluation --
    def classify(self, boards: np.ndarray) -> np.ndarray:
        """``(N,)`` int8 position classes of ``(N, 2, 25)`` boards (the bundle's classifier)."""
        return self.rule.classify(boards)

    def net_index(self, boards: np.ndarray) -> np.ndarray:
        """``(N,)`` int64: the index of the net that evaluates each board (-1 for finished games, -2 for boards a
        database values)."""
        over, _ = finished_probabilities(boards)
        out = np.full(boards.shape[0], -1, dtype=np.int64)
        for k, idx in self.rule.route(boards, ~over):
            out[idx] = k if k < len(self.nets) else -2
        return out

    def fix_weights(self) -> None:
        """Declare that the nets' weights no longer change in this process (a server): small batches may then take
        the first layer's product with a plain copy of its weights (:class:`bgai.model.nets.FastForward`, the same
        bits, 1.5-3x faster for tens of rows).  Never for a bundle being trained."""
        self._fixed = True
        self._fast = None

    def load_databases(self) -> None:
        """Read the bundle's databases into memory now (building one that is not cached yet), rather than at the
        first position that needs one (:meth:`bgai.model.routing.DatabaseEntry.load`)."""
        for d in self.databases:
            d.load()

    def use_compiled_encoders(self) -> None:
        """Load the compiled kernels of the nets' input encoders now (:mod:`bgai.model.kernels`), for a
        long-running process that encodes few positions per call: a server (about 20 afterstates a request) would
        otherwise run the numpy path for its first :data:`~bgai.model.kernels.WARM_UP_POSITIONS` positions,
        several thousand requests.  Without compiled kernels (numba missing, ``BGAI_NUMBA=0``) nothing changes;
        either way the encodings are bit-identical.  A bundle routed by the classifier
        (:attr:`bgai.model.routing.ClassRule.uses_classifier`) also loads :func:`bgai.model.classes.classify`'s
        kernel (the same classes)."""
        if self.rule.uses_classifier:
            classes.use_compiled()
        one = np.zeros((1, 2, 25), dtype=np.int8)
        one[0, :, 5] = 15
        for n in self.nets:
            n.encoder.encode(one, compiled=True)

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """Outcome probabilities for the side on roll, one network call per net with positions in the batch.

        Args:
            boards: ``(N, 2, 25)`` int8, side on roll in row 0.

        Returns:
            ``(N, 5)`` float64 in :data:`bgai.core.equity.OUTPUTS` order; finished games exact, and the classes
            of the bundle's databases from them.
        """
        if self._fast is None:  # views of the current weights: also right while the nets are trained
            self._fast = [FastForward(n.net, fixed_weights=self._fixed) for n in self.nets]
        return finished_or_evaluate(boards, self._evaluate_live)

    def _evaluate_live(self, boards: np.ndarray) -> np.ndarray:
        """The nets' outputs ``(N, 5)`` for unfinished positions, one call per net with positions in the batch."""
        if self.rule.n_nets == 1:  # the hot path of self-play: no routing
            return self._fast[0](self.nets[0].encoder(boards))
        n_nets = len(self.nets)
        parts = self.rule.route(boards, np.ones(boards.shape[0], dtype=bool))
        if len(parts) == 1 and parts[0][0] < n_nets:  # one net for the whole batch (no bear-off among them)
            k = parts[0][0]
            return self._fast[k](self.nets[k].encoder(boards))
        out = np.empty((boards.shape[0], 5), dtype=np.float64)
        for k, idx in parts:
            sub = boards if idx.size == boards.shape[0] else boards[idx]
            if k < n_nets:
                out[idx] = self._fast[k](self.nets[k].encoder(sub))
            else:
                out[idx] = self.databases[k - n_nets].probabilities(sub, validate=False)
        return out

    def __getstate__(self):  # picklable (evaluation worker processes): the fast views are rebuilt
        state = self.__dict__.copy()
        state["_fast"] = None
        return state

    # -- files --
    def file_entries(self) -> dict[str, Any]:
        """``{'classifier', 'nets': [...]}`` of the file layout (weights copied)."""
        nets = []
        for n in self.nets:
            d = n.describe()
            d["state_dict"] = {k: v.detach().clone() for k, v in n.net.state_dict().items()}
            nets.append(d)
        out = {"classifier": self.classifier, "nets": nets}
        if self.databases:
            out["databases"] = [d.describe() for d in self.databases]
        return out


def bundle_file(
    bundle: ModelBundle,
    *,
    config: dict | None = None,
    games_trained: int = 0,
    evals: list[dict] | None = None,
    trainer: dict | None = None,
    extra: dict | None = None,
) -> dict[str, Any]:
    """The file mapping of ``bundle`` (see the module docstring); ``trainer`` only for training checkpoints,
    ``extra`` for more top-level entries of plain values."""
    ckpt: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        **bundle.file_entries(),
        "config": copy.deepcopy(dict(config or {})),
        "games_trained": int(games_trained),
        "evals": [dict(e) for e in (evals or [])],
        "bgai_version": __version__,
    }
    ckpt.update(extra or {})
    if trainer is not None:
        ckpt["trainer"] = trainer
    return ckpt


def build_checkpoint(
    net: ValueNet,
    encoder: Encoder,
    config: dict,
    games_trained: int,
    evals: list[dict],
    trainer: dict | None = None,
) -> dict[str, Any]:
    """The file mapping of a one-net bundle (``'all'`` classes): :func:`bundle_file` of
    :meth:`ModelBundle.single`."""
    record = {"games_trained": int(games_trained)}
    return bundle_file(
        ModelBundle.single(net, encoder, record), config=config, games_trained=games_trained, evals=evals,
        trainer=trainer,
    )


def _check_finite(ckpt: dict[str, Any], path: str) -> None:
    """Every net weight is a finite float tensor.

    Raises:
        CheckpointError: naming the net and the tensor.
    """
    for entry in ckpt["nets"]:
        state = entry.get("state_dict") if isinstance(entry, dict) else None
        if not isinstance(state, dict):
            raise CheckpointError(f"{path!r}: malformed net entry (no state_dict)")
        for key, t in state.items():
            if not isinstance(t, torch.Tensor) or not t.is_floating_point():
                raise CheckpointError(f"{path!r}: net {entry.get('name')!r} weight {key!r} is not a float tensor")
            if not bool(torch.isfinite(t).all()):
                raise CheckpointError(
                    f"{path!r}: net {entry.get('name')!r} has non-finite weights (NaN or infinity) in {key!r}"
                )


def save_checkpoint(ckpt: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a bundle file mapping to ``path`` atomically: serialised in memory, then
    :func:`bgai.util.fileio.atomic_write_bytes` (temporary file in the same folder, fsync, ``os.replace``; the
    usual file permissions).  The folder is created if needed.

    Raises:
        CheckpointError: non-finite weights (nothing is written), or the file cannot be written (a missing or
            read-only folder, a full disk; the message names the path; an existing file is left as it was).
    """
    path = os.fspath(path)
    if "nets" in ckpt:
        _check_finite(ckpt, path)
    buf = io.BytesIO()
    torch.save(ckpt, buf)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        atomic_write_bytes(path, buf.getbuffer())
    except OSError as exc:
        raise CheckpointError(f"cannot write checkpoint {path!r}: {exc.strerror or exc}") from None
    except BgaiError as exc:
        raise CheckpointError(str(exc)) from None


def _upgrade_v1(ckpt: dict[str, Any], path: str) -> dict[str, Any]:
    """A format-1 mapping (one net at the top) in the format-2 layout, in memory."""
    for key in ("net", "encoding"):
        if key not in ckpt:
            raise CheckpointError(f"{path!r} lacks the {key!r} entry")
    net = ckpt["net"]
    if not isinstance(net, dict):
        raise CheckpointError(f"{path!r}: malformed 'net' entry")
    out = {k: v for k, v in ckpt.items() if k not in ("net", "encoding")}
    out["format_version"] = FORMAT_VERSION
    out["upgraded_from"] = 1
    out["classifier"] = DEFAULT_CLASSIFIER
    record = {"algorithm": "td", "games_trained": ckpt.get("games_trained", 0)}
    out["nets"] = [{
        "name": ALL, "classes": [ALL], "spec": net.get("spec"), "encoding": ckpt["encoding"],
        "state_dict": net.get("state_dict"), "record": record,
    }]
    return out


def _open_torch_file(path: str) -> Any:
    """``torch.load(weights_only=True)`` of a file checked to be an intact zip archive."""
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
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # never quote torch's text: it advises weights_only=False, which runs code
        raise CheckpointError(
            f"checkpoint {path!r} is corrupt or not a bgai checkpoint (torch could not read it)"
        ) from None


def read_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Load and check a bundle file (safe loading: ``weights_only=True``); format 1 is converted to format 2.

    Returns:
        The file mapping in the format-2 layout (module docstring).

    Raises:
        CheckpointError: missing file, a directory, an unreadable file, not a torch file, truncated/corrupt, a
            foreign torch file, a newer format version, missing entries, or non-finite weights.
    """
    path = os.fspath(path)
    ckpt = _open_torch_file(path)
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise CheckpointError(f"{path!r} is a torch file but not a bgai checkpoint (no 'format': {FORMAT!r})")
    version = ckpt.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        raise CheckpointError(f"{path!r} has checkpoint format version {version!r}; this bgai reads 1..{FORMAT_VERSION}")
    if version == 1:
        ckpt = _upgrade_v1(ckpt, path)
    for key in ("nets", "config", "games_trained"):
        if key not in ckpt:
            raise CheckpointError(f"{path!r} lacks the {key!r} entry")
    if not isinstance(ckpt["nets"], list) or not ckpt["nets"]:
        raise CheckpointError(f"{path!r}: 'nets' must be a non-empty list")
    _check_finite(ckpt, path)
    return ckpt


def _load_error_detail(exc: BaseException, limit: int = 240) -> str:
    """The first specific line of torch's ``load_state_dict`` error, one line of at most ``limit`` characters.

    torch's message starts with the header ``Error(s) in loading state_dict for ValueNet:`` and lists the
    mismatches on the following lines (``size mismatch for body.0.weight: copying a param with shape ...``); the
    header alone says nothing, so the first mismatch is kept and the number of further ones is added.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if len(lines) > 1 and lines[0].startswith("Error(s) in loading"):
        lines = lines[1:]
    detail = lines[0].rstrip(".") if len(lines[0]) <= limit else lines[0][: limit - 3] + "..."
    more = sum(line.count("size mismatch for") for line in lines[1:]) or len(lines) - 1
    return detail + (f"; {more} more" if more else "")


def _build_net(entry: dict[str, Any], path: str) -> BundleNet:
    """One :class:`BundleNet` from its file entry: sizes, encoding and classes checked before building."""
    try:
        name, classes, spec_d, enc_d = entry["name"], entry["classes"], entry["spec"], entry["encoding"]
        state = entry["state_dict"]
    except (KeyError, TypeError) as exc:
        raise CheckpointError(f"{path!r}: malformed net entry (missing {exc})") from None
    spec = NetSpec.from_dict(spec_d)  # size limits checked here, before any allocation
    encoder = check_encoding(enc_d)
    expand_classes(classes)
    if spec.n_inputs != encoder.size:
        raise CheckpointError(f"{path!r}: network takes {spec.n_inputs} inputs but encoding has {encoder.size}")
    net = ValueNet(spec)
    try:
        net.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{path!r}: the {name!r} net's weights do not fit its sizes "
                              f"({_load_error_detail(exc)})"
                              ) from None
    net.eval()
    record = entry.get("record") if isinstance(entry.get("record"), dict) else {}
    return BundleNet(str(name), tuple(str(c) for c in classes), net, encoder, dict(record))


def bundle_from_checkpoint(ckpt: dict[str, Any], path: str = "checkpoint") -> ModelBundle:
    """Build the bundle of a :func:`read_checkpoint` mapping (architectures from the file, weights loaded).

    Raises:
        CheckpointError: a net above the size limits, an unknown encoding or class, an architecture/weights
            mismatch, an incomplete class rule or an unknown classifier.
    """
    nets = [_build_net(e, path) for e in ckpt["nets"]]
    entries = ckpt.get("databases", [])
    if not isinstance(entries, list):
        raise CheckpointError(f"{path!r}: 'databases' must be a list")
    try:
        databases = [DatabaseEntry.from_dict(e) for e in entries]
        return ModelBundle(nets, ckpt.get("classifier", DEFAULT_CLASSIFIER), databases)
    except CheckpointError as exc:
        raise CheckpointError(f"{path!r}: {exc}") from None


def load_bundle(path: str | os.PathLike) -> tuple[ModelBundle, dict[str, Any]]:
    """:func:`read_checkpoint` + :func:`bundle_from_checkpoint`: ``(bundle, file mapping)``."""
    ckpt = read_checkpoint(path)
    return bundle_from_checkpoint(ckpt, os.fspath(path)), ckpt


def load_net(path: str | os.PathLike) -> tuple[ValueNet, Encoder, dict[str, Any]]:
    """The one net of a bundle file: ``(net, encoder, file mapping)``.

    Raises:
        CheckpointError: as :func:`load_bundle`, or a bundle of several nets.
    """
    bundle, ckpt = load_bundle(path)
    only = bundle.only
    return only.net, only.encoder, ckpt


def load_model_bundle(path: str) -> tuple[ModelBundle, dict[str, Any]]:
    """:func:`load_bundle` behind :func:`~bgai.model.files.check_checkpoint_file` and
    :func:`~bgai.model.files.checkpoint_load_error`: ``(bundle, file mapping)``, every failure one short line.

    Raises:
        CheckpointError, AgentSpecError: as :func:`~bgai.model.files.check_checkpoint_file`; any load failure.
    """
    check_checkpoint_file(path)
    try:
        return load_bundle(path)
    except BgaiError as exc:
        raise checkpoint_load_error(path, exc) from None
    except Exception as exc:  # torch's unpickler raises many kinds (IndexError, UnpicklingError, ...)
        raise checkpoint_load_error(path, exc) from None
