"""``bgai eval AGENT_A AGENT_B --games N --seed S [--workers W] [--json FILE] [--plain]``: play a series, report.

With ``--cube`` the games are cubeful money games; with ``--match N --matches M`` N-point matches
(:mod:`bgai.game.play_cube`).  ``--no-jacoby`` and ``--cube-limit`` change cubeful money play only: without ``--cube``
they are an error (they do not imply it).  ``--json``'s target is checked before any game is played.  Work units
(about 16 of them, sized from the number of games and the agents, never from ``--workers``:
:func:`bgai.evaluate.series.series_unit_size`) are never split, so a small series uses fewer workers than asked
(said on stderr and in the report) and the results never depend on ``--workers``.

Ctrl-C or SIGTERM stops a series cleanly: the games of the finished work units (whole duplicate pairs) are
reported as a partial result, marked in the table and in the JSON (``"partial": true``), exit status 130.
"""

from __future__ import annotations

import os
import sys

from bgai.cli.args import add_ray_option, parallel_backend, positive_int, seed_type
from bgai.errors import BgaiError


def register(subparsers) -> None:
    """Add the ``eval`` subcommand."""
    from bgai.agents.registry import valid_specs

    p = subparsers.add_parser(
        "eval",
        help="play a series of games between two agents and report ppg, win and gammon rates",
        description=(
            "Play cubeless money games between AGENT_A and AGENT_B and report A's points per game with a 95% "
            "confidence interval, win/gammon/backgammon rates for each side, average game length and speed. "
            "By default games are mirrored duplicate-dice pairs (same dice, seats swapped). "
            f"Agents: {valid_specs()}."
        ),
    )
    p.add_argument("agent_a", metavar="AGENT_A", help="agent spec, e.g. pubeval, gnubg, runs/x/best.pt:ply=1")
    p.add_argument("agent_b", metavar="AGENT_B", help="agent spec of the opponent")
    p.add_argument("--games", type=positive_int, help="number of games (even in duplicate mode)")
    p.add_argument("--seed", type=seed_type, default=0, help="series seed 0..2**63-1 (default 0)")
    p.add_argument(
        "--workers", type=positive_int, default=1,
        help="processes to play in (default 1).  Games are cut into about 16 work units, sized from the number of "
        "games and the agents (at least 500 games for fast bots, 64 for gnubg or a 1-ply search; at most 1000, "
        "200 with --cube/--match), never split, so that results do not depend on the number of workers: at most "
        "one worker per unit is used, and the report says how many",
    )
    p.add_argument("--json", metavar="FILE",
                   help="also write the report as JSON to FILE (atomically; checked before any game is played)")
    p.add_argument("--plain", action="store_true", help="independent games instead of duplicate-dice pairs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--save-games", metavar="DIR",
                   help="also write the games played as match files into DIR (made if missing), for GNU Backgammon "
                   "or XG to analyse: money play a session per 100 games (games-NNNNNNNNN.mat, N the first game's "
                   "index in the series), "
                   "--match one file per match (match-NNNNNN.mat); cube actions included; the same files for any "
                   "--workers or --ray; files of finished units are kept after Ctrl-C")
    p.add_argument("--save-format", metavar="mat|sgf", default="mat",
                   help="format of --save-games: mat (GNU Backgammon / JellyFish .mat, default), sgf (GNU Backgammon "
                   ".sgf) or mat,sgf (both)")
    p.add_argument("--luck", metavar="JUDGE",
                   help="also report A's luck-adjusted ppg: each game's points minus A's luck plus B's, the luck of a "
                   "roll being how much better the judge's best play of it is than of an average roll (GNU "
                   "Backgammon's luck analysis): the same expectation as the ppg with a fraction of its variance "
                   "(a ninth to a twentieth with default as judge). JUDGE: a 0-ply agent with probabilities, e.g. "
                   "default (the shipped model) or gnubg; its time is counted in the games/s. Cubeless money games "
                   "only")
    add_ray_option(p)
    cube = p.add_argument_group(
        "cube and matches",
        "agents with probabilities use bgai.game.cube (Janowski / GNU Backgammon 0-ply cube logic); others never double "
        "and always take",
    )
    cube.add_argument("--cube", action="store_true", help="cubeful money games (--games N)")
    cube.add_argument("--match", type=int, metavar="N", help="play N-point matches (with --matches M)")
    cube.add_argument("--matches", type=positive_int, metavar="M", help="number of matches (even in duplicate mode)")
    cube.add_argument("--no-jacoby", action="store_true",
                      help="cubeful money play without the Jacoby rule (needs --cube; an error otherwise)")
    cube.add_argument("--cube-limit", type=positive_int, metavar="V",
                      help="cubeful money play: highest cube value (needs --cube; an error otherwise)")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the series and print the report; returns the exit status."""
    from bgai.evaluate.series import evaluate

    if args.json:
        check_json_target(args.json)
    saver = _saver(args)
    cubeful = args.cube or args.match is not None or args.matches is not None
    if (args.no_jacoby or args.cube_limit is not None) and not args.cube:
        given = " and ".join(o for o, on in (("--no-jacoby", args.no_jacoby), ("--cube-limit", args.cube_limit))
                             if on is not None and on is not False)
        where = "not for match play (--match)" if cubeful else "add --cube"
        raise BgaiError(f"{given}: for cubeful money games only; {where}")
    if cubeful:
        if args.luck is not None:
            raise BgaiError("--luck: for cubeless money games only, not with --cube or --match")
        return _run_cubeful(args, saver)
    if args.games is None:
        raise BgaiError("eval needs --games N (or --cube --games N, or --match N --matches M)")
    backend, args.workers = parallel_backend(args, "eval")
    report = evaluate(
        args.agent_a,
        args.agent_b,
        args.games,
        args.seed,
        workers=args.workers,
        duplicate=not args.plain,
        progress=not args.no_progress,
        on_plan=_note_workers(args.workers, args.games),
        backend=backend,
        save=saver,
        luck=args.luck,
    )
    return _publish(report, args.json, saver)


def _saver(args):
    """The :class:`bgai.evaluate.savegames.GameSaver` of ``--save-games`` (None without it); checks the folder and
    the formats before any game is played."""
    from bgai.evaluate.savegames import GameSaver, parse_formats

    formats = parse_formats(args.save_format)
    if args.save_games is None:
        if formats != ("mat",):
            raise BgaiError("--save-format needs --save-games DIR")
        return None
    return GameSaver(args.save_games, formats)


def _publish(report, json_path: str | None, saver=None) -> int:
    """Print the report's table and, with ``--json``, write the report atomically; returns the exit status: 0,
    or 130 for a partial report (the series was interrupted)."""
    from bgai.evaluate.series import write_json_atomic

    if saver is not None:
        print(f"bgai eval: {saver.summary()}", file=sys.stderr)
    print(report.table())
    _note_default(report.agent_a, report.agent_b)
    if json_path:
        data = report.to_dict()
        data["agents"] = {"a": _agent_record(report.agent_a), "b": _agent_record(report.agent_b)}
        try:
            write_json_atomic(json_path, data)
        except OSError as exc:
            raise BgaiError(f"cannot write --json {json_path!r}: {exc}") from exc
    if report.partial:
        print(f"bgai: interrupted ({report.interrupted}): partial result of the finished work units",
              file=sys.stderr)
        return 130
    return 0


def _note_default(*specs: str) -> None:
    """A note on stderr naming the model a ``default`` side stood for (the table keeps the spec as given)."""
    from bgai.agents.registry import resolve_spec

    for spec in dict.fromkeys(specs):
        try:
            resolved = resolve_spec(spec)
        except BgaiError:  # pragma: no cover - the series already resolved it
            continue
        if resolved != spec:
            print(f"bgai: note: {spec} is {resolved}", file=sys.stderr)


def _agent_record(spec: str) -> dict:
    """What ``--json`` records of an agent besides its spec: the spec resolved (``default`` -> the model file it
    stood for when the series ran) and :func:`bgai.agents.registry.agent_identity` (a model file's sha256 and
    options, or a bot's name), so that a report still says which model played after the default changes."""
    from bgai.agents.registry import agent_identity, resolve_spec

    return {"spec": resolve_spec(spec), **agent_identity(spec)}


def check_json_target(path: str) -> None:
    """Check that the report file ``path`` can be written, before any game is played.

    Raises:
        BgaiError: ``path`` is a directory, its directory does not exist or is not a directory, or the file
            (or, for a new file, its directory) is not writable.
    """
    from bgai.util.fileio import check_destination

    try:
        directory = check_destination(path)  # a directory, or a missing / non-directory parent
    except BgaiError as exc:
        raise BgaiError(f"--json: {exc}") from None
    if not os.access(directory, os.W_OK | os.X_OK):  # the report is written to a temporary file there
        raise BgaiError(f"cannot write --json {path!r}: directory {directory!r} is not writable")
    try:
        check_destination(path, probe=True)  # what permissions do not tell (/proc, read-only mounts, root)
    except BgaiError as exc:
        raise BgaiError(f"--json: {exc}") from None
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise BgaiError(f"cannot write --json {path!r}: the file is not writable")


def _note_workers(workers: int, count: int):
    """The ``on_plan`` callback of a series: a note on stderr when fewer workers than asked can be used."""

    def note(units: int, chunk: int, used: int) -> None:
        if workers > units:
            print(f"bgai: note: --workers {workers}: {count} in {units} work unit(s) of up to {chunk}, so "
                  f"{units} worker(s) used (units are never split, so results do not depend on the workers)",
                  file=sys.stderr)

    return note


def _run_cubeful(args, saver=None) -> int:
    """``--cube`` money sessions or ``--match N --matches M`` (bgai.game.play_cube)."""
    from bgai.evaluate.cubeful import evaluate_cubeful
    from bgai.game.match import MatchRules

    if args.match is not None or args.matches is not None:
        if args.match is None or args.matches is None:
            raise BgaiError("match play needs both --match N (points) and --matches M (how many)")
        if args.cube or args.games is not None or args.no_jacoby or args.cube_limit:
            raise BgaiError("--match/--matches cannot be combined with --cube, --games, --no-jacoby or --cube-limit")
        rules, count = MatchRules.match(args.match), args.matches
    else:
        if args.games is None:
            raise BgaiError("--cube needs --games N")
        rules, count = MatchRules.money(jacoby=not args.no_jacoby, cube_limit=args.cube_limit), args.games
    backend, args.workers = parallel_backend(args, "eval")
    report = evaluate_cubeful(
        args.agent_a, args.agent_b, count, args.seed, rules=rules, workers=args.workers,
        duplicate=not args.plain, progress=not args.no_progress, on_plan=_note_workers(args.workers, count),
        backend=backend, save=saver,
    )
    return _publish(report, args.json, saver)
