"""``bgai analyse FILE|DIR/ ... --agent SPEC [--ply N] [--json FILE] [--html FILE] [--workers W] [--journal FILE]``:
match analysis.

Analyses every checker play and cube decision of both players of each match file (``.sgf``, ``.mat``; a folder
means all its match files) as GNU Backgammon's ``analyse match`` does, and prints for each file a table like
GNU Backgammon's ``show statistics match`` (error rates in mEMG, PR, luck, luck-adjusted result) and each
player's worst errors (:mod:`bgai.analysis.match_analysis`).  Several files: a totals table per player follows.

``--json FILE`` writes everything (every roll and cube decision, per-player statistics) as JSON, ``--html FILE``
a self-contained page with pictures of each player's worst errors; both are written atomically and their
destinations are checked before the analysis starts.  ``--ply N`` sets the agent's search depth (checkpoint
models: ``model.pt:ply=N``; ``gnubg`` and ``bgsage``: ``gnubg:ply=N``, up to 2 and 3).  ``--workers W``
ranks in W processes; the results do not depend on W.  A progress bar goes to stderr (``--quiet``: none).
``--journal FILE`` appends each finished unit of rankings to FILE (:mod:`bgai.util.journal`); the same command run
again after the analysis was stopped (Ctrl-C, SIGTERM, even SIGKILL or a crash) takes the units recorded there
and ranks only the rest, with the same results as an uninterrupted analysis, bit for bit.  A journal of another
analysis (other files, agent, model or ply) is refused.
"""

from __future__ import annotations

import sys

from bgai.cli.args import add_ray_option, non_negative_int, parallel_backend, positive_int
from bgai.errors import AgentSpecError, BgaiError
from bgai.util.progress import progress_bar


def register(subparsers) -> None:
    """Add the ``analyse`` subcommand."""
    p = subparsers.add_parser(
        "analyse",
        aliases=["analyze"],
        help="analyse matches: errors, error rates, PR and luck of both players (like gnubg's analyse match)",
        description=(
            "Analyse every checker play and cube decision of both players of match files (.sgf, .mat; a folder: "
            "all its match files), as GNU Backgammon's 'analyse match' does; print statistics like its 'show "
            "statistics match'.  Agents with probabilities: gnubg, default (the shipped model), a checkpoint "
            "model.pt[:ply=N], an exported model.onnx / model.npz."
        ),
    )
    p.add_argument("paths", metavar="FILE|DIR", nargs="+", help="match files or folders of match files")
    p.add_argument("--agent", default="gnubg", help="agent spec (default gnubg)")
    p.add_argument("--ply", type=non_negative_int, metavar="N",
                   help="search depth of the agent (checkpoint models and gnubg 0-2, bgsage 0-3); default the "
                        "agent's own")
    p.add_argument("--json", metavar="FILE", help="write the whole analysis as JSON to FILE (atomically)")
    p.add_argument("--html", metavar="FILE", help="write an HTML report with board pictures to FILE (atomically)")
    p.add_argument("--workers", type=positive_int, default=1, help="processes to rank in (default 1)")
    p.add_argument("--worst", type=non_negative_int, default=5, metavar="N",
                   help="worst errors listed and drawn per player (default 5)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--journal", metavar="FILE",
                   help="record finished rankings in FILE as they go; run the same command again to resume a stopped "
                   "analysis from it (same results as an uninterrupted one)")
    add_ray_option(p)
    p.set_defaults(func=run)


def spec_with_ply(spec: str, ply: int | None) -> str:
    """The agent spec with the search depth ``ply`` applied (``None``: unchanged).

    Raises:
        AgentSpecError: a ply above 0 for a built-in agent without a ``ply`` option (``gnubg`` and ``bgsage``
            take one), or a spec whose own ``:ply=`` differs.
    """
    from bgai.agents.registry import BUILTIN_OPTIONS, BUILTINS, parse_spec, resolve_spec

    if ply is None:
        return spec
    full = resolve_spec(spec)
    name, options = parse_spec(full)
    if name.lower() in BUILTINS and "ply" not in BUILTIN_OPTIONS.get(name.lower(), ()):
        if ply != 0:
            raise AgentSpecError(f"agent {name!r} analyses at 0-ply only (--ply {ply})")
        return spec
    if "ply" in options and options["ply"] != ply:
        raise AgentSpecError(f"--ply {ply} contradicts the agent spec {spec!r}")
    options["ply"] = ply
    return name + ":" + ",".join(f"{k}={v}" for k, v in options.items())


def _check_target(option: str, path: str) -> None:
    from bgai.util.fileio import check_destination

    try:
        check_destination(path, probe=True)
    except BgaiError as exc:
        raise BgaiError(f"{option}: {exc}") from None


def run(args) -> int:
    """Analyse the files and print the reports; returns the exit status."""
    from bgai.analysis.match_analysis import (
        analyse_files,
        format_report,
        format_totals,
        match_files,
        write_html,
        write_json,
    )

    for option, path in (("--json", args.json), ("--html", args.html)):
        if path:
            _check_target(option, path)
    spec = spec_with_ply(args.agent, args.ply)
    files = match_files(args.paths)
    bar = None
    progress = on_total = None
    if not args.quiet:  # the progress bar is optional (no tqdm: none)
        def on_total(n: int) -> None:
            nonlocal bar
            bar = progress_bar(total=n, unit="pos", desc=f"analysing {len(files)} file{'s' if len(files) > 1 else ''}",
                               file=sys.stderr, dynamic_ncols=True)

        def progress(n: int) -> None:
            if bar is not None:
                bar.update(n)
    backend, workers = parallel_backend(args, "analyse")
    try:
        analyses = analyse_files(files, spec, workers=workers, progress=progress, on_total=on_total, backend=backend,
                                 journal=args.journal)
    finally:
        if bar is not None:
            bar.close()
    for i, a in enumerate(analyses):
        if i:
            print()
        print(format_report(a, worst=args.worst), end="")
    if len(analyses) > 1:
        print()
        print(format_totals(analyses), end="")
    if args.json:
        write_json(args.json, analyses)
    if args.html:
        write_html(args.html, analyses, worst=args.worst)
    return 0
