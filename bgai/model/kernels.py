"""When the input encoders switch to their compiled kernels: loaded on demand, after a warm-up.

A compiled encoder kernel (:mod:`bgai.util.jit`, numba) costs a one-off load in each process: importing numba
and reading the machine code from numba's cache takes about 0.3-2 s of CPU (and the very first compile on a
machine, before there is a cache, 10-60 s).  A command that encodes a few thousand positions (``bgai hint`` of one
position) is faster without it, so by default (``compiled=None``) an encoder runs its numpy path until the
process has encoded :data:`WARM_UP_POSITIONS` positions with it and only then loads the kernel (the rule of
renting until the rent paid equals the price: never more than about twice the cost of the better choice made in
hindsight).  ``compiled=True`` loads the kernel at once, ``compiled=False`` never uses it.  Both paths give
bit-identical output, so when the switch happens changes no result.
"""

from __future__ import annotations

import threading
from typing import Callable

from bgai.util.jit import compile_kernel

__all__ = ["WARM_UP_POSITIONS", "EncoderKernel", "loaded_kernels"]

#: Positions an encoder encodes with numpy in a process before it loads its compiled kernel by default (about
#: 0.1-0.4 s of numpy encoding: the order of the kernel's load time from numba's cache).
WARM_UP_POSITIONS = 100_000


class EncoderKernel:
    """A compiled kernel of ``fn`` with plain-Python ``helpers`` it calls, loaded on demand (see the module).

    Args:
        fn: the kernel, in numba's subset of Python.
        helpers: functions ``fn`` calls by their global names; made callable from compiled code with numba's
            ``register_jitable`` when the kernel is loaded (they stay plain Python functions).
        warm_up: positions to encode with numpy before loading by default.
    """

    def __init__(self, fn: Callable, helpers: tuple[Callable, ...] = (), warm_up: int = WARM_UP_POSITIONS):
        self._fn = fn
        self._helpers = helpers
        self.warm_up = warm_up
        self._kernel: Callable | None = None
        self._loaded = False
        self._numpy_positions = 0
        self._lock = threading.Lock()
        _ALL.append(self)

    @property
    def name(self) -> str:
        """The kernel function's name."""
        return self._fn.__name__

    def get(self, n: int, compiled: bool | None) -> Callable | None:
        """The compiled kernel to encode a batch of ``n`` positions with, or ``None`` for the numpy path.

        Args:
            n: positions in the batch (counted towards the warm-up when the numpy path runs).
            compiled: ``True`` the kernel when kernels are available; ``False`` never; ``None`` (the default
                of the encoders) once the warm-up is done.
        """
        if compiled is False:
            return None
        if not self._loaded:
            if compiled is None and self._numpy_positions + n < self.warm_up:
                self._numpy_positions += n
                return None
            self._load()
        return self._kernel

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            kernel = compile_kernel(self._fn)
            if kernel is not None and self._helpers:
                from numba.extending import register_jitable  # the optional 'fast' extra, present here

                for helper in self._helpers:
                    register_jitable(helper)
            self._kernel = kernel
            self._loaded = True


_ALL: list[EncoderKernel] = []


def loaded_kernels() -> list[str]:
    """Names of the encoder kernels loaded (compiled, in use) in this process, e.g. ``['_contact_kernel']``."""
    return [k.name for k in _ALL if k._kernel is not None]
