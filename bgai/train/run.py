"""A training run: the config's algorithm (:data:`ALGORITHMS`) driven by the run loop (:mod:`bgai.train.loop`).

``train(config, 'runs/quick')`` starts a run, ``train(None, 'runs/quick', resume=True)`` continues one; the run
folder's files, logs, evaluations and checkpoints are described in :mod:`bgai.train.loop`, the algorithms in
:mod:`bgai.train.td` (TD(lambda) self-play) and :mod:`bgai.train.supervised` (labelled positions).
"""

from __future__ import annotations

from typing import Callable

from bgai.model.bundle import ModelBundle
from bgai.train.config import TrainConfig
from bgai.train.loop import RunResult, TrainerFactory, run_training
from bgai.train.supervised import SupervisedTrainer
from bgai.train.td import SelfPlayTrainer
from bgai.train.trainer import Trainer

__all__ = ["ALGORITHMS", "RunResult", "make_trainer", "train"]

#: Each algorithm's trainer factory (``config.algorithm`` -> :data:`bgai.train.loop.TrainerFactory`).
ALGORITHMS: dict[str, TrainerFactory] = {
    "td": SelfPlayTrainer.create,
    "supervised": SupervisedTrainer.create,
}


def make_trainer(config: TrainConfig, bundle: ModelBundle | None = None, state: dict | None = None) -> Trainer:
    """The trainer of ``config.algorithm`` (fresh, or from a checkpoint's bundle and state)."""
    return ALGORITHMS[config.algorithm](config, bundle, state)


def train(
    config: TrainConfig | None,
    out_dir: str,
    *,
    resume: bool = False,
    overrides: dict | None = None,
    progress: bool = True,
    tensorboard: bool = True,
    evaluate: bool = True,
    on_step: Callable[[Trainer], None] | None = None,
    lines: Callable[[str], None] | None = None,
) -> RunResult:
    """Train (or resume) a run into ``out_dir`` (:func:`bgai.train.loop.run_training` with :func:`make_trainer`).

    Args:
        config: the run's config (ignored with ``resume``, which takes the checkpoint's).
        out_dir: run folder.
        resume: continue from ``out_dir/last.pt``.
        overrides: with ``resume``: config keys to change (e.g. ``{'games': 2_000_000}`` to extend a run).
        progress: tqdm progress bar on stderr.
        tensorboard: write tensorboard logs.
        evaluate: run the evaluations against pubeval (tests switch them off).
        on_step: called after every step (tests).
        lines: where evaluation lines go (e.g. ``print``).

    Returns:
        :class:`~bgai.train.loop.RunResult`.

    Raises:
        As :func:`bgai.train.loop.run_training`.
    """
    return run_training(
        config, out_dir, make_trainer, resume=resume, overrides=overrides, progress=progress,
        tensorboard=tensorboard, evaluate=evaluate, on_step=on_step, lines=lines,
    )
