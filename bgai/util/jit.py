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
"""

from __future__ import annotations

import importlib.util
import os
from typing import Callable

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
