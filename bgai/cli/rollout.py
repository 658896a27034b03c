"""``bgai rollout POSITION [DICE] --agent SPEC [--trials N] [--truncate PLIES] [--ply 0|1] [--candidates K]
[--seed S] [--workers W] [--ray auto|ADDRESS] [--no-vr] [--cube] [--json FILE] [--journal FILE]``.

POSITION is a GNU Backgammon Position ID, optionally ``POSITION_ID:MATCH_ID`` (the Match ID gives the cube and
score for ``--cube``, and its roll when it carries one; the same parsing as ``bgai hint``).

* Without DICE: a rollout of the position for the side on roll, before its roll
  (:func:`bgai.analysis.rollout.rollout_position`): cubeless probabilities and equity, each with its standard
  error.  ``--cube`` adds the cube decision from the rolled-out probabilities with bgai's Janowski-based cube model
  (:func:`bgai.game.cube.cube_decision`, the cube efficiency of the position; money play with a centred cube and the
  Jacoby rule when no Match ID is given), as GNU Backgammon derives cube decisions from cubeless rollouts.
* With DICE: every legal play (or the best ``--candidates K`` by the agent at 0-ply) rolled out side by side on
  the same dice (:func:`bgai.analysis.rollout.rollout_plays`), ranked by cubeless equity with each play's
  difference from the best (and its standard error, paired over the shared dice).  ``--cube`` ranks them by the
  mover's cubeful equity after the play instead (GNU Backgammon's 0-ply cubeful checker-play formula applied to
  the rolled-out probabilities, :func:`bgai.evaluate.series.cubeful_afterstate_equities`; match play: by MWC).

A tqdm bar on stderr (when stderr is a terminal) shows the trials done with the running equity and its standard
error.  Ctrl-C stops the rollout: the trials finished so far are reported (marked partial, also in the JSON) and
the exit status is 130.  ``--json FILE`` writes the result atomically (the file is checked before the rollout).
Probabilities are shown (and written as ``probabilities``) clipped into [0, 1]; the equity is the unbiased
luck-adjusted mean, computed from the unclipped probabilities (in the JSON as ``probabilities_unbiased``).
``--ply`` defaults to the agent spec's ``ply`` option (``model.pt:ply=1``), else 0.  ``--ray`` runs the work units
(trial ranges) on a Ray cluster (:mod:`bgai.util.ray_backend`) with the same result as locally.  With an agent that values
bear-offs by the exact database (``model.pt:bearoff=db``) a trial ends when it reaches a bear-off, with the
database's probabilities (:mod:`bgai.analysis.rollout`, (g)); the settings line says so.  ``--journal FILE``
appends each finished unit's trials to FILE (:mod:`bgai.util.journal`); the same command run again after the
rollout was stopped (Ctrl-C, SIGTERM, even SIGKILL or a crash) takes the trials recorded there and runs only the
rest, with the same result as an uninterrupted rollout, bit for bit.  A journal of another rollout is refused.
"""

from __future__ import annotations

import sys

import numpy as np

from bgai.agents.registry import valid_specs
from bgai.cli.args import add_ray_option, parallel_backend, positive_int, seed_type
from bgai.errors import BgaiError
from bgai.util.progress import progress_bar


def register(subparsers) -> None:
    """Add the ``rollout`` subcommand."""
    p = subparsers.add_parser(
        "rollout",
        help="roll out a position (or the plays of a roll) with an agent",
        description=f"Roll out a position before its roll, or every play of a roll side by side on the same dice, "
                    f"with an agent ({valid_specs()}).",
    )
    p.add_argument("position", metavar="POSITION",
                   help="Position ID[:Match ID], XGID, wildbg board or FIBS board line (bgai.formats.request)")
    p.add_argument("dice", metavar="DICE", nargs="?", help="the roll, e.g. 31: roll out the plays")
    p.add_argument("--agent", default="default", help="agent spec (default: the shipped model); MODEL:bearoff=db "
                   "values bear-offs by the exact database and ends trials there")
    p.add_argument("--trials", type=int, default=1296, help="trials (default 1296)")
    p.add_argument("--truncate", type=int, metavar="PLIES", help="score trials at 0-ply after PLIES plies")
    p.add_argument("--ply", type=int, choices=(0, 1), help="plies of look-ahead for the plays inside the rollout")
    p.add_argument("--candidates", type=int, metavar="K", help="with DICE: roll out the best K plays at 0-ply")
    p.add_argument("--seed", type=seed_type, default=0, help="dice seed, 0..2**63-1 (default 0)")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    add_ray_option(p)
    p.add_argument("--no-vr", action="store_true", help="no variance reduction (luck adjustment)")
    p.add_argument("--cube", action="store_true", help="cube decision / cubeful ranking from the rollout (Janowski)")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON to FILE")
    p.add_argument("--journal", metavar="FILE",
                   help="record finished trials in FILE as they go; run the same command again to resume a stopped "
                   "rollout from it (same result as an uninterrupted one)")
    p.set_defaults(func=run)


def _rollout_ply(args, agent) -> int:
    """``--ply``, or the agent spec's ``ply`` option, or 0."""
    if args.ply is not None:
        return args.ply
    ply = int(getattr(agent, "ply", 0) or 0)
    if ply > 1:
        raise BgaiError(f"rollouts play at 0 or 1 ply; the agent {args.agent!r} asks for {ply} (give --ply)")
    return ply


class _Progress:
    """tqdm bar on stderr: trials done, running equity and its standard error."""

    def __init__(self, total: int, what: str) -> None:
        self.bar = None
        if sys.stderr.isatty():
            self.bar = progress_bar(total=total, unit="trial", desc=what, file=sys.stderr, dynamic_ncols=True)

    def __call__(self, done: int, total: int, equity: float, se: float) -> None:
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            self.bar.set_postfix(equity=f"{equity:+.4f}", se=f"{se:.4f}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _note_resumed(args, res) -> None:
    """A line on stderr when trials came from the journal."""
    if res.resumed:
        print(f"bgai rollout: {res.resumed} of {res.settings.trials} trials taken from journal {args.journal}",
              file=sys.stderr, flush=True)


def _settings_line(r) -> str:
    s = r.settings
    parts = [f"agent {s.agent}", f"{s.ply}-ply", "variance reduction" if s.variance_reduction else "no variance reduction",
             f"truncated at {s.truncate} plies" if s.truncate else "played to the end", f"seed {s.seed}"]
    if s.bearoff_database:
        parts.insert(-1, "trials end at bear-offs (bear-off database)")
    return ", ".join(parts)


def _fmt(v: float, signed: bool = False) -> str:
    if not np.isfinite(v):
        return "n/a"
    text = f"{v:+.4f}" if signed else f"{v:.4f}"
    return text.replace("-0.0000", "+0.0000" if signed else "0.0000")  # a tiny negative value rounds to zero


def run(args) -> int:
    """Run ``bgai rollout``; returns the exit status (130 when interrupted, with the partial result shown)."""
    from bgai.agents.registry import make_agent
    from bgai.analysis.rollout import rollout_plays, rollout_position
    from bgai.core.position_id import encode_position_id
    from bgai.formats.request import read_position_request
    from bgai.util.fileio import atomic_write_json, check_destination

    req = read_position_request(args.position, args.dice)
    if req.double_offered:
        raise BgaiError("a double is pending: roll out the position before the double (without it)")
    board, state, match_id = req.board, req.cube_state, req.match_id
    dice = None if req.dice is None else (req.dice.d1, req.dice.d2)
    pid = encode_position_id(board)
    if args.candidates is not None and dice is None:
        raise BgaiError("--candidates needs DICE (it picks the plays of the roll to roll out)")
    if args.json:
        check_destination(args.json, probe=True)
    agent = make_agent(args.agent)
    ply = _rollout_ply(args, agent)
    if args.workers < 1:
        raise BgaiError(f"--workers must be >= 1, got {args.workers}")
    backend, workers = parallel_backend(args, "rollout")
    common = {"trials": args.trials, "truncate": args.truncate, "ply": ply, "seed": args.seed,
              "variance_reduction": not args.no_vr, "workers": workers, "backend": backend, "journal": args.journal}
    if dice is None:
        bar = _Progress(args.trials, "rollout")
        try:
            res = rollout_position(agent, board, progress=bar, **common)
        finally:
            bar.close()
        _note_resumed(args, res)
        out = _report_position(args, pid, match_id, board, state, res)
        partial = res.partial
    else:
        bar = _Progress(args.trials, f"rollout {dice[0]}{dice[1]}")
        try:
            res = rollout_plays(agent, board, dice, candidates=args.candidates, progress=bar, **common)
        finally:
            bar.close()
        _note_resumed(args, res)
        out = _report_plays(args, pid, match_id, board, state, res)
        partial = res.partial
    if args.json:
        atomic_write_json(args.json, out)
    return 130 if partial else 0


def _report_position(args, pid, match_id, board, state, res) -> dict:
    from bgai.game.cube import cube_decision, cube_decision_dict, cube_efficiency, describe_state, format_cube_decision

    out = {"position_id": pid, "match_id": match_id, "agent": args.agent, "kind": "position", **res.to_dict()}
    head = f"Rollout of Position ID {pid}" + (f":{match_id}" if match_id else "") + " (side on roll, before the roll)"
    print(head)
    print(f"  {_settings_line(res)}")
    if res.partial:
        print(f"  INTERRUPTED: partial result of {res.trials} of {res.settings.trials} trials")
    names = ("win", "win g", "win bg", "lose g", "lose bg")
    print("  " + " " * 9 + "".join(f"{n:>9s}" for n in names) + f"{'equity':>10s}")
    print("  " + f"{'result':9s}" + "".join(f"{_fmt(v):>9s}" for v in res.clipped_probabilities())
          + f"{_fmt(res.equity, True):>10s}")
    print("  " + f"{'std err':9s}" + "".join(f"{_fmt(v):>9s}" for v in res.std_errors) + f"{_fmt(res.equity_se):>10s}")
    rate = (res.trials - res.resumed) / res.seconds if res.seconds > 0 else float("inf")
    print(f"  {res.trials} trials in {res.seconds:.1f} s ({rate:.1f} trials/s, {res.workers} worker(s))")
    if args.cube:
        if res.trials == 0:
            print("  no cube decision: no trial finished")
        else:
            d = cube_decision(res.clipped_probabilities(), state, float(cube_efficiency(board[None])[0]))
            print(f"Cube decision from the rollout ({describe_state(state)}; Janowski model, cubeless rollout "
                  "probabilities):")
            print(format_cube_decision(d))
            out["cube"] = cube_decision_dict(d)
    return out


def _report_plays(args, pid, match_id, board, state, res) -> dict:
    from bgai.analysis.plays import cubeful_afterstate_equities
    from bgai.core.equity import OUTPUTS
    from bgai.game.cube import describe_state

    out = {"position_id": pid, "match_id": match_id, "agent": args.agent, "kind": "plays", **res.to_dict()}
    print(f"Rollout of the plays of Position ID {pid}" + (f":{match_id}" if match_id else "")
          + f", roll {res.dice[0]}{res.dice[1]}: {len(res.plays)} play(s), {res.trials} trials each on the same dice")
    print(f"  {_settings_line(res)}")
    if res.partial:
        print(f"  INTERRUPTED: partial result of {res.trials} of {res.settings.trials} trials")
    plays = res.plays
    key = "equity"
    if args.cube and res.trials > 0:
        after = np.stack([p.afterstate for p in plays])
        probs = np.stack([p.result.clipped_probabilities() for p in plays])
        eq, mwc = cubeful_afterstate_equities(after, probs, state)
        for d, e in zip(out["plays"], eq):
            d["cubeful_equity"] = float(e)
        if mwc is not None:
            for d, m in zip(out["plays"], mwc):
                d["mwc"] = float(m)
        order = np.lexsort((np.arange(len(plays)), -eq))
        plays = [plays[i] for i in order]
        out["plays"] = [out["plays"][i] for i in order]
        out["ranking"] = f"cubeful equity ({describe_state(state)}; Janowski model, rolled-out probabilities)"
        key = "cubeful_equity"
        print(f"  ranked by {out['ranking']}")
    else:
        out["ranking"] = "cubeless equity"
    width = max(8, *(len(p.play) for p in plays))
    best = out["plays"][0].get(key) if out["plays"] else None
    for i, (p, d) in enumerate(zip(plays, out["plays"]), 1):
        r = p.result
        line = f"{i:3d}. {p.play or '(no play)':<{width}}  equity {_fmt(r.equity, True)} +- {_fmt(r.equity_se)}"
        if key == "cubeful_equity":
            line += f"  cubeful {d['cubeful_equity']:+.4f}"
            if i > 1:
                line += f" ({d['cubeful_equity'] - best:+.4f})"
            if "mwc" in d:
                line += f"  MWC {100 * d['mwc']:.2f}%"
        elif i > 1:
            line += f"  ({_fmt(p.difference, True)} +- {_fmt(p.difference_se)})"
        pr = dict(zip(OUTPUTS, r.clipped_probabilities()))
        if np.isfinite(pr["win"]):
            line += f"  win {100 * pr['win']:.1f}% wg {100 * pr['win_gammon']:.1f}% lg {100 * pr['lose_gammon']:.1f}%"
        print(line)
    rate = (res.trials - res.resumed) * len(plays) / res.seconds if res.seconds > 0 else float("inf")
    print(f"  {res.trials} trials x {len(plays)} plays in {res.seconds:.1f} s ({rate:.1f} trials/s, "
          f"{res.workers} worker(s))")
    return out
