"""When the position kernels (input encoders, the classifier) switch to compiled code: after a warm-up counted in
positions.

Each such kernel is a :class:`PositionKernel`, a :class:`bgai.util.jit.LazyKernel` (its module docstring gives the
loading rule, and :func:`bgai.util.jit.loaded_kernels` lists the kernels in use) whose work is counted in
positions: by default (``compiled=None``) a call site runs its numpy path until the process has handled
:data:`WARM_UP_POSITIONS` positions with it and then loads the kernel; ``compiled=True`` loads it at once,
``compiled=False`` never uses it.  Both paths give bit-identical output.
"""

from __future__ import annotations

from typing import Callable

from bgai.util.jit import LazyKernel

__all__ = ["WARM_UP_POSITIONS", "PositionKernel"]

#: Positions a call site handles with numpy in a process before it loads its compiled kernel by default (about
#: 0.1-0.4 s of numpy encoding: the order of the kernel's load time from numba's cache, 0.3-2 s of CPU).
WARM_UP_POSITIONS = 100_000


class PositionKernel(LazyKernel):
    """A compiled kernel ``fn`` (with plain-Python ``helpers`` it calls, and ``prime`` run right after loading),
    loaded after ``warm_up`` positions handled with numpy: :class:`bgai.util.jit.LazyKernel` with
    ``load_after=warm_up``; ``get(n, compiled)`` gives the kernel for a batch of ``n`` positions or ``None``."""

    def __init__(self, fn: Callable, helpers: tuple[Callable, ...] = (), warm_up: int = WARM_UP_POSITIONS,
                 prime: Callable[[Callable], object] | None = None):
        super().__init__(fn, warm_up, helpers=helpers, prime=prime)
