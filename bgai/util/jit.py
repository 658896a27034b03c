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
numba's cache directory), single-threaded (bgai parallelises with processes) and release the GIL (``nogil=True``).

Kernels in use travel to workers.  A module whose kernel is loaded by a function of its own (``use_compiled``:
numba imported, the machine code read from the cache, the module switched to it) records that function with
:func:`note_loaded` once the kernel is in use.  :func:`bgai.util.parallel.run_units` hands the list
(:func:`loaded_kernels`) to each worker that does not inherit this process's memory (a ``spawn``-started local
worker, a Ray actor), which calls them (:func:`load_kernels`) before its first unit: a worker then runs with the
kernels from its start, as a forked worker does (which inherits them), instead of first spending each module's
ski-rental allowance on the slower numpy path and then loading them anyway.  The kernels' results are bit for bit
those of the numpy path, so this changes speed only.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Callable, Iterable

#: True when compiled kernels are in use (numba installed and not turned off by ``BGAI_NUMBA=0``).
AVAILABLE: bool = (
    os.environ.get("BGAI_NUMBA", "1").strip().lower() not in ("0", "false", "off", "no")
    and importlib.util.find_spec("numba") is not None
)


def compile_kernel(fn: Callable, **options) -> Callable | None:
    """``numba.njit(fn, cache=True, nogil=True, **options)``, or ``None`` when kernels are unavailable.

    The first call imports numba (see the module docstring).

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
    return numba.njit(cache=True, nogil=True, **options)(fn)


#: Loaders of the kernels in use in this process (``'module:function'``, :func:`note_loaded`), in loading order.
_LOADED: dict[str, None] = {}


def note_loaded(loader: Callable[[], object], in_use: bool = True) -> None:
    """Record that the kernel loaded by ``loader`` is in use in this process (``in_use`` False: no longer).

    Args:
        loader: a module-level function taking no argument that loads the kernel and switches its module to it
            (e.g. :func:`bgai.core.movegen.use_compiled`); workers call it by name (:func:`load_kernels`).
    """
    name = f"{loader.__module__}:{loader.__qualname__}"
    if in_use:
        _LOADED[name] = None
    else:
        _LOADED.pop(name, None)


def loaded_kernels() -> tuple[str, ...]:
    """The loaders (``'module:function'``) of the kernels in use in this process, for :func:`load_kernels`."""
    return tuple(_LOADED)


def load_kernels(loaders: Iterable[str]) -> None:
    """Call each loader ``'module:function'`` of :func:`loaded_kernels` (another process's): the same kernels in
    use here.  A loader whose module or function is missing here (another bgai version) is skipped: the module
    then loads its kernel by its own rule, with the same results."""
    for name in loaders:
        module, _, function = name.partition(":")
        try:
            loader = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError):
            continue
        loader()
