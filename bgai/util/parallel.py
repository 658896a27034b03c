"""Parallel work units: a job cut into units that are pure functions of their arguments, run in worker processes.

The contract.  A job is ``fn(context, unit) -> result`` for each ``unit`` of a list, where ``context =
setup(*setup_args)`` is built once per worker (e.g. the two agents of a series, from their spec strings) and
``unit`` is a small picklable value (e.g. ``(seed, unit index)``).  ``fn`` must be a pure function of
``(setup_args, unit)``: no state carried from one unit to the next, randomness seeded from the unit.  Then the
results are the same for any number of workers, any order of completion and any backend.  ``fn`` and ``setup``
must be module-level functions (they are sent to the workers by reference).

Backends (``backend=``): ``'local'`` (the default): ``workers == 1`` runs the units one after the other in this
process (with ``context`` if given, else ``setup(*setup_args)``; torch and BLAS single-threaded meanwhile,
:func:`bgai.util.threads.single_thread`); ``workers > 1`` runs them in worker processes,
each running ``setup`` once (then torch and BLAS limited to one thread, :func:`bgai.util.threads.limit_threads`) and
then one unit at a time as the parent hands them out over a pipe. The workers are forked where that is safe
(:func:`start_method`: POSIX, torch not loaded, no other thread running), which saves each one Python's start-up and
the imports (about 0.4 CPU s a worker); otherwise they are ``spawn``-started, and load the compiled kernels in use
in the parent (:func:`bgai.util.jit.loaded_kernels`) before ``setup``, as a fork inherits them. The parent's objects
are frozen for the garbage collector while it forks (:func:`gc.freeze`, as Python's documentation advises), so that
a worker's collections never walk the objects it inherited: a full collection over them copied each page it touched
(about 0.08 CPU s and 6,000 page faults per worker, in a series of pubeval games). A worker that dies (killed, out
of memory) is reported as :class:`WorkerDied`, never waited for. Other backends (a Ray cluster: one actor per worker
holding the context, a task per unit) plug in behind the same :func:`run_units` call by registering a function with
:func:`register_backend`.

Interruption.  Ctrl-C (SIGINT, sent by a terminal to the whole process group) and SIGTERM (sent to this process
or its group) stop a run in the main thread cleanly: the units not finished are dropped, the worker processes are
stopped and joined, and :func:`run_units` returns the units that did finish, with :attr:`UnitRun.interrupted`
naming the signal.  Workers ignore SIGINT (their parent decides) and die on SIGTERM (which is how they are
stopped); parent and workers share no semaphores, so neither a traceback nor a ``leaked semaphore`` warning is
printed.  A caller with its own SIGINT/SIGTERM handlers (the trainer's stop flag) keeps them: the run then goes
on through the signal, and a KeyboardInterrupt its handler raises propagates (after the workers are stopped).
"""

from __future__ import annotations

import gc
import math
import multiprocessing as mp
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import connection as mp_connection
from typing import Any, Callable, Iterator, Sequence

from bgai.errors import BgaiError
from bgai.util.jit import load_kernels, loaded_kernels
from bgai.util.threads import limit_threads, single_thread

__all__ = ["UnitRun", "WorkerDied", "run_units", "unit_size", "register_backend", "BACKENDS", "start_method"]

Fn = Callable[[Any, Any], Any]
OnResult = Callable[[int, Any], None]
Progress = Callable[[int, int], None]


@dataclass
class UnitRun:
    """What :func:`run_units` did.

    Attributes:
        results: unit index (position in ``units``) -> result, for the units that finished.
        total: number of units asked for.
        workers: workers used (at most one per unit).
        interrupted: ``None``, or the name of the signal that stopped the run (``'SIGINT'``, ``'SIGTERM'``).
    """

    results: dict[int, Any] = field(default_factory=dict)
    total: int = 0
    workers: int = 1
    interrupted: str | None = None

    @property
    def complete(self) -> bool:
        """Every unit finished."""
        return len(self.results) == self.total

    def ordered(self) -> list[Any]:
        """The finished units' results in unit order (all of them when :attr:`complete`)."""
        return [self.results[i] for i in sorted(self.results)]


def unit_size(count: int, *, smallest: int, largest: int, target_units: int = 16, even: bool = True) -> int:
    """Items (games, matches) per work unit for a job of ``count`` items, independent of the number of workers.

    ``ceil(count / target_units)`` (so that up to ``target_units`` workers have work), but at least ``smallest``
    (below it the batch plays too slowly per item) and at most ``largest``, never more than ``count``; then
    rounded up to an even number when ``even`` (so that duplicate pairs are never split).  Results of a job
    that is cut this way depend on ``count`` and on the bounds, never on the workers.

    Raises:
        BgaiError: ``count`` < 1, ``smallest`` < 1 or ``largest`` < ``smallest``.
    """
    if count < 1 or smallest < 1 or largest < smallest:
        raise BgaiError(f"bad work-unit sizing: count {count}, smallest {smallest}, largest {largest}")
    size = min(max(math.ceil(count / target_units), smallest), largest, count)
    return size + (size % 2) if even else size


# --- signals ---------------------------------------------------------------------------------------------------

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Stop(KeyboardInterrupt):
    """Raised in the main thread by SIGINT/SIGTERM while units run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stop(signum, frame) -> None:
    raise _Stop(signum)


@contextmanager
def _stop_on_signals() -> Iterator[tuple[set[int], list[int]]]:
    """SIGINT and SIGTERM raise :class:`_Stop` in the main thread while the block runs, where they are at their
    defaults (Python's KeyboardInterrupt, termination).  A caller that handles them itself (the trainer turns
    them into a flag checked between steps) keeps its handlers.  Yields the signals taken over and the list of
    those received (a library between the handler and :func:`run_units`, such as Ray's waits, may turn the
    :class:`_Stop` into a plain KeyboardInterrupt: the list still names the signal)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield set(), received
        return

    def stop(signum, frame) -> None:
        received.append(signum)
        _raise_stop(signum, frame)

    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    old = {s: signal.signal(s, stop) for s, d in defaults.items() if signal.getsignal(s) is d}
    try:
        yield set(old), received
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextmanager
def _signals_held() -> Iterator[list[int]]:
    """While worker processes start: SIGINT ignored (an ignored signal stays ignored across exec, and Python keeps
    it so: the workers ignore Ctrl-C, which the parent handles) and SIGTERM held back (a handler is reset by exec:
    the workers die on SIGTERM, as :meth:`Process.terminate` needs); the held signals are listed for the caller.
    A no-op outside the main thread."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    old_term = signal.signal(signal.SIGTERM, lambda signum, frame: held.append(signum))
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


# --- the local backend -----------------------------------------------------------------------------------------


class WorkerDied(BgaiError):
    """A worker process ended while running a unit (killed, out of memory, a crash in native code)."""


def start_method() -> str:
    """How the local backend starts its workers: ``'fork'`` where it is safe, else ``'spawn'``.

    Fork is used on platforms that have it when torch is not loaded (its thread pools do not survive a fork) and
    no other Python thread runs (a lock held by another thread at the fork would stay held in the child), except
    tqdm's progress-bar monitor thread, which the workers never touch.  A forked worker starts with the parent's
    imported modules: no interpreter start-up, no imports.
    """
    if "fork" not in mp.get_all_start_methods() or "torch" in sys.modules:
        return "spawn"
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    return "spawn" if any(type(t).__name__ != "TMonitor" for t in others) else "fork"


def _worker_main(conn, setup, setup_args, close=(), kernels=()) -> None:
    """Body of a worker process: build the context once, then run ``(fn, unit)`` jobs from ``conn`` until
    ``None`` or the parent is gone, answering ``('ok', result)`` or ``('error', exception)``.  A forked worker
    first closes ``close`` (the parent's ends of the pipes, so that it sees the parent go) and takes back the
    default SIGTERM action (the parent's handler is inherited by a fork); a spawned one first loads ``kernels``
    (the compiled kernels in use in the parent, :func:`bgai.util.jit.load_kernels`), which a fork inherits."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for c in close:
        c.close()
    context, error = None, None
    try:
        load_kernels(kernels)
        context = setup(*setup_args) if setup is not None else None
        limit_threads(1)  # after the context is built, so that the libraries it loaded are limited too
    except BaseException as exc:  # noqa: BLE001 - sent to the parent with the first unit
        error = exc
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            if error is not None:
                raise error
            fn, unit = job
            reply = ("ok", fn(context, unit))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the parent
            reply = ("error", exc)
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return
        except Exception:  # an unpicklable result or exception
            conn.send(("error", RuntimeError(f"work unit failed:\n{traceback.format_exc()}")))


@contextmanager
def _gc_frozen(freeze: bool) -> Iterator[None]:
    """While the block runs (when ``freeze``), every object tracked by the garbage collector is in its permanent
    generation (:func:`gc.freeze`): a child forked then never scans them, so it does not copy their pages; this
    process gets them back afterwards (:func:`gc.unfreeze`)."""
    if not freeze:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Workers:
    """``n`` worker processes (:func:`start_method`), each with a pipe; :meth:`run` hands out the units one at a
    time."""

    def __init__(self, n: int, setup, setup_args) -> None:
        method = start_method()
        ctx = mp.get_context(method)
        self.procs, self.conns = [], []
        with _signals_held() as held, _gc_frozen(method == "fork"):
            for w in range(n):
                parent, child = ctx.Pipe()
                close, kernels = ((*self.conns, parent), ()) if method == "fork" else ((), loaded_kernels())
                proc = ctx.Process(target=_worker_main, args=(child, setup, setup_args, close, kernels), daemon=True,
                                   name=f"bgai-unit-worker-{w}")
                proc.start()
                child.close()
                self.procs.append(proc)
                self.conns.append(parent)
        if held:
            self.stop(kill=True)
            raise _Stop(held[0])

    def run(self, fn: Fn, units: Sequence, collect: OnResult) -> None:
        todo = list(range(len(units)))[::-1]
        busy: dict[Any, tuple[int, int]] = {}  # conn -> (worker, unit index)
        for w, conn in enumerate(self.conns):
            if todo:
                i = todo.pop()
                conn.send((fn, units[i]))
                busy[conn] = (w, i)
        while busy:
            for conn in mp_connection.wait(list(busy)):
                w, i = busy.pop(conn)
                status, payload = self.receive(w)
                if status == "error":
                    raise payload
                collect(i, payload)
                if todo:
                    j = todo.pop()
                    conn.send((fn, units[j]))
                    busy[conn] = (w, j)

    def receive(self, w: int):
        try:
            return self.conns[w].recv()
        except (EOFError, OSError):
            self.procs[w].join(timeout=5.0)
            if self.procs[w].exitcode in (-signal.SIGTERM, -signal.SIGINT):
                time.sleep(0.5)  # a signal sent to the whole group: let this process's handler stop the run
            raise WorkerDied(f"work-unit worker {w} ended unexpectedly (exit code {self.procs[w].exitcode})") from None

    def stop(self, kill: bool) -> None:
        """End the workers: ask them to (``kill`` False) or terminate them (SIGTERM), then join; never hangs."""
        for proc, conn in zip(self.procs, self.conns):
            if not kill and proc.is_alive():
                try:
                    conn.send(None)
                except (BrokenPipeError, OSError):
                    pass
        for proc in self.procs:
            if kill and proc.is_alive():
                proc.terminate()
            proc.join(timeout=10.0)
            if proc.is_alive():  # pragma: no cover - a worker stuck in native code
                proc.kill()
                proc.join()
        for conn in self.conns:
            conn.close()


def _run_local(fn: Fn, units: Sequence, run: UnitRun, collect: OnResult, *, setup, setup_args, context) -> None:
    if run.workers == 1:
        if context is None and setup is not None:
            context = setup(*setup_args)
        with single_thread():  # as in the workers (after the context is built: the libraries it loads are limited)
            for i, unit in enumerate(units):
                collect(i, fn(context, unit))
        return
    workers = _Workers(run.workers, setup, setup_args)
    try:
        workers.run(fn, units, collect)
    except BaseException:
        with _signals_ignored(*_STOP_SIGNALS):  # a second Ctrl-C must not break the shutdown
            workers.stop(kill=True)
        raise
    workers.stop(kill=False)


@contextmanager
def _signals_ignored(*signums: int) -> Iterator[None]:
    """The signals ignored in the main thread while the block runs (a no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_IGN) for s in signums}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


#: Backends by name: ``run(fn, units, run, collect, *, setup, setup_args, context)`` fills ``run`` through
#: ``collect(index, result)`` and raises on failure (:class:`KeyboardInterrupt` included, after stopping its
#: workers).
BACKENDS: dict[str, Callable[..., None]] = {"local": _run_local}


def register_backend(name: str, backend: Callable[..., None]) -> None:
    """Make ``backend`` (the signature of :data:`BACKENDS`' values) available as ``run_units(backend=name)``."""
    BACKENDS[name] = backend


def run_units(
    fn: Fn,
    units: Sequence,
    *,
    workers: int = 1,
    setup: Callable[..., Any] | None = None,
    setup_args: tuple = (),
    context: Any = None,
    backend: str = "local",
    on_result: OnResult | None = None,
    progress: Progress | None = None,
) -> UnitRun:
    """Run ``fn(context, unit)`` for every unit, in ``workers`` workers; stop cleanly on Ctrl-C / SIGTERM.

    Args:
        fn: module-level function ``(context, unit) -> result``; a pure function of ``(setup_args, unit)``.
        units: the units (picklable).
        workers: workers wanted (>= 1); at most ``len(units)`` are used.
        setup: module-level function ``(*setup_args) -> context``, run once per worker (``None``: context None).
        setup_args: its arguments (picklable).
        context: the context to use when the units run in this process (saves running ``setup`` again when the
            caller has it already, e.g. agents built to check their specs).
        backend: ``'local'`` (default) or a name given to :func:`register_backend`.
        on_result: called in this process with ``(unit index, result)`` as each unit finishes (completion order).
        progress: called with ``(units finished, units in all)`` after each unit.

    Returns:
        :class:`UnitRun`; :attr:`UnitRun.interrupted` is set when SIGINT or SIGTERM stopped the run (then
        :attr:`UnitRun.results` holds the units that had finished).

    Raises:
        BgaiError: ``workers`` < 1 or an unknown backend.
        WorkerDied: a worker process ended while running a unit.
        KeyboardInterrupt: raised by the caller's own signal handler (see the module docstring).
        Exception: whatever ``fn`` or ``setup`` raised (the workers are stopped first).
    """
    if workers < 1:
        raise BgaiError(f"workers must be >= 1, got {workers}")
    if backend not in BACKENDS:
        raise BgaiError(f"unknown parallel backend {backend!r}; known: {', '.join(sorted(BACKENDS))}")
    run = UnitRun(total=len(units), workers=max(1, min(workers, len(units))))

    def collect(index: int, result: Any) -> None:
        run.results[index] = result
        if on_result is not None:
            on_result(index, result)
        if progress is not None:
            progress(len(run.results), run.total)

    with _stop_on_signals() as (ours, received):
        try:
            BACKENDS[backend](fn, units, run, collect, setup=setup, setup_args=setup_args, context=context)
        except _Stop as stop:
            run.interrupted = signal.Signals(stop.signum).name
        except KeyboardInterrupt:
            if received:  # our handler ran; the exception was re-raised as a plain KeyboardInterrupt on the way
                run.interrupted = signal.Signals(received[0]).name
            elif signal.SIGINT not in ours:  # the caller's own handler raised it: the caller decides
                raise
            else:
                run.interrupted = "SIGINT"
    return run
