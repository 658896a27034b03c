"""Optional compiled kernels: numba's ``njit`` when the ``fast`` extra is installed, else nothing.

bgai's hot loops (encoding, move generation) are written in numpy first; a compiled kernel is added only for a
measured hot spot, and the numpy version stays the reference the tests compare it with.  Call sites ask
``compile_kernel(fn)`` and fall back to their numpy path when it returns ``None``:

- numba is missing (``pip install bgai[fast]`` adds it), or
- the environment variable ``BGAI_NUMBA=0`` turns the kernels off (to compare, or to rule them out).

Kernels are compiled lazily on first call (``cache=True`` keeps the machine code between runs in numba's cache
directory), single-threaded (bgai parallelises with processes) and release the GIL (``nogil=True``).
"""

from __future__ import annotations

import os
from typing import Callable

try:  # optional dependency: the 'fast' extra
    if os.environ.get("BGAI_NUMBA", "1").strip() == "0":
        raise ImportError("disabled by BGAI_NUMBA=0")
    import numba
except ImportError:  # pragma: no cover - depends on the installation
    numba = None

#: True when compiled kernels are in use (numba importable and not turned off by ``BGAI_NUMBA=0``).
AVAILABLE: bool = numba is not None


def compile_kernel(fn: Callable, **options) -> Callable | None:
    """``numba.njit(fn, cache=True, nogil=True, **options)``, or ``None`` when kernels are unavailable.

    Args:
        fn: a function written in numba's supported subset of Python and numpy.
        options: further ``numba.njit`` options (e.g. ``fastmath=False``, the default, keeps results bit-equal to
            the numpy reference where the arithmetic is the same).
    """
    if numba is None:
        return None
    return numba.njit(cache=True, nogil=True, **options)(fn)


def _popcount(x):  # pragma: no cover - compiled by numba
    k = 0
    while x:
        x &= x - 1
        k += 1
    return k


#: The number of set bits of a non-negative integer, compiled, for kernels to call (``None`` when kernels are
#: unavailable).
popcount = compile_kernel(_popcount)
