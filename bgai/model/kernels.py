"""When the input encoders switch to their compiled kernels: after a warm-up counted in positions.

Each encoder's kernel is a :class:`bgai.util.jit.LazyKernel` (its module docstring gives the loading rule): by
default (``compiled=None``) an encoder runs its numpy path until the process has encoded
:data:`WARM_UP_POSITIONS` positions with it and then loads the kernel; ``compiled=True`` loads it at once,
``compiled=False`` never uses it.  Both paths give bit-identical output.
"""

from __future__ import annotations

from typing import Callable

from bgai.util.jit import LazyKernel

__all__ = ["WARM_UP_POSITIONS", "EncoderKernel", "loaded_kernels"]

#: Positions an encoder encodes with numpy in a process before it loads its compiled kernel by default (about
#: 0.1-0.4 s of numpy encoding: the order of the kernel's load time from numba's cache, 0.3-2 s of CPU).
WARM_UP_POSITIONS = 100_000


class EncoderKernel(LazyKernel):
    """An encoder's compiled kernel ``fn`` (with plain-Python ``helpers`` it calls), loaded after ``warm_up``
    positions encoded with numpy: :class:`bgai.util.jit.LazyKernel` with ``load_after=warm_up``, listed by
    :func:`loaded_kernels`; ``get(n, compiled)`` gives the kernel for a batch of ``n`` positions or ``None``."""

    def __init__(self, fn: Callable, helpers: tuple[Callable, ...] = (), warm_up: int = WARM_UP_POSITIONS):
        super().__init__(fn, warm_up, helpers=helpers)
        _ALL.append(self)


_ALL: list[EncoderKernel] = []


def loaded_kernels() -> list[str]:
    """Names of the encoder kernels loaded (compiled, in use) in this process, e.g. ``['_contact_kernel']``."""
    return [k.name for k in _ALL if k.kernel is not None]
