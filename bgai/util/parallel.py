"""Parallel work units: a job cut into units that are pure functions of their arguments, run in worker processes.

The contract.  A job is ``fn(context, unit) -> result`` for each ``unit`` of a list, where ``context =
setup(*setup_args)`` is built once per worker (e.g. the two agents of a series, from their spec strings) and
``unit`` is a small picklable value (e.g. ``(seed, unit index)``).  ``fn`` must be a pure function of
``(setup_args, unit)``: no state carried from one unit to the next, randomness seeded from the unit.  Then the
results are the same for any number of workers, any order of completion and any backend.  ``fn`` and ``setup``
must be module-level functions (they are sent to the workers by reference).

Backends (``backend=``): ``'local'`` (the default): ``workers == 1`` runs the units one after the other in this
process (with ``context`` if given, else ``setup(*setup_args)``); ``workers > 1`` runs them in a pool of
``spawn``-started processes, each running ``setup`` once and then units as they come (``imap_unordered``), with
torch and BLAS limited to one thread (:func:`bgai.util.threads.limit_threads`).  Other backends (a Ray cluster:
one actor per worker holding the context, a task per unit) plug in behind the same :func:`run_units` call by
registering a function with :func:`register_backend`.

Interruption.  Ctrl-C (SIGINT, sent by a terminal to the whole process group) and SIGTERM (sent to this process)
stop a run in the main thread cleanly: the units not finished are dropped, the worker processes are stopped and
joined, and :func:`run_units` returns the units that did finish, with :attr:`UnitRun.interrupted` naming the
signal.  Workers ignore SIGINT (their parent decides) and die on SIGTERM (which is how the pool stops them), so
neither a traceback nor a ``leaked semaphore`` warning is printed.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from bgai.errors import BgaiError
from bgai.util.threads import limit_threads

__all__ = ["UnitRun", "run_units", "unit_size", "register_backend", "BACKENDS"]

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
def _stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`_Stop` in the main thread while the block runs (a no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, _raise_stop) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


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


# --- the local backend -----------------------------------------------------------------------------------------

_CONTEXT: Any = None
_SETUP_ERROR: BaseException | None = None


def _worker_setup(setup, setup_args) -> None:
    """Pool initializer: ignore SIGINT, build the worker's context once, then one thread for torch/BLAS.

    An error is kept and raised by the first unit (an initializer that raises makes the pool restart the worker
    for ever).
    """
    global _CONTEXT, _SETUP_ERROR
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _CONTEXT = setup(*setup_args) if setup is not None else None
        # after the context is built, so that the libraries it loaded are limited too
        limit_threads(1)
    except BaseException as exc:  # noqa: BLE001 - re-raised by _worker_unit
        _SETUP_ERROR = exc


def _worker_unit(job):
    fn, index, unit = job
    if _SETUP_ERROR is not None:
        raise _SETUP_ERROR
    return index, fn(_CONTEXT, unit)


def _start_pool(workers: int, setup, setup_args):
    """A ``spawn`` pool whose workers start with SIGINT ignored (an ignored signal stays ignored across exec, and
    Python keeps it so) and SIGTERM at its default (a handler is reset by exec): a SIGTERM that comes while the
    pool starts is held back and raised (:class:`_Stop`) once it has started, so the pool is never half-built."""
    ctx = mp.get_context("spawn")
    if threading.current_thread() is not threading.main_thread():
        return ctx.Pool(workers, initializer=_worker_setup, initargs=(setup, setup_args))
    held: list[int] = []
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    old_term = signal.signal(signal.SIGTERM, lambda signum, frame: held.append(signum))
    try:
        pool = ctx.Pool(workers, initializer=_worker_setup, initargs=(setup, setup_args))
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    if held:
        pool.terminate()
        pool.join()
        raise _Stop(held[0])
    return pool


def _run_local(fn: Fn, units: Sequence, run: UnitRun, collect: OnResult, *, setup, setup_args, context) -> None:
    if run.workers == 1:
        if context is None and setup is not None:
            context = setup(*setup_args)
        for i, unit in enumerate(units):
            collect(i, fn(context, unit))
        return
    pool = _start_pool(run.workers, setup, setup_args)
    try:
        for i, result in pool.imap_unordered(_worker_unit, [(fn, i, u) for i, u in enumerate(units)]):
            collect(i, result)
        pool.close()
    except BaseException:
        with _signals_ignored(*_STOP_SIGNALS):  # a second Ctrl-C must not break the shutdown
            pool.terminate()
            pool.join()
        raise
    pool.join()


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

    try:
        with _stop_on_signals():
            BACKENDS[backend](fn, units, run, collect, setup=setup, setup_args=setup_args, context=context)
    except _Stop as stop:
        run.interrupted = signal.Signals(stop.signum).name
    except KeyboardInterrupt:  # outside the main thread's handlers, or raised by fn itself
        run.interrupted = "SIGINT"
    return run
