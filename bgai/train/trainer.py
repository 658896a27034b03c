"""The trainer protocol: what a training algorithm gives the run loop (:mod:`bgai.train.loop`).

An algorithm (TD(lambda) self-play, :class:`bgai.train.td.SelfPlayTrainer`; supervised learning on labelled
positions, :class:`bgai.train.supervised.SupervisedTrainer`) is an object with the members of :class:`Trainer`.
The run loop owns everything else: the run folder and its lock, resuming, logs, the progress bar, signals,
checkpoint timing and the evaluations; it calls :meth:`Trainer.step` until :meth:`Trainer.finished`, and saves
:meth:`Trainer.bundle` (the model) with :meth:`Trainer.state_dict` (what an exact resume needs).

Progress is counted in the algorithm's :attr:`Trainer.unit`: ``'game'`` (self-play games finished) or
``'sample'`` (labelled positions trained on); the run config's intervals (``eval_every``, ``checkpoint_every``,
``log_every``) count that unit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from bgai.model.bundle import ModelBundle

__all__ = ["StepResult", "StepReport", "Trainer"]


@runtime_checkable
class StepResult(Protocol):
    """What one :meth:`Trainer.step` did."""

    @property
    def units(self) -> int:
        """Units completed in the step (games finished, samples trained)."""

    @property
    def sums(self) -> dict[str, float]:
        """Additive quantities of the step (e.g. ``plies``, ``sq_error``), summed by the loop between logs and
        turned into scalars by :meth:`Trainer.scalars`."""


@dataclass
class StepReport:
    """A plain :class:`StepResult`."""

    units: int
    sums: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class Trainer(Protocol):
    """A training algorithm as the run loop drives it."""

    #: ``'td'``, ``'supervised'`` (the config's ``algorithm``).
    algorithm: str
    #: What :attr:`done` counts: ``'game'`` or ``'sample'``.
    unit: str

    @property
    def done(self) -> int:
        """Games played or samples trained so far (the run's counter; restored on resume)."""

    @property
    def total(self) -> int:
        """The counter's target (for the progress bar; :meth:`finished` may say so earlier)."""

    def finished(self) -> bool:
        """Whether training is over (target reached, early stopping ...)."""

    def step(self) -> StepResult:
        """One training step (a self-play move in every game and an update; one mini-batch)."""

    def scalars(self, sums: dict[str, float]) -> dict[str, float]:
        """Tensorboard tags -> values from the summed :attr:`StepResult.sums` since the last log, plus the
        current schedule values (learning rate ...)."""

    def counters(self) -> dict[str, int]:
        """Top-level counters for checkpoint files (``games_trained`` or ``samples_trained`` ...)."""

    def bundle(self) -> ModelBundle:
        """The model being trained, its nets' training records up to date (live weights: save or copy it before
        the next step)."""

    def state_dict(self) -> dict:
        """Everything an exact resume needs besides the weights (optimiser, generators, counters ...), as
        tensors and plain values."""

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output (the weights come with the bundle, before this call).

        Raises:
            CheckpointError: a state that cannot continue with this config.
        """

    def close(self) -> None:
        """Release processes and files (idempotent)."""
