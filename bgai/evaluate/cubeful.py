"""Cubeful series: money sessions with the doubling cube and N-point matches between two agents, in work units
(optionally in worker processes), with statistics and reports.

The games themselves are played by the game loop (:func:`bgai.game.play.play` with rules, through
:func:`bgai.game.play_cube.play_cubeful`); this module cuts a series into work units, runs them with
:func:`bgai.util.parallel.run_units` (in this process or in worker processes) and summarises.  Work units, their
default size (chosen from the count and the agents, never from the workers, at most :data:`CHUNK_UNITS` games or
matches) and interruption (a partial report of the finished units after Ctrl-C or SIGTERM) are as in
:mod:`bgai.evaluate.series`.  Statistics: money: A's points per game (ppg) with a 95% confidence interval
(normal approximation over pairs in duplicate mode, over games otherwise); match: A's match-winning percentage
with a 95% CI.  Both: win, gammon and backgammon rates per player (of all games, cumulative), average final cube
value per game, doubles offered, takes and passes per player (a take/pass counts for the player who answered).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from bgai.agents.base import Agent
from bgai.errors import BgaiError, MatchStateError
from bgai.evaluate.savegames import GameSaver, SavedUnit, unit_files
from bgai.evaluate.series import build_agents, check_series, name_width, partial_note, series_unit_size, side_labels
from bgai.game.match import MatchRules
from bgai.game.met import load_met
from bgai.game.play import dice_rng
from bgai.game.play_cube import CubefulResults, cube_policy_for, play_cubeful
from bgai.util.parallel import run_units
from bgai.util.progress import progress_bar

__all__ = ["CubeReport", "PlayerCubeStats", "evaluate_cubeful", "summarize_cubeful", "play_cubeful_unit", "CHUNK_UNITS"]

Z95 = 1.959963984540054



@dataclass
class PlayerCubeStats:
    """One player's results.  Rates are fractions of all games (cumulative: gammon includes backgammon)."""

    win: float
    gammon: float
    backgammon: float
    doubles: int
    takes: int
    passes: int


@dataclass
class CubeReport:
    """Result of :func:`evaluate_cubeful` for A against B.

    Attributes:
        mode: ``'money'`` or ``'match'``; ``match_length`` (0 for money); ``units`` (games or matches);
            ``games`` played in all; ``duplicate``; ``seed``; ``workers``; rules (``jacoby``, ``cube_limit``).
        ppg, ppg_ci95: money: A's points per game and the 95% CI half-width (NaN in match mode).
        match_win, match_win_ci95: match: A's match-winning fraction (0..1) and CI half-width (NaN for money).
        avg_cube: mean final cube value per game (before a refused double for passes).
        a, b: :class:`PlayerCubeStats`.
        policies: the cube policy names of A and B.
        avg_games_per_match, avg_plies: lengths; seconds.
        unit_size: games or matches per work unit.
        partial: interrupted: the report covers the finished work units (``units`` of ``units_requested``);
            ``interrupted`` names the signal.
    """

    agent_a: str
    agent_b: str
    mode: str
    match_length: int
    units: int
    games: int
    duplicate: bool
    seed: int
    workers: int
    jacoby: bool
    cube_limit: int | None
    ppg: float
    ppg_ci95: float
    match_win: float
    match_win_ci95: float
    avg_cube: float
    a: PlayerCubeStats
    b: PlayerCubeStats
    policies: tuple[str, str]
    avg_games_per_match: float
    avg_plies: float
    seconds: float
    extra: dict = field(default_factory=dict)
    unit_size: int = 200
    partial: bool = False
    interrupted: str | None = None
    units_requested: int | None = None

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        d = asdict(self)
        for k, v in list(d.items()):
            if isinstance(v, float) and math.isnan(v):
                d[k] = None
        return d

    def table(self) -> str:
        """Human-readable report."""

        A, B = side_labels(self.agent_a, self.agent_b)
        w = name_width(A, B)
        if self.mode == "money":
            rules = f"Jacoby {'on' if self.jacoby else 'off'}, cube limit {self.cube_limit or 'none'}"
            dice = "duplicate" if self.duplicate else "plain"
            head = f"{A} vs {B}: {self.units} cubeful money games ({rules}; {dice} dice), seed {self.seed}"
            what = "games"
            main = (f"  ppg for {A}: {self.ppg:+.3f} +- {self.ppg_ci95:.3f} "
                    f"(95% CI {self.ppg - self.ppg_ci95:+.3f} .. {self.ppg + self.ppg_ci95:+.3f})")
        else:
            head = (f"{A} vs {B}: {self.units} matches to {self.match_length} points ({self.games} games; "
                    f"{'duplicate' if self.duplicate else 'plain'} dice), seed {self.seed}")
            what = "matches"
            lo = max(0.0, self.match_win - self.match_win_ci95)
            hi = min(1.0, self.match_win + self.match_win_ci95)
            main = (f"  match wins for {A}: {100 * self.match_win:.1f}% +- {100 * self.match_win_ci95:.1f} "
                    f"(95% CI {100 * lo:.1f} .. {100 * hi:.1f}%)")
        head += partial_note(self.partial, self.interrupted, self.units, self.units_requested, what)
        rows = [head, main, f"  {'':<{w}}{'win %':>8}{'gammon %':>10}{'bg %':>7}{'doubles':>9}{'takes':>7}{'passes':>8}"]
        for name, s in ((A, self.a), (B, self.b)):
            rows.append(f"  {name:<{w}}{100 * s.win:8.2f}{100 * s.gammon:10.2f}{100 * s.backgammon:7.2f}"
                        f"{s.doubles:9d}{s.takes:7d}{s.passes:8d}")
        rows.append(f"  average cube value {self.avg_cube:.2f} per game; cube policies: {A}: {self.policies[0]}, "
                    f"{B}: {self.policies[1]}")
        if self.mode == "match":
            rows.append(f"  {self.avg_games_per_match:.1f} games per match")
        work = math.ceil(self.units / self.unit_size)
        rows.append(f"  average game length {self.avg_plies:.1f} plies; {self.seconds:.1f} s, {self.workers} worker(s) "
                    f"for {work} work unit(s) of up to {self.unit_size} {what}")
        return "\n".join(rows)


def summarize_cubeful(res: CubefulResults, *, duplicate: bool, agent_a: str, agent_b: str, seed: int,
                      workers: int, seconds: float, policies: tuple[str, str]) -> CubeReport:
    """Statistics of a series of units (pairs ``2p, 2p + 1`` in duplicate mode).

    Raises:
        BgaiError: no units.
    """
    n = len(res.a_seat)
    if n == 0:
        raise BgaiError("no games to summarize")
    money = res.rules.is_money

    def mean_ci(values: np.ndarray) -> tuple[float, float]:
        samples = values.reshape(-1, 2).mean(axis=1) if duplicate and len(values) % 2 == 0 else values
        m = float(samples.mean())
        se = float(samples.std(ddof=1) / math.sqrt(samples.size)) if samples.size > 1 else float("nan")
        return m, Z95 * se

    nan = float("nan")
    if money:
        pts = np.zeros(n)
        np.add.at(pts, res.game_unit, np.where(res.game_winner == 0, res.game_points, -res.game_points))
        ppg, ci = mean_ci(pts)
        mw, mci = nan, nan
    else:
        ppg, ci = nan, nan
        wins = (res.unit_winner == 0).astype(np.float64)
        mw, mci = mean_ci(wins)
        # a share of 0% or 100% has sample variance 0: floor the half-width at the Wilson score interval's
        # distance from the edge, z^2 / (n + z^2), so a perfect record over few matches is not a certainty
        n_samples = wins.size // 2 if duplicate and wins.size % 2 == 0 else wins.size
        mci = max(mci, Z95 * Z95 / (n_samples + Z95 * Z95)) if np.isfinite(mci) else mci
    g = len(res.game_winner)

    def side(p: int) -> PlayerCubeStats:
        won = res.game_winner == p
        return PlayerCubeStats(
            win=float(won.mean()) if g else nan,
            gammon=float((won & (res.game_kind >= 2)).mean()) if g else nan,
            backgammon=float((won & (res.game_kind >= 3)).mean()) if g else nan,
            doubles=int(res.doubles[:, p].sum()),
            takes=int(res.takes[:, p].sum()),
            passes=int(res.passes[:, p].sum()),
        )

    return CubeReport(
        agent_a=agent_a,
        agent_b=agent_b,
        mode="money" if money else "match",
        match_length=res.rules.length,
        units=n,
        games=g,
        duplicate=duplicate,
        seed=seed,
        workers=workers,
        jacoby=res.rules.jacoby if money else False,
        cube_limit=res.rules.cube_limit,
        ppg=ppg,
        ppg_ci95=ci,
        match_win=mw,
        match_win_ci95=mci,
        avg_cube=float(res.game_cube.mean()) if g else nan,
        a=side(0),
        b=side(1),
        policies=policies,
        avg_games_per_match=float(res.unit_games.mean()),
        avg_plies=float(res.game_plies.mean()) if g else nan,
        seconds=seconds,
    )


#: The largest work unit of a cubeful series, in money games or matches.
CHUNK_UNITS = 200


def build_context(agent_a, agent_b, same: bool, rules: MatchRules) -> tuple[tuple[Agent, Agent], MatchRules]:
    """The worker context of a cubeful series: the two agents and the rules."""
    return build_agents(agent_a, agent_b, same), rules


def play_cubeful_unit(agents, rules: MatchRules, seed: int, unit: int, total: int, chunk: int,
                      duplicate: bool, record: bool = False) -> CubefulResults:
    """Play work unit ``unit`` (units ``unit * chunk ..``) of a series of ``total`` money games or matches (with
    every game's :class:`~bgai.game.play.GameRecord` when ``record``)."""
    ids = np.arange(unit * chunk, min((unit + 1) * chunk, total))
    dice_ids = ids // 2 if duplicate else ids
    rngs = [dice_rng(seed, int(i)) for i in dice_ids]
    agent_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2, unit)))
    return play_cubeful(agents, rules, rngs, agent_rng, a_seat=ids % 2, record=record)


def run_cubeful_unit(context, job: tuple) -> CubefulResults:
    """:func:`play_cubeful_unit` as a :func:`~bgai.util.parallel.run_units` job: ``context = (agents, rules)``,
    ``job = (seed, unit, total, chunk, duplicate)``."""
    agents, rules = context
    return play_cubeful_unit(agents, rules, *job)


def run_saved_cubeful_unit(context, job: tuple) -> SavedUnit:
    """:func:`run_cubeful_unit` that also writes the unit's games as match text (:mod:`bgai.evaluate.savegames`:
    money sessions of up to 100 games, or one file per match): ``job = (seed, unit, total, chunk, duplicate, save)``
    with ``save`` a :class:`~bgai.evaluate.savegames.SaveSpec`.  The same games (and results) as without saving."""
    agents, rules = context
    seed, unit, total, chunk, duplicate, save = job
    res = play_cubeful_unit(agents, rules, seed, unit, total, chunk, duplicate, record=True)
    files = unit_files(res.records, save, unit=unit, first=unit * chunk, total=total)
    games = len(res.records)
    res.records = None
    return SavedUnit(results=res, files=files, games=games)


def _concat(parts: list[CubefulResults], offsets: list[int]) -> CubefulResults:
    cat = np.concatenate
    return CubefulResults(
        rules=parts[0].rules,
        game_unit=cat([p.game_unit + o for p, o in zip(parts, offsets)]),
        game_winner=cat([p.game_winner for p in parts]),
        game_points=cat([p.game_points for p in parts]),
        game_kind=cat([p.game_kind for p in parts]),
        game_cube=cat([p.game_cube for p in parts]),
        game_plies=cat([p.game_plies for p in parts]),
        unit_points_a=cat([p.unit_points_a for p in parts]),
        unit_winner=cat([p.unit_winner for p in parts]),
        unit_score=cat([p.unit_score for p in parts]),
        unit_games=cat([p.unit_games for p in parts]),
        a_seat=cat([p.a_seat for p in parts]),
        doubles=cat([p.doubles for p in parts]),
        takes=cat([p.takes for p in parts]),
        passes=cat([p.passes for p in parts]),
    )


def evaluate_cubeful(
    agent_a: str | Agent,
    agent_b: str | Agent,
    count: int,
    seed: int,
    *,
    rules: MatchRules | None = None,
    workers: int = 1,
    duplicate: bool = True,
    chunk: int | None = None,
    progress: bool = False,
    on_plan: Callable[[int, int, int], None] | None = None,
    backend: str = "local",
    save: GameSaver | None = None,
) -> CubeReport:
    """Play ``count`` cubeful money games (``rules`` money, the default) or ``count`` matches and report.

    Args:
        agent_a, agent_b: agent specs (:func:`bgai.agents.registry.make_agent`) or agent objects.
        count: number of money games or matches, > 0; even in duplicate mode.
        seed: series seed (>= 0).
        rules: :class:`~bgai.game.match.MatchRules`; default money play with the Jacoby rule, no cube limit.
        workers: processes (1 = this process).  Results depend on ``chunk``, not on ``workers``.
        duplicate: mirrored duplicate-dice pairs (default).
        chunk: units per work unit (even); default :func:`~bgai.evaluate.series.series_unit_size` with at most
            :data:`CHUNK_UNITS` (from ``count`` and the agents).
        progress: tqdm progress bar on stderr.
        on_plan: called before the games with ``(work units, games or matches per unit, workers used)``.
        backend: :func:`bgai.util.parallel.run_units` backend (``'local'``).
        save: write the games as match files (:mod:`bgai.evaluate.savegames`: money sessions of up to 100 games,
            or a file per match, with the cube actions; written by this process as each unit finishes).

    Returns:
        :class:`CubeReport`; after Ctrl-C or SIGTERM a partial one (:attr:`CubeReport.partial`).

    Raises:
        BgaiError: bad count/seed/workers/chunk; :class:`~bgai.errors.MatchStateError` for a match longer than
            the MET; agent spec errors before any game.
        KeyboardInterrupt: interrupted before any work unit finished.
    """

    rules = rules or MatchRules.money()
    what = "games" if rules.is_money else "matches"
    check_series(count, duplicate=duplicate, workers=workers, chunk=chunk or 2, seed=seed, what=what)
    if not rules.is_money:

        met = load_met(rules.met_name)
        if rules.length > met.length:
            raise MatchStateError(f"a {rules.length}-point match is longer than the {met.name} table "
                                  f"({met.length} points)")
    same = agent_a is agent_b or (isinstance(agent_a, str) and agent_a == agent_b)
    agents = build_agents(agent_a, agent_b, same)
    name_a = agent_a if isinstance(agent_a, str) else agents[0].name
    name_b = agent_b if isinstance(agent_b, str) else agents[1].name
    pols = (cube_policy_for(agents[0]).name, cube_policy_for(agents[1]).name)
    size = chunk or series_unit_size(count, agents, largest=CHUNK_UNITS)
    jobs = [(seed, u, count, size, duplicate) for u in range(math.ceil(count / size))]
    fn = run_cubeful_unit
    if save is not None:
        kind = "cubeful money" if rules.is_money else f"{rules.length}-point matches"
        spec = save.spec(name_a, name_b, rules, f"bgai eval {name_a} vs {name_b}, {kind}, seed {seed}, "
                         f"{'duplicate' if duplicate else 'plain'} dice")
        jobs = [job + (spec,) for job in jobs]
        fn = run_saved_cubeful_unit

    def collect(unit: int, res) -> None:
        if isinstance(res, SavedUnit):
            res = save.write(res)
        if bar is not None:
            bar.update(len(res.a_seat))

    if on_plan is not None:
        on_plan(len(jobs), size, min(workers, len(jobs)))
    bar = None
    if progress:
        bar = progress_bar(total=count, unit="game" if rules.is_money else "match", desc=f"{name_a} vs {name_b}",
                           file=sys.stderr, dynamic_ncols=True)
    t0 = time.perf_counter()
    try:
        run = run_units(fn, jobs, workers=workers, setup=build_context,
                        setup_args=(agent_a, agent_b, same, rules), context=(agents, rules), backend=backend,
                        on_result=collect)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    if not run.results:
        raise KeyboardInterrupt(f"interrupted ({run.interrupted}) before any work unit finished")
    ordered = [r.results if isinstance(r, SavedUnit) else r for r in run.ordered()]
    offsets = list(np.cumsum([0] + [len(p.a_seat) for p in ordered[:-1]]))
    report = summarize_cubeful(_concat(ordered, offsets), duplicate=duplicate, agent_a=name_a, agent_b=name_b,
                               seed=seed, workers=run.workers, seconds=seconds, policies=pols)
    report.unit_size, report.partial, report.interrupted = size, not run.complete, run.interrupted
    report.units_requested = count
    return report
