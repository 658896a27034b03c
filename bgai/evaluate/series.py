"""Series of games between two agents, with duplicate dice, statistics and reports.

Duplicate dice (the default): games are played in mirrored pairs.  Pair ``p`` plays the dice generator
:func:`bgai.game.play.dice_rng` ``(seed, p)`` twice, once with A in seat 0 and once with A in seat 1, so both players
get the same luck; the pair's average is one sample, and the 95% confidence interval of the points per game
(ppg) comes from the variance between pairs.  Plain mode plays independent games (game ``g`` uses
``dice_rng(seed, g)``, A's seat alternating) and takes the variance between games.

Work units and reproducibility: the games are cut into work units of ``chunk_games`` games (whole pairs), run
by :func:`bgai.util.parallel.run_units` (in this process, or in worker processes); unit ``c`` gives its agents
``np.random.default_rng(SeedSequence(seed, spawn_key=(1, c)))``.  Units are independent of each other and of the
process that plays them, so a series depends on ``(seed, games, chunk_games)`` only, never on the number of
workers.  The default unit size (:func:`series_unit_size`) is chosen from the number of games and the agents
(their :attr:`~bgai.agents.base.Agent.batch_games`), never from the workers: about 16 units, so that up to 16
workers have work, but no fewer games per unit than the agents need to play at speed (500 for batched bots such
as pubeval or a 0-ply net, 64 for gnubg or a 1-ply/2-ply search) and no more than :data:`CHUNK_GAMES`.  For
example 1,000 games of pubeval: 2 units of 500; 1,000 games of a 1-ply net: 16 units of 64 (the last 40);
100,000 games: 100 units of 1,000.

Batches: a process plays its units in groups (:func:`unit_groups`: as many groups for each worker, of at most about
:data:`GROUP_GAMES` games), each group in one batch with continuous batching (:func:`play_units`: the next unit
starts as soon as fewer than :func:`batch_width` games are playing), so that the batch stays large until the
group's last games instead of running each unit's last games in small batches.  Every unit's games are still
exactly those of the unit played alone; the grouping changes the speed only.

Interruption: Ctrl-C or SIGTERM during a series stops it cleanly (:mod:`bgai.util.parallel`); the finished work
groups of units (whole duplicate pairs) are summarised as a *partial* report (:attr:`EvalReport.partial`).

Statistics: ppg = mean of A's points per game (cubeless money, 1/2/3 a game); 95% CI = ppg +- 1.96 standard
errors (normal approximation).  Win % counts all wins; gammon % counts wins by gammon **or** backgammon and
backgammon % wins by backgammon (cumulative, like GNU Backgammon's outputs), each as a share of all games.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np

from bgai.agents.base import Agent
from bgai.agents.pubeval import PubevalAgent, prepare_long_run
from bgai.agents.registry import make_agent
from bgai.errors import BgaiError
from bgai.evaluate.luck import game_luck, luck_judge
from bgai.evaluate.savegames import GameSaver, SavedUnit, unit_files
from bgai.game.play import CUBELESS_RULES, GameResults, dice_rng, play_games
from bgai.util.fileio import atomic_write_json
from bgai.util.parallel import run_units, unit_size
from bgai.util.progress import progress_bar

#: The largest work unit, in games (an even number, so duplicate pairs are never split).  Larger batches run
#: faster per game (numpy overhead per ply is shared by more games) up to about this size.  A series uses at most
#: one worker per unit (a work unit is never split, so that results do not depend on the number of workers); the
#: report says how many were used.
CHUNK_GAMES = 1000

#: Games from which a series loads pubeval's compiled kernel before it starts
#: (:func:`bgai.agents.pubeval.prepare_long_run`: about 0.2 CPU s once, against about 0.25 ms a game saved).
LONG_SERIES = 1000

#: Work units a series is cut into when it is large enough (:func:`series_unit_size`).
TARGET_UNITS = 16

#: z value of a two-sided 95% normal confidence interval.
Z95 = 1.959963984540054


@dataclass
class SideStats:
    """Outcome shares for one player, as fractions of all games (0..1)."""

    win: float
    gammon: float
    backgammon: float


@dataclass
class EvalReport:
    """Result of :func:`evaluate`, for A against B.

    Attributes:
        agent_a, agent_b: names/specs.
        mode: ``'duplicate'`` or ``'plain'``.
        games, seed, workers: as run.
        ppg: A's mean points per game (cubeless money).
        ci95: half-width of the 95% confidence interval of ``ppg`` (points per game).
        stderr: standard error of ``ppg``.
        a, b: :class:`SideStats` for each player.
        avg_plies: mean game length in plies (turns, passes included).
        seconds: wall time of the games; ``games_per_s`` = games / seconds.
        chunk_games: games per work unit (at most ``ceil(games / chunk_games)`` workers are used).
        partial: the series was interrupted: the report covers the work units that finished (``games`` of
            ``games_requested``); ``interrupted`` names the signal (``'SIGINT'``, ``'SIGTERM'``).
        luck_judge: the judge of the luck analysis (:mod:`bgai.evaluate.luck`), else ``None``; then
            ``adjusted_ppg``, ``adjusted_ci95``, ``adjusted_stderr``: A's luck-adjusted points per game (the same
            expectation as ``ppg``, less variance), its 95% half-width and standard error (pairs in duplicate mode).
    """

    agent_a: str
    agent_b: str
    mode: str
    games: int
    seed: int
    workers: int
    ppg: float
    ci95: float
    stderr: float
    a: SideStats
    b: SideStats
    avg_plies: float
    seconds: float
    games_per_s: float
    chunk_games: int = CHUNK_GAMES
    partial: bool = False
    interrupted: str | None = None
    games_requested: int | None = None
    luck_judge: str | None = None
    adjusted_ppg: float | None = None
    adjusted_ci95: float | None = None
    adjusted_stderr: float | None = None

    def to_dict(self) -> dict:
        """A JSON-ready dict (the ``--json`` output of ``bgai eval``)."""
        d = asdict(self)
        d["ci95_low"] = self.ppg - self.ci95
        d["ci95_high"] = self.ppg + self.ci95
        if self.luck_judge is None:
            for k in ("luck_judge", "adjusted_ppg", "adjusted_ci95", "adjusted_stderr"):
                del d[k]
        return d

    def table(self) -> str:
        """Human-readable report (agent names in full; equal names labelled ``(A)`` and ``(B)``)."""
        A, B = side_labels(self.agent_a, self.agent_b)
        w = name_width(A, B)
        units = math.ceil(self.games / self.chunk_games)
        rows = [
            f"{A} vs {B}: {self.games} games ({self.mode} dice), seed {self.seed}"
            f"{partial_note(self.partial, self.interrupted, self.games, self.games_requested, 'games')}",
            f"  ppg for {A}: {_ppg_text(self.ppg, self.ci95)}",
        ]
        if self.luck_judge is not None:
            rows.append(f"  luck-adjusted ppg for {A}: {_ppg_text(self.adjusted_ppg, self.adjusted_ci95)}, luck judged "
                        f"by {self.luck_judge}")
        rows.append(f"  {'':<{w}}{'win %':>8}{'gammon %':>10}{'bg %':>8}")
        for name, s in ((A, self.a), (B, self.b)):
            rows.append(f"  {name:<{w}}{100 * s.win:8.2f}{100 * s.gammon:10.2f}{100 * s.backgammon:8.2f}")
        rows.append(f"  average game length: {self.avg_plies:.1f} plies")
        rows.append(f"  {self.games_per_s:.1f} games/s ({self.seconds:.1f} s, {self.workers} worker(s) for "
                    f"{units} work unit(s) of up to {self.chunk_games} games)")
        return "\n".join(rows)


def _ppg_text(ppg: float, ci95: float) -> str:
    """``+0.601 +- 0.043 (95% CI +0.557 .. +0.644)``; without the bounds when there is no interval."""
    bounds = f" (95% CI {ppg - ci95:+.3f} .. {ppg + ci95:+.3f})" if math.isfinite(ci95) else ""
    return f"{ppg:+.3f} {interval_text(ci95)}{bounds}"


def interval_text(ci95: object) -> str:
    """``+- 0.050`` for a finite 95% half-width (ppg), ``(no interval)`` for NaN or a missing one (one duplicate
    pair: no spread to measure)."""
    if isinstance(ci95, (int, float)) and math.isfinite(ci95):
        return f"+- {ci95:.3f}"
    return "(no interval)"


def partial_note(partial: bool, interrupted: str | None, done: int, requested: int | None, what: str) -> str:
    """``''`` for a complete series, else the mark of a partial report's first line, e.g.
    ``' -- PARTIAL: interrupted (SIGINT) after 400 of 1000 games'``."""
    if not partial:
        return ""
    return f" -- PARTIAL: interrupted ({interrupted or 'stopped'}) after {done} of {requested} {what}"


def side_labels(agent_a: str, agent_b: str) -> tuple[str, str]:
    """Names for the two sides of a report: the specs, or ``'spec (A)'`` / ``'spec (B)'`` when they are equal."""
    if agent_a == agent_b:
        return f"{agent_a} (A)", f"{agent_b} (B)"
    return agent_a, agent_b


def name_width(*names: str) -> int:
    """Column width for agent names in report tables: the longest name (at least 14 characters), never cut."""
    return max(14, *(len(n) + 2 for n in names))


def summarize(
    results: GameResults, *, duplicate: bool, agent_a: str, agent_b: str, seed: int, workers: int, seconds: float,
    chunk_games: int = CHUNK_GAMES, luck_judge: str | None = None,
) -> EvalReport:
    """Statistics of a series (games in pair order for duplicate mode: games 2p and 2p+1 form pair p); with
    ``results.luck`` also the luck-adjusted figures, ``luck_judge`` naming the judge.

    Raises:
        BgaiError: no games.
    """
    pts = results.points_a.astype(np.float64)
    n = pts.size
    if n == 0:
        raise BgaiError("no games to summarize")

    def mean_se(values: np.ndarray) -> tuple[float, float]:
        samples = values.reshape(-1, 2).mean(axis=1) if duplicate else values
        se = float(samples.std(ddof=1) / math.sqrt(samples.size)) if samples.size > 1 else float("nan")
        return float(samples.mean()), se

    ppg, stderr = mean_se(pts)
    adjusted = {}
    if results.luck is not None:
        adj, adj_se = mean_se(pts - results.luck)
        adjusted = dict(luck_judge=luck_judge or "a judge", adjusted_ppg=adj, adjusted_ci95=Z95 * adj_se,
                        adjusted_stderr=adj_se)

    def side(player: int) -> SideStats:
        won = results.winner == player
        return SideStats(
            win=float(won.mean()),
            gammon=float((won & (results.points >= 2)).mean()),
            backgammon=float((won & (results.points >= 3)).mean()),
        )

    return EvalReport(
        agent_a=agent_a,
        agent_b=agent_b,
        mode="duplicate" if duplicate else "plain",
        games=n,
        seed=seed,
        workers=workers,
        ppg=ppg,
        ci95=Z95 * stderr,
        stderr=stderr,
        a=side(0),
        b=side(1),
        avg_plies=float(results.plies.mean()),
        seconds=seconds,
        games_per_s=n / seconds if seconds > 0 else float("inf"),
        chunk_games=chunk_games,
        **adjusted,
    )


# --- work units -----------------------------------------------------------------------------------------------


def build_agent(agent: str | Agent) -> Agent:
    """``agent`` itself, or the agent of a spec string (:func:`bgai.agents.registry.make_agent`)."""
    if isinstance(agent, Agent):
        return agent

    return make_agent(agent)


def build_agents(agent_a: str | Agent, agent_b: str | Agent, same: bool) -> tuple[Agent, Agent]:
    """The two agents of a series (built once when ``same``): the worker context of :func:`run_units`."""
    a = build_agent(agent_a)
    return a, a if same else build_agent(agent_b)


def series_unit_size(count: int, agents: tuple[Agent, Agent], largest: int = CHUNK_GAMES) -> int:
    """Default work-unit size of a series of ``count`` games (or matches) between ``agents``: about
    :data:`TARGET_UNITS` units, at least the smaller :attr:`~bgai.agents.base.Agent.batch_games` of the two
    agents, at most ``largest``, even (:func:`bgai.util.parallel.unit_size`).  Independent of the workers."""
    smallest = min(largest, *(int(getattr(a, "batch_games", Agent.batch_games)) for a in agents))
    return unit_size(count, smallest=smallest, largest=largest, target_units=TARGET_UNITS)


def play_unit(
    agents: tuple[Agent, Agent], seed: int, unit: int, games: int, chunk_games: int, duplicate: bool,
    record: bool = False,
) -> GameResults:
    """Play work unit ``unit`` of a series of ``games`` games (see the module docstring).

    Returns:
        :class:`~bgai.game.play.GameResults` of the unit's games in series order (pairs adjacent in duplicate mode),
        with their :class:`~bgai.game.play.GameRecord` when ``record``.
    """
    start = unit * chunk_games
    stop = min(start + chunk_games, games)
    ids = np.arange(start, stop)
    if duplicate:
        dice_ids = ids // 2
        a_seat = ids % 2
    else:
        dice_ids = ids
        a_seat = ids % 2
    rngs = [dice_rng(seed, int(i)) for i in dice_ids]
    agent_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, unit)))
    return play_games(agents, rngs, agent_rng, a_seat=a_seat, record=record)


def batch_width(agents: tuple[Agent, Agent], chunk_games: int) -> int:
    """Games kept playing together when one process plays several work units (:func:`play_units`): twice the
    smaller :attr:`~bgai.agents.base.Agent.batch_games` of the two agents, at least one unit."""
    return max(chunk_games, 2 * min(int(getattr(a, "batch_games", Agent.batch_games)) for a in agents))


def play_units(
    agents: tuple[Agent, Agent], seed: int, units: Sequence[int], games: int, chunk_games: int, duplicate: bool,
    record: bool = False,
) -> list[GameResults]:
    """Play several work units of a series in one batch, with continuous batching: each unit starts (all its
    games at once) as soon as fewer than :func:`batch_width` games are playing, so the batch stays large until
    the last unit's last games (:func:`bgai.game.play.play`'s ``groups``).

    Returns:
        one :class:`~bgai.game.play.GameResults` per unit, in the order of ``units``: each the same as
        :func:`play_unit` of that unit (the same dice, seats and agent rng; agents that may use their rng get each
        unit's positions in calls of their own unless both are
        :attr:`~bgai.agents.base.Agent.batch_invariant`).
    """
    rngs, seats, sizes, agent_rngs = [], [], [], []
    for unit in units:
        ids = np.arange(unit * chunk_games, min(unit * chunk_games + chunk_games, games))
        rngs += [dice_rng(seed, int(i)) for i in (ids // 2 if duplicate else ids)]
        seats.append(ids % 2)
        sizes.append(ids.size)
        agent_rngs.append(np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, unit))))
    res = play_games(agents, rngs, agent_rngs, a_seat=np.concatenate(seats), groups=sizes,
                     width=batch_width(agents, chunk_games), record=record)
    bounds = np.cumsum([0] + sizes)
    return [GameResults(winner=res.winner[lo:hi], points=res.points[lo:hi], plies=res.plies[lo:hi],
                        a_seat=res.a_seat[lo:hi], records=res.records[lo:hi] if record else None)
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def run_play_unit(agents: tuple[Agent, Agent], job: tuple) -> GameResults:
    """:func:`play_unit` as a :func:`~bgai.util.parallel.run_units` job: ``job = (seed, unit, games, chunk_games,
    duplicate)``."""
    return play_unit(agents, *job)


def run_play_units(agents: tuple[Agent, Agent], job: tuple) -> list[tuple[int, GameResults]]:
    """:func:`play_units` as a :func:`~bgai.util.parallel.run_units` job: ``job = (seed, units, games, chunk_games,
    duplicate, luck)``; returns ``(unit, results)`` for each unit, with each game's luck for A judged by the agent
    spec ``luck`` (:mod:`bgai.evaluate.luck`; ``None``: none)."""
    seed, units, games, chunk, duplicate, luck = job
    done = play_units(agents, seed, units, games, chunk, duplicate, record=luck is not None)
    for res in done:
        _judge(res, luck)
    return list(zip(units, done))


def _judge(res: GameResults, luck: str | Agent | None) -> None:
    """Set ``res.luck`` from its records (judged by ``luck``, an agent or its spec) and drop the records."""
    if luck is not None:
        res.luck = game_luck(res.records, luck_judge(luck))
    res.records = None


def run_saved_play_unit(agents: tuple[Agent, Agent], job: tuple) -> list[tuple[int, SavedUnit]]:
    """:func:`run_play_unit` that also writes the unit's games as match text (:mod:`bgai.evaluate.savegames`):
    ``job = (seed, (unit,), games, chunk_games, duplicate, save, luck)`` with ``save`` a
    :class:`~bgai.evaluate.savegames.SaveSpec` and ``luck`` as in :func:`run_play_units`; returns
    ``[(unit, saved unit)]``.  The same games (and results) as without saving."""
    seed, (unit,), games, chunk, duplicate, save, luck = job
    res = play_unit(agents, seed, unit, games, chunk, duplicate, record=True)
    files = unit_files(res.records, save, unit=unit, first=unit * chunk, total=games)
    _judge(res, luck)
    return [(unit, SavedUnit(results=res, files=files, games=len(res.points)))]


#: About the most games in one group of units (:func:`unit_groups`): a group is reported (progress bar, partial
#: report after Ctrl-C) when its last game ends; each group costs one tail of small batches (about 0.1 CPU s).
GROUP_GAMES = 4000


def unit_groups(units: int, chunk_games: int, workers: int) -> list[np.ndarray]:
    """The work units of a series grouped into jobs, each played in one batch by :func:`play_units`: as few
    groups of consecutive units as give every worker the same share, with at most about :data:`GROUP_GAMES` games
    in a group.  The grouping changes only the speed, never the results (:func:`play_units`)."""
    per_worker = math.ceil(units * chunk_games / (workers * GROUP_GAMES))
    return np.array_split(np.arange(units), min(units, workers * per_worker))


def _concat(parts: list[GameResults]) -> GameResults:
    return GameResults(
        winner=np.concatenate([p.winner for p in parts]),
        points=np.concatenate([p.points for p in parts]),
        plies=np.concatenate([p.plies for p in parts]),
        a_seat=np.concatenate([p.a_seat for p in parts]),
        luck=np.concatenate([p.luck for p in parts]) if all(p.luck is not None for p in parts) else None,
    )


#: The most games (or matches) one series plays: its work units are planned up front.
MAX_SERIES = 100_000_000


def check_series(count, *, duplicate: bool, workers: int, chunk: int, seed: int, what: str = "games") -> None:
    """Check the arguments of a series (cubeless here, cubeful and matches in :mod:`bgai.game.play_cube`).

    Raises:
        BgaiError: ``count`` (of ``what``: games or matches) not a positive integer, above :data:`MAX_SERIES`, or
            odd in duplicate mode
            (mirrored pairs); ``workers`` < 1; ``chunk`` (games per work unit) not an even number >= 2; ``seed`` < 0.
    """
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count <= 0:
        raise BgaiError(f"number of {what} must be a positive integer, got {count!r}")
    if count > MAX_SERIES:
        raise BgaiError(f"number of {what} must be at most {MAX_SERIES:,} in one series, got {count:,} "
                        "(run several series with other seeds)")
    if duplicate and count % 2:
        raise BgaiError(f"duplicate mode plays mirrored pairs: the number of {what} must be even, got {count}")
    if workers < 1:
        raise BgaiError(f"workers must be >= 1, got {workers}")
    if chunk < 2 or chunk % 2:
        raise BgaiError(f"the work unit size must be an even number >= 2, got {chunk}")
    if seed < 0:
        raise BgaiError(f"seed must be >= 0, got {seed}")


def evaluate(
    agent_a: str | Agent,
    agent_b: str | Agent,
    games: int,
    seed: int,
    *,
    workers: int = 1,
    duplicate: bool = True,
    chunk_games: int | None = None,
    progress: bool = False,
    on_unit: Callable[[GameResults], None] | None = None,
    on_plan: Callable[[int, int, int], None] | None = None,
    backend: str = "local",
    save: GameSaver | None = None,
    luck: str | Agent | None = None,
) -> EvalReport:
    """Play a series of cubeless money games between A and B and report A's results.

    Args:
        agent_a, agent_b: agent specs (:func:`bgai.agents.registry.make_agent`) or agent objects (objects are
            pickled to the worker processes when ``workers > 1``).
        games: number of games, > 0; even in duplicate mode.
        seed: series seed (any non-negative int).
        workers: processes to play in (1 = in this process).
        duplicate: mirrored duplicate-dice pairs (default) or plain independent games.
        chunk_games: games per work unit (even); default :func:`series_unit_size` (from ``games`` and the
            agents).  Results depend on it, not on ``workers``.
        progress: show a tqdm progress bar with the running ppg on stderr.
        on_unit: called with each finished unit's results (in completion order).
        on_plan: called before the games with ``(work units, games per unit, workers used)``.
        backend: :func:`bgai.util.parallel.run_units` backend (``'local'``).
        save: write the games as match files (:mod:`bgai.evaluate.savegames`: money sessions of up to 100 games,
            written by this process as each unit finishes); the results are the same as without.
        luck: a 0-ply agent with probabilities, or its spec (``'default'``, ``'gnubg'``, a model): also report
            A's luck-adjusted ppg, the luck of every roll judged by it (:mod:`bgai.evaluate.luck`); the games are
            the same as without, the judge's time is counted in ``seconds``.

    Returns:
        :class:`EvalReport`; after Ctrl-C or SIGTERM a partial one (:attr:`EvalReport.partial`) of the work
        units that finished.

    Raises:
        BgaiError: ``games`` not positive (or odd in duplicate mode), ``workers`` < 1, bad ``chunk_games``;
            :class:`~bgai.errors.AgentSpecError` / :class:`~bgai.errors.CheckpointError` for bad agent specs or a
            ``luck`` judge without probabilities or with a search (raised before any game is played).
        KeyboardInterrupt: interrupted before any work unit finished.
    """
    check_series(games, duplicate=duplicate, workers=workers, chunk=chunk_games or 2, seed=seed)
    same = agent_a is agent_b or (isinstance(agent_a, str) and agent_a == agent_b)
    agents = build_agents(agent_a, agent_b, same)  # validates specs before anything runs
    luck_name = None
    if luck is not None:
        judge = luck_judge(luck)
        luck_name = luck if isinstance(luck, str) else str(getattr(judge, "name", "judge"))
    name_a = agent_a if isinstance(agent_a, str) else agents[0].name
    name_b = agent_b if isinstance(agent_b, str) else agents[1].name
    chunk = chunk_games or series_unit_size(games, agents)
    units = math.ceil(games / chunk)
    if games >= LONG_SERIES and any(isinstance(a, PubevalAgent) for a in agents):
        prepare_long_run()  # pubeval's compiled kernel, loaded once here rather than in each worker
    fn = run_play_units
    jobs = [(seed, tuple(int(u) for u in group), games, chunk, duplicate, luck)
            for group in unit_groups(units, chunk, workers)]
    if save is not None:
        dice = "duplicate" if duplicate else "plain"
        spec = save.spec(name_a, name_b, CUBELESS_RULES, f"bgai eval {name_a} vs {name_b}, cubeless, seed {seed}, {dice} dice")
        jobs = [(seed, (u,), games, chunk, duplicate, spec, luck) for u in range(units)]
        fn = run_saved_play_unit
    if on_plan is not None:
        on_plan(units, chunk, min(workers, len(jobs)))
    bar = None
    if progress:
        bar = progress_bar(total=games, unit="game", desc=f"{name_a} vs {name_b}", file=sys.stderr, dynamic_ncols=True)
    total = [0.0, 0]  # A's points, games

    def collect(job: int, done: list[tuple[int, GameResults | SavedUnit]]) -> None:
        for _, res in done:
            if isinstance(res, SavedUnit):
                res = save.write(res)
            total[0] += float(res.points_a.sum())
            total[1] += len(res.points)
            if bar is not None:
                bar.update(len(res.points))
                bar.set_postfix(ppg=f"{total[0] / total[1]:+.3f}")
            if on_unit is not None:
                on_unit(res)

    t0 = time.perf_counter()
    try:
        run = run_units(fn, jobs, workers=workers, setup=build_agents, setup_args=(agent_a, agent_b, same),
                        context=agents, backend=backend, on_result=collect)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    if not run.results:
        raise KeyboardInterrupt(f"interrupted ({run.interrupted}) before any work unit finished")
    parts = [r.results if isinstance(r, SavedUnit) else r for done in run.ordered() for _, r in done]
    report = summarize(
        _concat(parts), duplicate=duplicate, agent_a=name_a, agent_b=name_b, seed=seed,
        workers=run.workers, seconds=seconds, chunk_games=chunk, luck_judge=luck_name,
    )
    report.partial, report.interrupted, report.games_requested = not run.complete, run.interrupted, games
    return report


def write_json_atomic(path: str, data) -> None:
    """Write ``data`` as JSON (indent 2, trailing newline) to ``path`` atomically.

    Delegates to :func:`bgai.util.fileio.atomic_write_json` (temporary file in the same directory, fsync,
    ``os.replace``; mode ``0o666 & ~umask``; nothing left behind on failure).

    Raises:
        BgaiError: the directory does not exist or is not writable, ``path`` is a directory, or the write
            fails (the message names ``path``).
    """
    atomic_write_json(path, data)
