"""Thread limits for the hot loops: torch's intra-op threads and numpy's BLAS (OpenBLAS) threads.

Small matrix products on many rows are fastest single-threaded, and on a shared 2-core machine a second BLAS
thread mostly spins; OpenBLAS, however, reads its thread count once when numpy is imported.  So
:func:`limit_threads` sets it at run time: through ``threadpoolctl`` when installed, else through OpenBLAS's
own ``*_set_num_threads`` entry point in numpy's bundled library (``ctypes``).
"""

from __future__ import annotations

import ctypes
import glob
import os

import torch

_SYMBOLS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads")


def _numpy_openblas_setters() -> list:
    import numpy

    libdir = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    setters = []
    for path in glob.glob(os.path.join(libdir, "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in _SYMBOLS:
            fn = getattr(lib, sym, None)
            if fn is not None:
                setters.append(fn)
                break
    return setters


def limit_threads(n: int) -> str:
    """Use at most ``n`` threads for torch and for numpy's BLAS in this process.

    Returns:
        How numpy's BLAS was limited: ``'threadpoolctl'``, ``'openblas'`` or ``'none'`` (not found).
    """
    n = max(1, int(n))
    torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n, user_api="blas")
        return "threadpoolctl"
    except ImportError:
        pass
    setters = _numpy_openblas_setters()
    for fn in setters:
        fn(ctypes.c_int(n))
    return "openblas" if setters else "none"
