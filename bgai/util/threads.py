"""Thread limits for the hot loops: torch's intra-op threads and numpy's BLAS threads.

Small matrix products on many rows are fastest single-threaded, and with several worker processes on a 2-core
machine a second BLAS thread per process only spins.  OpenBLAS reads its thread count once, when numpy is
imported, so setting ``OMP_NUM_THREADS`` afterwards has no effect; :func:`limit_threads` sets the limits at run
time through ``threadpoolctl`` (which finds every BLAS/OpenMP library loaded in the process).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager, nullcontext
from typing import Iterator

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


@contextmanager
def single_thread() -> Iterator[None]:
    """Run the block with one torch thread (if torch is loaded) and one BLAS thread, then restore both.

    For the hot loops run in this process (:func:`bgai.util.parallel.run_units` with one worker, rollouts): small
    batches run fastest single-threaded, and a second thread that spins beside another busy process makes them
    several times slower (``bgai label --workers 1`` beside a second job on 2 cores: 39 s a shard instead of 7).
    It also keeps the arithmetic the same in this process as in the single-threaded worker processes, so results do
    not depend on the worker count.  Enter it after the libraries are loaded (as :func:`limit_threads`).
    """
    torch = sys.modules.get("torch")
    old = torch.get_num_threads() if torch is not None else None
    with threadpool_limits(1, user_api="blas") if threadpool_limits is not None else nullcontext():
        if torch is not None:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(old)
