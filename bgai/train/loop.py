"""The run loop: one training run of any algorithm (:class:`bgai.train.trainer.Trainer`), in a run folder.

:func:`run_training` owns what every algorithm shares: the run folder and its lock, resuming, tensorboard and
JSON-lines logs, the progress bar, Ctrl-C / SIGTERM, checkpoint timing and the evaluations.  The algorithm only
steps (:mod:`bgai.train.td`, :mod:`bgai.train.supervised`); :mod:`bgai.train.run` picks it from the config.

Run folder ``OUT`` (e.g. ``runs/quick``):

* ``last.pt`` - the latest *training* checkpoint (model bundle + the trainer's state), written every
  ``run.checkpoint_every`` units, at the end, and when the run is interrupted: what ``--resume`` continues from,
  exactly.  A write that fails (a full disk) stops the run with a one-line error; the previous ``last.pt`` stays.
* ``best.pt`` - a *model* file (no trainer state) of the best evaluation so far.
* ``snapshots/model-N.pt`` - a model file at every evaluation: the evaluation plays **this file**, loaded back
  (so what is evaluated is what was written).
* ``evals.jsonl`` - one JSON line per evaluation (``games_trained`` or ``samples_trained``, ``ppg``, ``ci95`` ...).
* ``log.jsonl`` - one JSON line per log interval with the scalars also sent to tensorboard.
* ``config.yaml`` - the run's resolved config (written atomically); tensorboard event files: ``charts/`` (units/s
  and the algorithm's charts), ``losses/``, ``eval/`` (ppg against pubeval with its 95% confidence interval).

A log that cannot be written (tensorboard's event file, ``log.jsonl``, ``evals.jsonl``) is switched off with one
warning line and training goes on; tensorboard's background writer thread is kept from printing a traceback.
At start and on resume, temporary files of this run folder left by a killed write (``.last.pt.<hex>.tmp`` ...,
:data:`bgai.util.fileio.TEMP_NAME`) are removed; nothing else is touched.

Evaluation (every ``run.eval_every`` units and at the end): ``run.eval_games`` duplicate-dice games at 0-ply
against pubeval (:func:`bgai.evaluate.series.evaluate`), the same dice series every time.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field, fields
from typing import Callable, Iterator

import yaml

from bgai.agents.neural import NeuralAgent
from bgai.errors import BgaiError, CheckpointError, ConfigError
from bgai.evaluate.series import evaluate, interval_text
from bgai.model.bundle import (
    ModelBundle,
    bundle_file,
    bundle_from_checkpoint,
    load_bundle,
    read_checkpoint,
    save_checkpoint,
)
from bgai.train.config import ModelConfig, TrainConfig, config_from_checkpoint
from bgai.train.trainer import Trainer
from bgai.util import ray_backend
from bgai.util.fileio import atomic_write_bytes, ensure_directory, stale_temps

__all__ = [
    "RunResult",
    "RunFolder",
    "RunFolderError",
    "TrainerFactory",
    "lock_run_folder",
    "resumed_config",
    "evaluate_bundle",
    "run_training",
]

#: Builds an algorithm's trainer: ``(config, bundle or None, trainer state or None) -> Trainer``; with a state it
#: checks it can continue before starting any process, and loads it.
TrainerFactory = Callable[[TrainConfig, "ModelBundle | None", "dict | None"], Trainer]

#: Model files the run folder holds; their stale temporaries are removed at start.
SNAPSHOT_NAME = re.compile(r"^model-\d+\.pt$")


class RunFolderError(BgaiError):
    """A file of the run folder could not be written during training; the message says what is kept."""


@dataclass
class RunResult:
    """What a run did.

    Attributes:
        games: the trainer's counter at the end (games for ``td``, samples for ``supervised``; see ``unit``).
        interrupted: stopped by Ctrl-C / SIGTERM (a checkpoint was written).
        evals: every evaluation record of the run (also those before a resume).
        last_path, best_path: the checkpoint files (``best_path`` None without an evaluation).
        seconds: this session's wall time.
        unit: ``'game'`` or ``'sample'``.
        session: units done in this session (after a resume: only those since).
        resumed_from: the counter this session started at (0 for a new run).
    """

    games: int
    interrupted: bool
    evals: list[dict] = field(default_factory=list)
    last_path: str = ""
    best_path: str | None = None
    seconds: float = 0.0
    unit: str = "game"
    session: int = 0
    resumed_from: int = 0


def lock_run_folder(out_dir: str):
    """Hold an exclusive lock on ``out_dir/.lock`` (``fcntl.flock``, released when the returned file is closed or
    the process ends), so that two runs cannot write one run folder; ``None`` where ``fcntl`` is missing.

    Raises:
        ConfigError: another process holds the folder.
        BgaiError: the lock file cannot be created.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    try:
        fh = open(os.path.join(out_dir, ".lock"), "a+", encoding="utf-8")
    except OSError as exc:
        raise BgaiError(f"cannot write in run folder {out_dir!r}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise ConfigError(f"run folder {out_dir!r} is in use by another 'bgai train'; wait for it or use another --out")
    return fh


class RunFolder:
    """The files of a run folder (module docstring), its lock, and the clean-up of stale temporaries."""

    def __init__(self, path: str):
        self.path = os.fspath(path)
        self.last = os.path.join(self.path, "last.pt")
        self.best = os.path.join(self.path, "best.pt")
        self.config_yaml = os.path.join(self.path, "config.yaml")
        self.evals_jsonl = os.path.join(self.path, "evals.jsonl")
        self.log_jsonl = os.path.join(self.path, "log.jsonl")
        self.snapshots = os.path.join(self.path, "snapshots")
        self._lock = None
        self._created: str | None = None  # the topmost folder open() created (None: the run folder existed)
        self._lock_created = False  # open() created .lock

    def snapshot(self, done: int) -> str:
        """``snapshots/model-DONE.pt``."""
        return os.path.join(self.snapshots, f"model-{done:09d}.pt")

    def open(self, *, new_run: bool) -> list[str]:
        """Create the folder if needed, lock it and remove stale temporaries; returns the paths removed.

        Raises:
            ConfigError: ``new_run`` and the folder already holds a run; the folder is in use.
            BgaiError: the folder cannot be created or written.
        """
        if new_run and os.path.exists(self.last):
            raise ConfigError(f"{self.path!r} already holds a run (last.pt); use --resume or another --out")
        missing = self.path
        while missing and not os.path.exists(os.path.dirname(missing) or "."):
            missing = os.path.dirname(missing)  # the topmost folder that ensure_directory creates
        self._created = None if os.path.exists(self.path) else missing
        self._lock_created = not os.path.exists(os.path.join(self.path, ".lock"))
        ensure_directory(self.path, "run folder")
        try:
            self._lock = lock_run_folder(self.path)
        except BaseException:
            self._lock_created = False  # .lock is another run's (in use) or was not made
            self.discard()
            raise
        if new_run and os.path.exists(self.last):  # another run started there since the check above
            self.close()
            raise ConfigError(f"{self.path!r} already holds a run (last.pt); use --resume or another --out")
        return self.remove_stale_temps()

    def remove_stale_temps(self) -> list[str]:
        """Remove temporaries of this folder's own files left by a killed write (call with the lock held)."""
        ours = {"last.pt", "best.pt", "config.yaml"}
        stale = stale_temps(self.path, ours.__contains__) + stale_temps(self.snapshots, SNAPSHOT_NAME.match)
        removed = []
        for path in stale:
            try:
                os.unlink(path)
                removed.append(path)
            except OSError:
                pass
        return removed

    def write_config(self, config: TrainConfig) -> None:
        """``config.yaml``, atomically.

        Raises:
            BgaiError: it cannot be written (nothing half-written is left).
        """
        text = yaml.safe_dump(config.to_dict(), sort_keys=False)
        atomic_write_bytes(self.config_yaml, text.encode("utf-8"))

    def discard(self) -> None:
        """Undo :meth:`open` for a run that did not start: release the lock, remove ``.lock`` if :meth:`open`
        created it, and the folders it created (with their parents up to the first that existed) if they are
        empty; never removes anything else."""
        self.close()
        if self._lock_created:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.path, ".lock"))
        top = self._created
        if top is None:
            return
        path = os.path.normpath(self.path)
        while True:
            try:
                os.rmdir(path)
            except OSError:  # not empty (something else was written there) or gone
                return
            if os.path.abspath(path) == os.path.abspath(top):
                return
            path = os.path.dirname(path)

    def close(self) -> None:
        """Release the lock (idempotent)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None


# --- logs ---------------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _quiet_tensorboard_threads() -> Iterator[None]:
    """While active, an exception in tensorboard's background event-writer thread prints nothing (the main
    thread's next call raises it, and :class:`Logs` turns that into one warning); other threads as before."""
    previous = threading.excepthook

    def hook(args) -> None:
        if type(args.thread).__name__ == "_AsyncWriterThread":  # tensorboard.summary.writer.event_file_writer
            return
        previous(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous


def _reason(exc: BaseException) -> str:
    """A short reason: the OS's error text, else the first line of the message, else the exception's type."""
    text = getattr(exc, "strerror", None) or (str(exc).strip().splitlines()[0] if str(exc).strip() else "")
    return text or type(exc).__name__


class Logs:
    """Tensorboard and ``log.jsonl`` scalar logs and the ``evals.jsonl`` records; a log that fails is switched
    off with one warning (``warn``) and the run goes on."""

    def __init__(self, folder: RunFolder, tensorboard: bool, warn: Callable[[str], None]):
        self.folder = folder
        self.warn = warn
        self.writer = None
        self.off: set[str] = set()
        self._quiet = _quiet_tensorboard_threads()
        self._quiet.__enter__()
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.writer = SummaryWriter(folder.path)
            except Exception as exc:  # noqa: BLE001 - any failure of an optional log
                self._failed("tensorboard", folder.path, exc)

    def _failed(self, kind: str, path: str, exc: BaseException) -> None:
        if kind == "tensorboard":
            self.writer = None
        if kind not in self.off:
            self.off.add(kind)
            self.warn(f"bgai train: warning: {kind} logs stopped, cannot write {path!r}: {_reason(exc)}; "
                      "training goes on")

    def _append(self, kind: str, path: str, record: dict) -> None:
        if kind in self.off:
            return
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        except OSError as exc:
            self._failed(kind, path, exc)

    def scalars(self, step: int, values: dict[str, float], record: dict) -> None:
        """Send ``values`` (tag -> number) to tensorboard at ``step`` and ``record`` + values to ``log.jsonl``."""
        if self.writer is not None:
            try:
                for tag, v in values.items():
                    self.writer.add_scalar(tag, v, step)
                self.writer.flush()
            except Exception as exc:  # noqa: BLE001 - the event writer raises what its thread met
                self._failed("tensorboard", self.folder.path, exc)
        self._append("log.jsonl", self.folder.log_jsonl, {**record, **values})

    def evaluation(self, record: dict) -> None:
        """Append an evaluation record to ``evals.jsonl``."""
        self._append("evals.jsonl", self.folder.evals_jsonl, record)

    def close(self) -> None:
        """Close the tensorboard writer (its failures are warnings too)."""
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception as exc:  # noqa: BLE001
                self._failed("tensorboard", self.folder.path, exc)
            self.writer = None
        self._quiet.__exit__(None, None, None)


# --- console ------------------------------------------------------------------------------------------------------

#: tqdm's bar without its own rate (the one rate shown is bgai's, in the postfix).
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]"


def eval_line(record: dict, unit: str) -> str:
    """``after 20000 games: +0.123 +- 0.050 ppg against pubeval (1000 duplicate-dice games)``."""
    done = record.get(f"{unit}s_trained", 0)
    ci95 = record.get("ci95")
    return (f"after {done} {unit}s: {record['ppg']:+.3f} {interval_text(ci95)} ppg against "
            f"{record['opponent']} ({record['games']} duplicate-dice games)")


class Console:
    """The progress bar (tqdm on stderr, one rate: this session's units/s without evaluation time) and the
    evaluation lines (``lines``, e.g. ``print``; also without a bar)."""

    def __init__(self, progress: bool, trainer: Trainer, lines: Callable[[str], None] | None):
        self.lines = lines
        self.unit = trainer.unit
        self.bar = None
        self.rate = ""
        self.last_eval = ""
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=trainer.total, initial=min(trainer.done, trainer.total), unit=trainer.unit,
                            dynamic_ncols=True, bar_format=BAR_FORMAT)

    def advance(self, done: int, rate: float | None) -> None:
        if self.bar is None:
            return
        if rate is not None:
            self.rate = f"{rate:.0f} {self.unit}s/s"
        self.bar.set_postfix_str(", ".join(t for t in (self.rate, self.last_eval) if t), refresh=False)
        self.bar.update(min(done, self.bar.total) - self.bar.n)

    def evaluation(self, record: dict, done: int) -> None:
        self.last_eval = f"vs {record['opponent']} {record['ppg']:+.3f} {interval_text(record.get('ci95'))} @ {done}"
        if self.bar is not None:
            self.bar.set_postfix_str(", ".join(t for t in (self.rate, self.last_eval) if t))
        if self.lines is not None:
            self.say(eval_line(record, self.unit))

    def say(self, text: str) -> None:
        if self.lines is None:
            return
        if self.bar is not None:
            self.bar.clear()
        self.lines(text)
        if self.bar is not None:
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


# --- the loop -----------------------------------------------------------------------------------------------------

class _Every:
    """Multiples of ``every`` passed by a counter (``every`` 0: never)."""

    def __init__(self, every: int, done: int):
        self.every = int(every)
        self.next = (done // every + 1) * every if every else math.inf

    def due(self, done: int) -> bool:
        if done < self.next:
            return False
        self.next = (done // self.every + 1) * self.every
        return True


class _StopFlag:
    """Turns SIGINT/SIGTERM into a flag checked between steps (so the state on disk is always consistent)."""

    def __init__(self) -> None:
        self.stop = False
        self._old: dict[int, object] = {}

    def __enter__(self) -> "_StopFlag":
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[sig] = signal.signal(sig, self._handler)
            except ValueError:  # not the main thread
                pass
        return self

    def _handler(self, signum, frame) -> None:
        if self.stop:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.stop = True

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def evaluate_bundle(bundle: ModelBundle, games: int, seed: int, workers: int = 1, backend: str = "local") -> dict:
    """Duplicate-dice evaluation of a bundle at 0-ply against pubeval (``backend``: of
    :func:`bgai.util.parallel.run_units`, ``'ray'`` for ``run.ray``).

    Returns:
        ``{'opponent', 'games', 'ppg', 'ci95', 'win', 'gammon', 'seconds'}``.
    """
    rep = evaluate(NeuralAgent(bundle, ply=0, name="bgai"), "pubeval", games, seed, workers=workers, backend=backend)
    return {
        "opponent": "pubeval",
        "games": int(rep.games),
        "ppg": float(rep.ppg),
        "ci95": float(rep.ci95),
        "win": float(rep.a.win),
        "gammon": float(rep.a.gammon),
        "seconds": float(rep.seconds),
    }


class RunLoop:
    """Steps a trainer to the end, with logs, evaluations and checkpoints at their intervals."""

    def __init__(self, trainer: Trainer, config: TrainConfig, folder: RunFolder, evals: list[dict], logs: Logs,
                 console: Console, *, evaluate: bool, on_step: Callable[[Trainer], None] | None):
        self.trainer, self.config, self.folder = trainer, config, folder
        self.evals, self.logs, self.console = evals, logs, console
        self.evaluate, self.on_step = evaluate, on_step
        self.key = f"{trainer.unit}s_trained"
        run = config.run
        self.start = trainer.done
        self.log_at = _Every(run.log_every, trainer.done)
        self.eval_at = _Every(run.eval_every, trainer.done)
        self.ckpt_at = _Every(run.checkpoint_every, trainer.done)
        self.best_ppg = max((e["ppg"] for e in evals), default=-math.inf)
        self.saved_done: int | None = trainer.done if os.path.exists(folder.last) else None
        self.window = {"t0": time.perf_counter(), "done0": trainer.done, "sums": {}}
        self.busy = 0.0  # seconds of this session spent evaluating (not counted in the rate)
        self.t_start = time.perf_counter()

    # -- files --
    def _file(self, bundle: ModelBundle, with_trainer: bool) -> dict:
        t = self.trainer
        counters = t.counters()
        return bundle_file(bundle, config=self.config.to_dict(), games_trained=counters.get("games_trained", 0),
                           evals=self.evals, trainer=t.state_dict() if with_trainer else None,
                           extra={**counters, "algorithm": t.algorithm})

    def _write(self, ckpt: dict, path: str) -> None:
        try:
            save_checkpoint(ckpt, path)
        except BgaiError as exc:
            if self.saved_done is not None:
                kept = (f"the last checkpoint {self.folder.last} ({self.saved_done} {self.trainer.unit}s) is "
                        f"intact: continue with: bgai train --out {self.folder.path} --resume")
            else:
                kept = "no checkpoint had been written yet"
            raise RunFolderError(f"{exc}; training stopped, {kept}") from None

    def save_last(self) -> None:
        """``last.pt`` with the trainer's state."""
        self._write(self._file(self.trainer.bundle(), True), self.folder.last)
        self.saved_done = self.trainer.done

    # -- steps --
    def run(self) -> RunResult:
        interrupted = False
        with _StopFlag() as flag:
            while not self.trainer.finished():
                if flag.stop:
                    interrupted = True
                    break
                self._step()
            done = self.trainer.done
            if not interrupted and self.evaluate and (not self.evals or self.evals[-1].get(self.key) != done):
                self._evaluation()
            self.save_last()
        return RunResult(
            games=self.trainer.done, interrupted=interrupted, evals=self.evals, last_path=self.folder.last,
            best_path=self.folder.best if os.path.exists(self.folder.best) else None,
            seconds=time.perf_counter() - self.t_start, unit=self.trainer.unit,
            session=self.trainer.done - self.start, resumed_from=self.start,
        )

    def _step(self) -> None:
        t = self.trainer
        res = t.step()
        if self.on_step is not None:
            self.on_step(t)
        sums = self.window["sums"]
        sums[f"{t.unit}s"] = sums.get(f"{t.unit}s", 0.0) + res.units
        for k, v in res.sums.items():
            sums[k] = sums.get(k, 0.0) + v
        done = t.done
        if self.log_at.due(done):
            self._log(done)
        if res.units:
            self.console.advance(done, self._session_rate())
        if self.evaluate and not t.finished() and self.eval_at.due(done):
            self._evaluation()
        if self.ckpt_at.due(done):
            self.save_last()

    def _session_rate(self) -> float | None:
        seconds = time.perf_counter() - self.t_start - self.busy
        return (self.trainer.done - self.start) / seconds if seconds > 1.0 else None

    def _log(self, done: int) -> None:
        now = time.perf_counter()
        w = self.window
        rate = (done - w["done0"]) / max(now - w["t0"], 1e-9)
        values = {f"charts/{self.trainer.unit}s_per_s": rate, **self.trainer.scalars(w["sums"])}
        self.logs.scalars(done, values, {self.key: done, "seconds": round(now - self.t_start, 3)})
        self.window = {"t0": now, "done0": done, "sums": {}}

    def _evaluation(self) -> None:
        """Write a snapshot, load it back, evaluate what was loaded; best.pt, logs and console."""
        t0 = time.perf_counter()
        t, run = self.trainer, self.config.run
        done = t.done
        path = self.folder.snapshot(done)
        self._write(self._file(t.bundle(), False), path)
        bundle, _ = load_bundle(path)
        backend, workers = "local", 1
        if run.ray:
            ray_backend.connect(run.ray)
            backend, workers = "ray", max(1, ray_backend.cluster_cpus())
        record = {self.key: done, **evaluate_bundle(bundle, run.eval_games, run.eval_seed, workers, backend)}
        self.evals.append(record)
        self.logs.evaluation(record)
        self.logs.scalars(done, {
            "eval/ppg_vs_pubeval": record["ppg"],
            "eval/ppg_ci95_low": record["ppg"] - record["ci95"],
            "eval/ppg_ci95_high": record["ppg"] + record["ci95"],
            "eval/win_rate": record["win"],
        }, {self.key: done, "evaluation": True})
        self.console.evaluation(record, done)
        if record["ppg"] > self.best_ppg:
            self.best_ppg = record["ppg"]
            self._write(self._file(bundle, False), self.folder.best)
        spent = time.perf_counter() - t0
        self.busy += spent
        self.window["t0"] += spent  # the log window's rate leaves the evaluation out too


def resumed_config(ckpt: dict, overrides: dict | None) -> TrainConfig:
    """The config a resumed run continues with: the checkpoint's, with ``overrides`` (plain or dotted keys).

    Raises:
        ConfigError: a bad override, or one that changes the model section (the checkpoint's network keeps
            its encoding and architecture).
        CheckpointError: the stored config is not valid.
    """
    saved = config_from_checkpoint(ckpt["config"])
    config = saved.with_overrides(overrides or {})
    for f in fields(ModelConfig):
        if getattr(config.model, f.name) != getattr(saved.model, f.name):
            raise ConfigError(
                f"config key {f.name!r} cannot change on --resume (the checkpoint's network has "
                f"{getattr(saved.model, f.name)!r}); start a new run to change it"
            )
    return config


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def run_training(
    config: TrainConfig | None,
    out_dir: str,
    make_trainer: TrainerFactory,
    *,
    resume: bool = False,
    overrides: dict | None = None,
    progress: bool = True,
    tensorboard: bool = True,
    evaluate: bool = True,
    on_step: Callable[[Trainer], None] | None = None,
    lines: Callable[[str], None] | None = None,
    warn: Callable[[str], None] = _stderr,
) -> RunResult:
    """Train (or resume) a run into ``out_dir`` until the trainer is finished (see the module docstring).

    Args:
        config: the run's config (ignored with ``resume``, which takes the checkpoint's).
        out_dir: run folder.
        make_trainer: the algorithm's :data:`TrainerFactory`.
        resume: continue from ``out_dir/last.pt``.
        overrides: with ``resume``: config keys to change (e.g. ``{'games': 2_000_000}`` to extend a run).
        progress: tqdm progress bar on stderr.
        tensorboard: write tensorboard logs.
        evaluate: run the evaluations against pubeval (tests switch them off).
        on_step: called after every step (tests).
        lines: where evaluation lines go (e.g. ``print``; None: nowhere).
        warn: where warnings go (default: stderr).

    Raises:
        CheckpointError: ``resume`` without a readable ``last.pt`` or without a training state, or with one that
            cannot continue with the config.
        ConfigError: bad overrides, or an override of the model section on ``resume``; a folder in use.
        BgaiError: the run folder cannot be created or written before training.
        RunFolderError: a checkpoint could not be written during training (the last one written stays).
        SelfPlayWorkerError: a self-play worker process failed (the last checkpoint written stays on disk).
    """
    folder = RunFolder(out_dir)
    bundle = state = None
    evals: list[dict] = []
    if resume:
        ckpt = read_checkpoint(folder.last)
        if "trainer" not in ckpt:
            raise CheckpointError(f"{folder.last!r} is a model checkpoint without training state; cannot resume")
        config = resumed_config(ckpt, overrides)
        bundle, state = bundle_from_checkpoint(ckpt, folder.last), ckpt["trainer"]
        evals = list(ckpt.get("evals", []))
    elif config is None:
        raise ConfigError("a config is needed to start a run")
    if evaluate and config.run.ray:  # join the cluster of the evaluations now: a bad address fails before the run
        ray_backend.connect(config.run.ray)
    folder.open(new_run=not resume)
    trainer = None
    try:
        try:
            trainer = make_trainer(config, bundle, state)
        except BaseException:  # the run never started: leave no folder (or the folder as it was)
            folder.discard()
            raise
        folder.write_config(config)
        logs = Logs(folder, tensorboard, warn)
        console = Console(progress, trainer, lines)
        try:
            return RunLoop(trainer, config, folder, evals, logs, console, evaluate=evaluate, on_step=on_step).run()
        finally:
            console.close()
            logs.close()
    finally:
        if trainer is not None:
            trainer.close()  # stop worker processes
        folder.close()  # releases the run folder
