"""Trajectory labels: every position of a self-play game labelled with the game's luck-adjusted outcome from there.

A label of this kind is a one-trial rollout of its position with variance reduction (:mod:`bgai.analysis.rollout`,
docstring (c)): the game is played on by the labelling model at 0-ply, and the luck of every later roll -- the
0-ply value of the best play for the roll rolled, less the mean of that value over the 21 rolls, as GNU
Backgammon's rollouts reduce variance (``eval.c``, ``rollout.c``) -- is taken off the outcome.  Each luck term has
expectation 0 whatever the position, so the label is an unbiased estimate of the position's probabilities under the
model's 0-ply play (TD(lambda = 1), the Monte Carlo return, with the net's luck as a control variate); the net's
own errors do not enter it, where a 2-ply search label repeats them at its leaves.  One game labels all of its
positions, so these labels cost one 21-roll look-ahead per position where a rollout of 36 trials costs 36 games:
about 600 labels a second on one core against about 1 for ``rollout`` labels of 36 trials and 20 for ``ply2``.
Each label is noisy (about 0.14 equity standard deviation in contact positions, against the 0.06 root-mean-square
bias of bgai-sl8's 2-ply labels against rollouts) and may lie outside [0, 1]; its mean is right, so it is trained
on as it is (:func:`bgai.train.supervised.load_dataset` does not clip it; the binary cross-entropy's gradient is
linear in the target).

The games (vectorised, all of a shard's together): the opening roll is a non-double, played by the model and not
labelled; every later position before a roll is labelled.  Exploring plays (``explore`` > 0): in the first
``explore_plies`` plies (0 = all), each play is with probability ``explore`` drawn uniformly among the ``candidates``
best plays at 0-ply (0 = among all legal plays) instead of the best; such a play loses equity the outcome then
holds, so only the positions after a game's last exploring play are labelled.  Games that reach a bear-off end
there with the model's exact database probabilities when it has the database (``model.pt:bearoff=db``), as the
rollouts do.
"""

from __future__ import annotations

import numpy as np

from bgai.agents.base import Agent
from bgai.analysis.rollout import RolloutPolicy
from bgai.core.board import flip, starting_board
from bgai.core.dice import ROLL_INDEX, ROLL_WEIGHTS
from bgai.core.equity import cubeless_equity, finished_probabilities, swap_perspective
from bgai.core.movegen import afterstates
from bgai.errors import BgaiError
from bgai.game.play import MAX_PLIES, finish_games
from bgai.model.routing import all_home

__all__ = ["trajectory_labels", "LOOKAHEAD_CHUNK"]

#: Positions whose 21 rolls go through the move generator and the evaluator together (bounds memory).
LOOKAHEAD_CHUNK = 64


def _opening_dice(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 2)`` opening rolls: two different dice (each player throws one die; a tie is thrown again)."""
    d = rng.integers(1, 7, size=(n, 2))
    while (same := d[:, 0] == d[:, 1]).any():
        d[same] = rng.integers(1, 7, size=(int(same.sum()), 2))
    return d


def _exploring_plays(policy: RolloutPolicy, boards: np.ndarray, dice: np.ndarray, candidates: int,
                     rng: np.random.Generator) -> np.ndarray:
    """For each row a play drawn uniformly among its ``candidates`` best 0-ply plays (0: among all legal plays)."""
    after, src = afterstates(boards, dice, validate=False)
    eq = -cubeless_equity(policy.evaluate(flip(after)))
    order = np.lexsort((-eq, src))  # by position, best first
    first = np.searchsorted(src[order], np.arange(len(boards)), side="left")
    count = np.bincount(src, minlength=len(boards))
    k = count if candidates <= 0 else np.minimum(count, candidates)
    pick = first + (rng.random(len(boards)) * k).astype(np.int64)
    return after[order[pick]]


def trajectory_labels(agent: Agent, games: int, rng: np.random.Generator, *, explore: float = 0.0,
                      explore_plies: int = 0, candidates: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Play ``games`` self-play games of ``agent`` at 0-ply and label their positions (module docstring).

    Args:
        agent: a model with probabilities (:class:`~bgai.agents.base.ProbabilityAgent`, e.g. a neural agent; with
            ``bearoff=db`` bear-offs end with the database's values).
        games: games to play (>= 1).
        rng: the dice and the exploring draws.
        explore: probability of an exploring play in each ply of the first ``explore_plies`` (0 <= explore < 1).
        explore_plies: plies that may explore (0 = all).
        candidates: exploring plays are drawn among this many best plays at 0-ply (0 = all legal plays).

    Returns:
        ``(boards, probs)``: ``(N, 2, 25)`` int8 positions before a roll (side on roll in row 0), in game order
        and ply order within a game, and ``(N, 5)`` float64 labels (:data:`bgai.core.equity.OUTPUTS` order, for
        the side on roll; unbiased, not clipped into [0, 1]).

    Raises:
        BgaiError: an agent without probabilities (no 0-ply values to look ahead with).
        RuntimeError: a game ran past :data:`bgai.game.play.MAX_PLIES` plies (a broken agent).
    """
    policy = RolloutPolicy(agent)
    if policy.evaluator is None:
        raise BgaiError(f"trajectory labels need an agent with probabilities, got {getattr(agent, 'name', agent)!r}")
    boards = np.repeat(starting_board()[None], games, axis=0).astype(np.int8)
    live = np.ones(games, dtype=bool)
    last_explore = np.full(games, -1)
    # the value of each game's end for the side on roll when it ended (module docstring), filled as games end
    end_value = np.zeros((games, 5))
    records: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per ply >= 1: (games, boards, luck)
    ply = 0
    while live.any():
        idx = np.flatnonzero(live)
        if policy.exact_bearoff:
            home = all_home(boards[idx])
            if home.any():
                ended = idx[home]
                end_value[ended] = policy.evaluate(boards[ended])
                live[ended] = False
                idx = idx[~home]
                if not idx.size:
                    break
        b = boards[idx]
        if ply == 0:
            chosen = policy.choose(b, _opening_dice(rng, len(idx)), rng)  # the 0-ply best play; draws nothing
        else:
            dice = rng.integers(1, 7, size=(len(idx), 2))
            roll = ROLL_INDEX[dice[:, 0], dice[:, 1]]
            probs = np.empty((len(idx), 21, 5))
            best = np.empty((len(idx), 21, 2, 25), dtype=np.int8)
            for i in range(0, len(idx), LOOKAHEAD_CHUNK):
                probs[i : i + LOOKAHEAD_CHUNK], best[i : i + LOOKAHEAD_CHUNK] = policy.lookahead(
                    b[i : i + LOOKAHEAD_CHUNK])
            rows = np.arange(len(idx))
            luck = probs[rows, roll] - np.einsum("nrk,r->nk", probs, ROLL_WEIGHTS)
            records.append((idx, b, luck))
            chosen = best[rows, roll]
            if explore and (not explore_plies or ply < explore_plies):
                wild = np.flatnonzero(rng.random(len(idx)) < explore)
                if wild.size:
                    chosen[wild] = _exploring_plays(policy, b[wild], dice[wild], candidates, rng)
                    last_explore[idx[wild]] = ply
        done, _ = finish_games(chosen)
        if done.any():
            ended = idx[done]
            # the loser, on roll at the next ply, facing a board its opponent has borne off: exact probabilities
            end_value[ended] = finished_probabilities(flip(chosen[done]))[1]
            live[ended] = False
        going = idx[~done]
        boards[going] = flip(chosen[~done])
        ply += 1
        if ply > MAX_PLIES:
            raise RuntimeError(f"a self-play game did not finish within {MAX_PLIES} plies")
    # backwards: the label at ply t is the label at ply t + 1 seen by the other side, less the luck of ply t's roll
    value = end_value.copy()
    labelled: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
    for t in range(len(records), 0, -1):
        idx, b, luck = records[t - 1]
        value[idx] = swap_perspective(value[idx]) - luck
        keep = t > last_explore[idx]
        labelled.append((idx[keep], b[keep], value[idx[keep]].copy(), t))
    if not labelled:
        return np.zeros((0, 2, 25), np.int8), np.zeros((0, 5))
    g = np.concatenate([x[0] for x in labelled])
    t = np.concatenate([np.full(len(x[0]), x[3]) for x in labelled])
    order = np.lexsort((t, g))
    out_b = np.concatenate([x[1] for x in labelled])[order]
    out_p = np.concatenate([x[2] for x in labelled])[order]
    return out_b.astype(np.int8), out_p
