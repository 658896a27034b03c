"""Thread limits for the hot loops: torch's intra-op threads and numpy's BLAS threads.

Small matrix products on many rows are fastest single-threaded, and with several worker processes on a 2-core
machine a second BLAS thread per process only spins.  OpenBLAS reads its thread count once, when numpy is
imported, so setting ``OMP_NUM_THREADS`` afterwards has no effect; :func:`limit_threads` sets the limits at run
time through ``threadpoolctl`` (which finds every BLAS/OpenMP library loaded in the process).
"""

from __future__ import annotations

import sys

try:  # part of the 'train' extra; without it BLAS keeps its own thread count
    from threadpoolctl import threadpool_limits
except ModuleNotFoundError:  # pragma: no cover - numpy-only installs
    threadpool_limits = None


def limit_threads(n: int) -> str:
    """Use at most ``n`` threads for torch (if imported) and for every BLAS library loaded in this process.

    Call it after the libraries are loaded (``threadpoolctl`` limits the ones it finds at the time).

    Returns:
        ``'threadpoolctl'`` (how the limits were set; kept for the benchmarks' printout), or ``'none'`` when
        threadpoolctl is not installed (numpy-only installs: BLAS keeps its thread count).
    """
    n = max(1, int(n))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    if threadpool_limits is None:
        return "none"
    threadpool_limits(n, user_api="blas")
    return "threadpoolctl"
