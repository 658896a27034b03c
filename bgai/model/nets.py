"""Torch value networks: encoded positions in, five outcome probabilities out.

A :class:`ValueNet` is a multilayer perceptron (one or more hidden layers, sigmoid or ReLU units) with five
sigmoid outputs in :data:`bgai.core.equity.OUTPUTS` order, ``[P(win), P(win gammon), P(win backgammon),
P(lose gammon), P(lose backgammon)]``, for the **side on roll** of the encoded position (before it rolls), as
GNU Backgammon's evaluator has them.  TD-Gammon used one hidden layer of 40 to 80 sigmoid units (Tesauro 1992,
1995).  Perspective is not handled here: the value of an afterstate for the player who moved is the swapped
evaluation of the flipped afterstate, done once in :class:`bgai.agents.base.ProbabilityAgent` (and in the
trainer through :func:`bgai.core.equity.swap_perspective`).

:class:`NetSpec` is the architecture as stored in checkpoints; loaders build the net from it, never from flags.
:class:`FastForward` is an inference-only copy for large batches (the hot path of self-play and search).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from bgai.errors import CheckpointError, ConfigError

ACTIVATIONS = ("sigmoid", "relu")

#: Largest network bgai builds, checked before any weight is allocated (a file or config asking for more is
#: refused, never an attempt at a huge allocation): input units, units per hidden layer, hidden layers, and
#: parameters in all (100 M float32 parameters are 400 MB; gnubg's largest net has about 50 k).
MAX_INPUTS = 10_000
MAX_UNITS = 10_000
MAX_LAYERS = 16
MAX_PARAMETERS = 100_000_000


@dataclass(frozen=True)
class NetSpec:
    """Architecture of a :class:`ValueNet`.

    Attributes:
        n_inputs: input units (the encoder's ``size``).
        hidden: sizes of the hidden layers, e.g. ``(80,)``.
        activation: hidden-unit nonlinearity, ``'sigmoid'`` (TD-Gammon's) or ``'relu'``.
    """

    n_inputs: int
    hidden: tuple[int, ...] = (80,)
    activation: str = "sigmoid"

    def __post_init__(self) -> None:
        if not 1 <= int(self.n_inputs) <= MAX_INPUTS:
            raise ConfigError(f"n_inputs must be in 1..{MAX_INPUTS}, got {self.n_inputs}")
        hidden = tuple(int(h) for h in self.hidden)
        if not hidden or min(hidden) < 1:
            raise ConfigError(f"hidden layer sizes must be >= 1 and at least one layer, got {self.hidden!r}")
        if len(hidden) > MAX_LAYERS or max(hidden) > MAX_UNITS:
            raise ConfigError(
                f"network too large: hidden={list(hidden)} (at most {MAX_LAYERS} layers of at most {MAX_UNITS} units)"
            )
        object.__setattr__(self, "hidden", hidden)
        if self.parameters() > MAX_PARAMETERS:
            raise ConfigError(f"network too large: {self.parameters():,} parameters (at most {MAX_PARAMETERS:,})")
        if self.activation not in ACTIVATIONS:
            raise ConfigError(f"unknown activation {self.activation!r}; known: {', '.join(ACTIVATIONS)}")

    def parameters(self) -> int:
        """Number of weights and biases (input -> hidden layers -> 5 outputs)."""
        widths = (int(self.n_inputs), *self.hidden, 5)
        return sum((a + 1) * b for a, b in zip(widths[:-1], widths[1:]))

    def to_dict(self) -> dict:
        """Plain dict (lists and str) for checkpoints."""
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NetSpec":
        """Inverse of :meth:`to_dict`.

        Raises:
            CheckpointError: missing or malformed fields, or a network above the size limits
                (:data:`MAX_UNITS` ...), before anything is allocated.
        """
        try:
            hidden = d["hidden"]
            if not isinstance(hidden, (list, tuple)):  # a string such as '512' would read as three layers
                raise TypeError(f"'hidden' must be a list of layer sizes, got {hidden!r}")
            return cls(int(d["n_inputs"]), tuple(int(h) for h in hidden), str(d["activation"]))
        except ConfigError as exc:
            raise CheckpointError(f"network description in checkpoint refused: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"malformed network description in checkpoint: {str(d)[:200]} ({exc})") from None


class ValueNet(nn.Module):
    """MLP ``(N, n_inputs) float32 -> (N, 5)`` probabilities for the side on roll (sigmoid outputs).

    Args:
        spec: the architecture.
        generator: torch random generator for the initial weights (the caller seeds it); ``None`` uses torch's
            default generator.
    """

    def __init__(self, spec: NetSpec, generator: torch.Generator | None = None):
        super().__init__()
        self.spec = spec
        layers: list[nn.Module] = []
        width = spec.n_inputs
        for h in spec.hidden:
            layers.append(nn.Linear(width, h))
            layers.append(nn.Sigmoid() if spec.activation == "sigmoid" else nn.ReLU())
            width = h
        layers.append(nn.Linear(width, 5))
        self.body = nn.Sequential(*layers)
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Uniform initialisation ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for weights and biases (torch's default
        scale), drawn from ``generator`` so that a seed fixes the initial net."""
        with torch.no_grad():
            for m in self.body:
                if isinstance(m, nn.Linear):
                    bound = 1.0 / np.sqrt(m.in_features)
                    m.weight.uniform_(-bound, bound, generator=generator)
                    m.bias.uniform_(-bound, bound, generator=generator)

    def widened(self, hidden, generator: torch.Generator | None = None, n_inputs: int | None = None) -> "ValueNet":
        """A wider copy that computes the same values: each hidden layer grown to ``hidden[i]`` units, and
        optionally more inputs (``n_inputs``, appended after the present ones, their weights zero: an encoding
        that extends the present one, :attr:`bgai.model.features.Encoder.extends`).

        The first units of every layer keep this net's weights; each new unit gets incoming weights and a bias
        drawn as :meth:`reset_parameters` draws them (from ``generator``) and zero outgoing weights, so its output
        adds nothing until training moves those (a function-preserving widening, as the "wider" step of Chen,
        Goodfellow and Shlens, *Net2Net*, ICLR 2016, with zero instead of split outgoing weights, which breaks the
        symmetry between old and new units).

        Args:
            hidden: the new hidden sizes, as many layers as this net's, each at least the present size.

        Raises:
            ConfigError: another number of layers, a layer narrower than now, or fewer inputs.
        """
        hidden = tuple(int(h) for h in hidden)
        old = self.spec.hidden
        if len(hidden) != len(old) or any(h < o for h, o in zip(hidden, old)):
            raise ConfigError(f"cannot widen hidden layers {list(old)} to {list(hidden)}: give as many layers, "
                              "each at least as wide")
        n_inputs = self.spec.n_inputs if n_inputs is None else int(n_inputs)
        if n_inputs < self.spec.n_inputs:
            raise ConfigError(f"cannot widen a net of {self.spec.n_inputs} inputs to {n_inputs}")
        wide = ValueNet(NetSpec(n_inputs, hidden, self.spec.activation), generator=generator)
        mine = [m for m in self.body if isinstance(m, nn.Linear)]
        theirs = [m for m in wide.body if isinstance(m, nn.Linear)]
        with torch.no_grad():
            for i, (a, b) in enumerate(zip(mine, theirs)):
                rows, cols = a.weight.shape
                b.weight[:rows, :cols] = a.weight
                b.bias[:rows] = a.bias
                b.weight[:rows, cols:] = 0.0  # new inputs or new units of the layer below feed nothing in yet
        return wide

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """Pre-sigmoid outputs ``(N, 5)``."""
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Probabilities ``(N, 5)`` float32 in ``OUTPUTS`` order for the side on roll."""
        return torch.sigmoid(self.body(x))


#: Batches of fewer rows than this may take the first layer's product with a plain (C-contiguous) copy of its
#: weights (see :class:`FastForward`); larger ones keep the transposed view (no faster there).
PLAIN_ROWS = 256


class FastForward:
    """Inference-only evaluation of a :class:`ValueNet` on numpy features, without autograd.

    The matrix products run in numpy (float32; on this project's AMD CPUs its OpenBLAS beats torch's MKL for
    these shapes, see ``scripts/bench_selfplay.py``), the sigmoids in torch, in place.  Holds numpy *views* of
    the net's parameters (no copy): it always evaluates the current weights, also while an optimiser updates
    them in place.  ``__call__(x (N, F) float32) -> (N, 5) float32`` probabilities.

    Batches of tens of rows (a request's afterstates): the first layer's product with the transposed view takes
    1.5-3x as long as with a plain copy of the weights, and for most batch sizes the BLAS computes both the same
    way (its packed GEMM), bit for bit; for the smallest ones it may not (OpenBLAS's small-matrix kernels, whose
    limits depend on the CPU and the shapes).  So the plain copy is used for a batch of ``n < PLAIN_ROWS`` rows
    only when a probe product of ``n`` seeded random rows gave the same bits both ways (checked once per ``n``),
    and only with ``fixed_weights=True`` (a server, whose weights never change: training writes its updates into
    the weights through numpy views and shared memory, which torch's version counter does not see); the copy is
    also made again whenever that counter says the weight changed.  The results are those of the transposed view
    (``tests/test_single_request_paths.py``).  Small batches write into output buffers kept per thread and per
    batch size (the result is a copy).
    """

    def __init__(self, net: ValueNet, fixed_weights: bool = False):
        layers = [m for m in net.body if isinstance(m, nn.Linear)]
        self.weights = [m.weight.detach().numpy().T for m in layers]  # (in, out) views
        self.biases = [m.bias.detach().numpy() for m in layers]
        self.relu = net.spec.activation == "relu"
        self._first = layers[0].weight
        self._plain: tuple[int, np.ndarray] | None = None  # (version of the weight, its (in, out) C copy)
        self._plain_same: dict[int, bool] = {}  # rows -> the plain copy gives the view's bits
        self.fixed_weights = fixed_weights
        self._local = threading.local()  # per thread: rows -> output buffers of small batches (_buffers)

    def _plain_first(self) -> np.ndarray:
        """The first layer's ``(in, out)`` weights, C-contiguous, of the current version."""
        version = self._first._version
        plain = self._plain
        if plain is None or plain[0] != version:
            plain = (version, np.ascontiguousarray(self.weights[0]))
            self._plain = plain
        return plain[1]

    def _use_plain(self, n: int) -> bool:
        """Whether a batch of ``n`` rows takes the first product with the plain copy (see the class docstring)."""
        if not self.fixed_weights:
            return False
        same = self._plain_same.get(n)
        if same is None:
            if n >= PLAIN_ROWS:
                return False
            w = self.weights[0]
            probe = np.random.default_rng(n).standard_normal((n, w.shape[0])).astype(np.float32)
            same = bool(np.array_equal(probe @ w, probe @ self._plain_first()))
            self._plain_same[n] = same
        return same

    def _buffers(self, n: int) -> list:
        """This thread's ``(array, tensor)`` output buffers of each layer for batches of ``n`` rows (the tensor a
        view of the array, made once: ``torch.from_numpy`` costs as much as a small product on cold caches)."""
        local = self._local.__dict__
        bufs = local.get(n)
        if bufs is None:
            bufs = []
            for w in self.weights:
                a = np.empty((n, w.shape[1]), dtype=np.float32)
                bufs.append((a, torch.from_numpy(a)))
            local[n] = bufs
        return bufs

    def __call__(self, x: np.ndarray) -> np.ndarray:
        h = np.ascontiguousarray(x, dtype=np.float32)
        n = h.shape[0]
        last = len(self.weights) - 1
        bufs = self._buffers(n) if n < PLAIN_ROWS else None
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            if i == 0 and self._use_plain(n):
                w = self._plain_first()
            if bufs is None:
                h = h @ w
                t = torch.from_numpy(h)
            else:
                out, t = bufs[i]
                h = np.matmul(h, w, out=out)
            h += b
            if i < last and self.relu:
                torch.relu_(t)
            else:
                torch.sigmoid_(t)
        return h if bufs is None else h.copy()
