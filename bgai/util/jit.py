"""Optional compiled kernels: numba's ``njit`` when the ``fast`` extra is installed, else nothing.

bgai's hot loops (encoding, move generation) are written in numpy first; a compiled kernel is added only for a
measured hot spot, and the numpy version stays the reference the tests compare it with.  Call sites ask
``compile_kernel(fn)`` and fall back to their numpy path when it returns ``None``:

- numba is missing (``pip install bgai[fast]`` adds it), or
- the environment variable ``BGAI_NUMBA=0`` (or ``false``, ``off``, ``no``) turns the kernels off (to compare,
  or to rule them out).

numba itself is imported by the first ``compile_kernel`` call, not by importing this module (importing numba
takes 0.5-2 s, which a command that never runs a kernel should not pay); call ``compile_kernel`` when the kernel
is first needed.  Kernels are compiled lazily on first call (``cache=True`` keeps the machine code between runs in
numba's cache directory: next to the source, else the user's cache directory, else ``NUMBA_CACHE_DIR``; where
none is writable they are compiled in every process instead), single-threaded (bgai parallelises with processes)
and release the GIL (``nogil=True``).

When a kernel is loaded (:class:`LazyKernel`, used by the move generator, pubeval and the input encoders): loading
one costs each process a one-off price -- importing numba (about 0.3-2 s of CPU) and reading the kernel's machine
code from numba's cache (the very first run on a machine compiles it instead: 5-60 s) -- which a short command
(one ``bgai hint``) should not pay.  So a call site runs its numpy path first and counts the work done there (in
seconds, or in positions); once that work reaches the site's threshold (of the order of the load time), the next
call loads the kernel and uses it from then on: the rule of renting until the rent paid equals the price, which
never spends more than about twice the cheaper choice made in hindsight.  Long runs (servers, training, series,
benchmarks) load it at start (:meth:`LazyKernel.use`, or :meth:`LazyKernel.prepare` before forking workers, which
then inherit it).  Both paths give the same output, so when the switch happens changes no result.

Kernels in use travel to workers.  Every :class:`LazyKernel` in use in a process is listed by
:func:`loaded_kernels` (``'module:function'`` of its kernel function); :func:`bgai.util.parallel.run_units` hands
the list to each worker that does not inherit this process's memory (a ``spawn``-started local worker, a Ray
actor), which loads the same kernels (:func:`load_kernels`) before its first unit: a worker then runs with the
kernels from its start, as a forked worker does (which inherits them), instead of first spending each site's
allowance on the slower numpy path and then loading them anyway.  The kernels' results are bit for bit those of
the numpy path, so this changes speed only.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from typing import Callable, Iterable

#: True when compiled kernels are in use (numba installed and not turned off by ``BGAI_NUMBA=0``).
AVAILABLE: bool = (
    os.environ.get("BGAI_NUMBA", "1").strip().lower() not in ("0", "false", "off", "no")
    and importlib.util.find_spec("numba") is not None
)


def compile_kernel(fn: Callable, **options) -> Callable | None:
    """``numba.njit(fn, cache=True, nogil=True, **options)``, or ``None`` when kernels are unavailable.

    The first call imports numba (see the module docstring).  Without a writable cache directory the kernel is
    compiled without ``cache=True`` (the same machine code, compiled in each process).

    Args:
        fn: a function written in numba's supported subset of Python and numpy.
        options: further ``numba.njit`` options (e.g. ``fastmath=False``, the default, keeps results bit-equal to
            the numpy reference where the arithmetic is the same).
    """
    if not AVAILABLE:
        return None
    try:
        import numba
    except ImportError:  # pragma: no cover - broken installation
        return None
    try:
        return numba.njit(cache=True, nogil=True, **options)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available": no writable cache directory
        return numba.njit(nogil=True, **options)(fn)


#: Every :class:`LazyKernel` made in this process, by its key (``'module:function'`` of its kernel function).
_KERNELS: dict[str, "LazyKernel"] = {}
#: Keys of the kernels in use in this process, in loading order (a dict as an ordered set).
_IN_USE: dict[str, None] = {}


class LazyKernel:
    """A compiled kernel loaded on demand, after enough work on the numpy path (see the module docstring).

    Args:
        fn: the kernel, in numba's subset of Python.
        load_after: the numpy-path work after which :meth:`get` loads the kernel, in the call site's unit: seconds
            (counted after each numpy call with :meth:`count`) or positions (passed to :meth:`get`).
        helpers: plain-Python functions ``fn`` calls by their global names; made callable from compiled code with
            numba's ``register_jitable`` when the kernel is loaded (they stay plain Python functions).
        prime: called with the compiled kernel right after loading, e.g. a one-position call that compiles it or
            reads its machine code from the cache, so that the load, not the first real call, pays for it.
        owner: the module that makes this object (default: ``fn``'s), which :func:`load_kernels` imports in another
            process to find it; its key is ``'owner:function'``.

    Attributes:
        load_after: as given (a test may lower it).
        work: the numpy-path work counted so far.
    """

    def __init__(self, fn: Callable, load_after: float, *, helpers: tuple[Callable, ...] = (),
                 prime: Callable[[Callable], object] | None = None, owner: str | None = None):
        self._fn = fn
        self.load_after = load_after
        self._helpers = tuple(helpers)
        self._prime = prime
        self.work = 0
        self._auto = True  # load after load_after of work, until use() decides
        self._kernel: Callable | None = None  # the kernel while in use
        self._loaded = False  # whether the load was done (its result: _compiled, None without kernels)
        self._compiled: Callable | None = None
        self._lock = threading.Lock()
        self.key = f"{owner or fn.__module__}:{fn.__qualname__}"  # how loaded_kernels() names it to other processes
        _KERNELS[self.key] = self

    @property
    def name(self) -> str:
        """The kernel function's name."""
        return self._fn.__name__

    @property
    def kernel(self) -> Callable | None:
        """The compiled kernel while it is in use, else ``None``."""
        return self._kernel

    def use(self, on: bool = True) -> bool:
        """Turn the kernel on (loading it now, once per process) or off (the numpy path) for the following calls.

        Returns:
            Whether the kernel is now in use: ``False`` when turned off, or without compiled kernels (numba not
            installed, or ``BGAI_NUMBA=0``).
        """
        self._auto = False
        self._kernel = self._load() if on else None
        if self._kernel is not None:
            _IN_USE[self.key] = None
        else:
            _IN_USE.pop(self.key, None)
        return self._kernel is not None

    def prepare(self) -> bool:
        """Load the kernel now unless :meth:`use` turned it off (a long run about to fork its workers).

        Returns:
            Whether the kernel is in use.
        """
        if self._auto and self._kernel is None:
            return self.use()
        return self._kernel is not None

    def get(self, work: float = 0, compiled: bool | None = None) -> Callable | None:
        """The kernel for a call about to do ``work`` (positions; 0 where work is counted in seconds afterwards),
        or ``None`` for the numpy path.

        Args:
            work: the call's work, counted towards ``load_after`` when the numpy path is taken by default.
            compiled: ``False``: ``None`` (not counted); ``True``: the kernel, loaded now and used from then on
                (``None`` without compiled kernels); ``None``: the kernel when in use, or loaded now when the work
                counted plus ``work`` reaches ``load_after`` (unless :meth:`use` decided).
        """
        if compiled is False:
            return None
        if self._kernel is None:
            if compiled or (self._auto and self.work + work >= self.load_after):
                self.use()
            elif self._auto:
                self.work += work
        return self._kernel

    def count(self, work: float) -> None:
        """Add ``work`` (e.g. the seconds a numpy call took) to the work counted."""
        self.work += work

    def reset(self) -> None:
        """Back to a fresh process's state (numpy path, no work counted; a loaded kernel is kept for reuse)."""
        self._auto = True
        self._kernel = None
        self.work = 0
        _IN_USE.pop(self.key, None)

    def _load(self) -> Callable | None:
        with self._lock:
            if not self._loaded:
                kernel = compile_kernel(self._fn)
                if kernel is not None:
                    from numba.extending import register_jitable  # numba is imported by now

                    for helper in self._helpers:
                        register_jitable(helper)
                    if self._prime is not None:
                        self._prime(kernel)
                self._compiled = kernel
                self._loaded = True
        return self._compiled


def loaded_kernels() -> tuple[str, ...]:
    """The keys (``'module:function'``) of the :class:`LazyKernel` s in use in this process, in loading order,
    for :func:`load_kernels` in another process."""
    return tuple(_IN_USE)


def load_kernels(keys: Iterable[str]) -> None:
    """Load and use the kernels named by another process's :func:`loaded_kernels`: each key's module is imported
    (which makes its :class:`LazyKernel`) and the kernel turned on.  A key whose module or kernel is missing here
    (another bgai version) is skipped: that site then loads its kernel by its own rule, with the same results."""
    for key in keys:
        module = key.partition(":")[0]
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        kernel = _KERNELS.get(key)
        if kernel is not None:
            kernel.use()
