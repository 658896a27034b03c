"""A training run, read top to bottom: config, trainer, loop (self-play + TD updates), logging, evaluation,
checkpoints.

Run folder ``OUT`` (e.g. ``runs/quick``):

* ``last.pt`` - the latest *training* checkpoint (weights + optimiser + generator + games in progress), written
  every ``checkpoint_every`` games, at the end, and when the run is interrupted (Ctrl-C / SIGTERM): what
  ``--resume`` continues from, exactly.
* ``best.pt`` - a *model* checkpoint of the best evaluation so far (no trainer state; small).
* ``snapshots/model-GAMES.pt`` - a model checkpoint at every evaluation (to pick or re-evaluate later: the best
  of several noisy evaluations is biased upwards).
* ``evals.jsonl`` - one JSON line per evaluation against pubeval (``games_trained``, ``ppg``, ``ci95`` ...).
* ``config.yaml`` - the run's resolved config; tensorboard event files, tags grouped as ``charts/`` (games/s,
  game length, gammon and backgammon rates in self-play, learning rate, lambda), ``losses/`` (mean squared TD
  error, i.e. of the lambda-returns) and ``eval/`` (ppg against pubeval with its 95% confidence interval).

Evaluation (every ``eval_every`` games and at the end): ``eval_games`` duplicate-dice games of the current
network at 0-ply against pubeval (:func:`bgai.evaluate.series.evaluate`), the same dice series every time.
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Callable

import yaml

from bgai.agents.neural import NeuralAgent
from bgai.errors import CheckpointError, ConfigError
from bgai.evaluate.series import evaluate
from bgai.model.bundle import build_checkpoint, net_from_checkpoint, read_checkpoint, save_checkpoint
from bgai.train.config import TrainConfig
from bgai.train.td import SelfPlayTrainer, check_resumable
from bgai.util.fileio import ensure_directory


@dataclass
class RunResult:
    """What :func:`train` did: final game counter, whether it was interrupted, evaluations, paths."""

    games: int
    interrupted: bool
    evals: list[dict] = field(default_factory=list)
    last_path: str = ""
    best_path: str | None = None
    seconds: float = 0.0


#: Config keys that define the network (or its inputs): a resumed run keeps the checkpoint's.
FIXED_ON_RESUME = ("encoding", "hidden", "activation")


def evaluate_net(trainer: SelfPlayTrainer, games: int, seed: int, workers: int = 1) -> dict:
    """Duplicate-dice evaluation of the trainer's current network at 0-ply against pubeval.

    Returns:
        ``{'games_trained', 'opponent', 'games', 'ppg', 'ci95', 'win', 'gammon', 'seconds'}``.
    """
    import copy


    agent = NeuralAgent(copy.deepcopy(trainer.net), trainer.encoder, ply=0, name="bgai")
    rep = evaluate(agent, "pubeval", games, seed, workers=workers)
    return {
        "games_trained": int(trainer.games),
        "opponent": "pubeval",
        "games": int(rep.games),
        "ppg": float(rep.ppg),
        "ci95": float(rep.ci95),
        "win": float(rep.a.win),
        "gammon": float(rep.a.gammon),
        "seconds": float(rep.seconds),
    }


def lock_run_folder(out_dir: str):
    """Hold an exclusive lock on ``out_dir/.lock`` (``fcntl.flock``, released when the returned file is closed or
    the process ends), so that two runs cannot write one run folder; ``None`` where ``fcntl`` is missing.

    Raises:
        ConfigError: another process holds the folder.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    fh = open(os.path.join(out_dir, ".lock"), "a+", encoding="utf-8")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise ConfigError(f"run folder {out_dir!r} is in use by another 'bgai train'; wait for it or use another --out")
    return fh


class _StopFlag:
    """Turns SIGINT/SIGTERM into a flag checked between steps (so the state on disk is always consistent)."""

    def __init__(self) -> None:
        self.stop = False
        self._old: dict[int, object] = {}

    def __enter__(self) -> "_StopFlag":
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[sig] = signal.signal(sig, self._handler)
            except ValueError:  # not the main thread
                pass
        return self

    def _handler(self, signum, frame) -> None:
        if self.stop:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.stop = True

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def train(
    config: TrainConfig | None,
    out_dir: str,
    *,
    resume: bool = False,
    overrides: dict | None = None,
    progress: bool = True,
    tensorboard: bool = True,
    evaluate: bool = True,
    on_step: Callable[[SelfPlayTrainer], None] | None = None,
) -> RunResult:
    """Train (or resume) a run into ``out_dir`` until ``config.games`` games (see the module docstring).

    Args:
        config: the run's config (ignored with ``resume``, which takes the checkpoint's).
        out_dir: run folder.
        resume: continue from ``out_dir/last.pt``.
        overrides: with ``resume``: config fields to change (e.g. ``{'games': 2_000_000}`` to extend a run).
        progress: tqdm progress bar on stderr.
        tensorboard: write tensorboard logs.
        evaluate: run the evaluations against pubeval (tests switch them off).
        on_step: called after every step (tests).

    Returns:
        :class:`RunResult`.

    Raises:
        CheckpointError: ``resume`` without a readable ``last.pt``, or with a training state that cannot continue
            with the config (another layout, ``parallel_games`` or ``workers``).
        ConfigError: bad overrides, or an override of :data:`FIXED_ON_RESUME` on ``resume``.
        BgaiError: the run folder cannot be created or written.
        SelfPlayWorkerError: a self-play worker process failed (the last checkpoint written stays on disk).
    """
    last_path = os.path.join(out_dir, "last.pt")
    best_path = os.path.join(out_dir, "best.pt")
    evals: list[dict] = []
    if resume:
        ckpt = read_checkpoint(last_path)
        if "trainer" not in ckpt:
            raise CheckpointError(f"{last_path!r} is a model checkpoint without training state; cannot resume")
        data = dict(ckpt["config"])
        data.pop("threads", None)  # written by bgai before 'workers'; such a state is refused below, with reason
        data.update(overrides or {})
        config = TrainConfig.from_dict(data)
        saved = TrainConfig.from_dict({k: v for k, v in ckpt["config"].items() if k != "threads"})
        for key in FIXED_ON_RESUME:
            if getattr(config, key) != getattr(saved, key):
                raise ConfigError(
                    f"config key {key!r} cannot change on --resume (the checkpoint's network has "
                    f"{getattr(saved, key)!r}); start a new run to change it"
                )
        check_resumable(ckpt["trainer"], config)  # before any worker process starts
        net, _ = net_from_checkpoint(ckpt, last_path)
        net.train()
        ensure_directory(out_dir, "run folder")
        lock = lock_run_folder(out_dir)
        trainer = SelfPlayTrainer(config, net=net)
        try:
            trainer.load_state_dict(ckpt["trainer"])
        except BaseException:
            trainer.close()
            raise
        evals = list(ckpt.get("evals", []))
    else:
        if config is None:
            raise ConfigError("a config is needed to start a run")
        if os.path.exists(last_path):
            raise ConfigError(f"{out_dir!r} already holds a run (last.pt); use --resume or another --out")
        ensure_directory(out_dir, "run folder")
        lock = lock_run_folder(out_dir)
        if os.path.exists(last_path):  # another run started there since the check above
            raise ConfigError(f"{out_dir!r} already holds a run (last.pt); use --resume or another --out")
        trainer = SelfPlayTrainer(config)
    try:
        with open(os.path.join(out_dir, "config.yaml"), "w", encoding="utf-8") as fh:
            yaml.safe_dump(config.to_dict(), fh, sort_keys=False)

        writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            writer = SummaryWriter(out_dir)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=config.games, initial=min(trainer.games, config.games), unit="game", dynamic_ncols=True)

        best_ppg = max((e["ppg"] for e in evals), default=-math.inf)

        def save(path: str, with_trainer: bool) -> None:
            ckpt = build_checkpoint(
                trainer.net,
                trainer.encoder,
                config.to_dict(),
                trainer.games,
                evals,
                trainer.state_dict() if with_trainer else None,
            )
            save_checkpoint(ckpt, path)

        def run_eval() -> None:
            nonlocal best_ppg
            res = evaluate_net(trainer, config.eval_games, config.eval_seed)
            evals.append(res)
            save(os.path.join(out_dir, "snapshots", f"model-{trainer.games:09d}.pt"), with_trainer=False)
            with open(os.path.join(out_dir, "evals.jsonl"), "a", encoding="utf-8") as fh:
                fh.write(json.dumps(res) + "\n")
            if writer is not None:
                writer.add_scalar("eval/ppg_vs_pubeval", res["ppg"], trainer.games)
                writer.add_scalar("eval/ppg_ci95_low", res["ppg"] - res["ci95"], trainer.games)
                writer.add_scalar("eval/ppg_ci95_high", res["ppg"] + res["ci95"], trainer.games)
                writer.add_scalar("eval/win_rate", res["win"], trainer.games)
                writer.flush()
            if res["ppg"] > best_ppg:
                best_ppg = res["ppg"]
                save(best_path, with_trainer=False)

        # accumulators for the scalar logs
        acc = {"games": 0, "plies": 0, "gammons": 0, "bgs": 0, "loss": 0.0, "loss_n": 0, "t0": time.perf_counter(), "g0": trainer.games}
        next_log = (trainer.games // config.log_every + 1) * config.log_every
        next_eval = (trainer.games // config.eval_every + 1) * config.eval_every if config.eval_every else math.inf
        next_ckpt = (trainer.games // config.checkpoint_every + 1) * config.checkpoint_every if config.checkpoint_every else math.inf
        last_eval_text = ""
        t_start = time.perf_counter()
        interrupted = False
        with _StopFlag() as flag:
            try:
                while trainer.games < config.games:
                    if flag.stop:
                        interrupted = True
                        break
                    finished, stats = trainer.step()
                    if on_step is not None:
                        on_step(trainer)
                    for g in finished:
                        acc["games"] += 1
                        acc["plies"] += g.plies
                        acc["gammons"] += g.points >= 2
                        acc["bgs"] += g.points >= 3
                    if stats is not None:
                        acc["loss"] += stats.loss * stats.positions
                        acc["loss_n"] += stats.positions
                    if finished and bar is not None:
                        bar.update(min(trainer.games, config.games) - bar.n)
                    if trainer.games >= next_log:
                        next_log = (trainer.games // config.log_every + 1) * config.log_every
                        now = time.perf_counter()
                        gps = (trainer.games - acc["g0"]) / max(now - acc["t0"], 1e-9)
                        if writer is not None and acc["games"]:
                            writer.add_scalar("charts/games_per_s", gps, trainer.games)
                            writer.add_scalar("charts/game_length_plies", acc["plies"] / acc["games"], trainer.games)
                            writer.add_scalar("charts/selfplay_gammon_rate", acc["gammons"] / acc["games"], trainer.games)
                            writer.add_scalar("charts/selfplay_backgammon_rate", acc["bgs"] / acc["games"], trainer.games)
                            writer.add_scalar("charts/lr", trainer.lr(), trainer.games)
                            writer.add_scalar("charts/lambda", trainer.lam(), trainer.games)
                            if acc["loss_n"]:
                                writer.add_scalar("losses/td_error", acc["loss"] / acc["loss_n"], trainer.games)
                        if bar is not None:
                            bar.set_postfix_str(f"{gps:.0f} games/s{last_eval_text}")
                        acc.update(games=0, plies=0, gammons=0, bgs=0, loss=0.0, loss_n=0, t0=now, g0=trainer.games)
                    if evaluate and trainer.games >= next_eval and trainer.games < config.games:
                        next_eval = (trainer.games // config.eval_every + 1) * config.eval_every
                        run_eval()
                        e = evals[-1]
                        last_eval_text = f", vs pubeval {e['ppg']:+.3f}+-{e['ci95']:.3f}"
                        if bar is not None:
                            bar.set_postfix_str(f"eval{last_eval_text}")
                        acc.update(t0=time.perf_counter(), g0=trainer.games)
                    if trainer.games >= next_ckpt:
                        next_ckpt = (trainer.games // config.checkpoint_every + 1) * config.checkpoint_every
                        save(last_path, with_trainer=True)
            except KeyboardInterrupt:  # a second Ctrl-C mid-step: the last consistent checkpoint stays on disk
                interrupted = True
                if bar is not None:
                    bar.close()
                if writer is not None:
                    writer.close()
                raise
            if not interrupted and evaluate and (not evals or evals[-1]["games_trained"] != trainer.games):
                run_eval()
            save(last_path, with_trainer=True)
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
        return RunResult(
            games=trainer.games,
            interrupted=interrupted,
            evals=evals,
            last_path=last_path,
            best_path=best_path if os.path.exists(best_path) else None,
            seconds=time.perf_counter() - t_start,
        )
    finally:
        trainer.close()  # stop the self-play worker processes
        if lock is not None:
            lock.close()  # releases the run folder
