"""``bgai hint POSITION [DICE] [--agent SPEC] [--json] [--board]`` and ``bgai hint --batch FILE``.

POSITION is anything bgai's request parser reads (:mod:`bgai.formats.request`): a GNU Backgammon Position ID,
``POSITION_ID:MATCH_ID`` (or ``--match-id``), an XGID, a wildbg board (``p24=2&p19=-5...``) or a FIBS board
line.  The agent is the shipped model by default (agent spec ``default``, :func:`bgai.agents.registry.
default_model_spec`).  The analysis comes from :mod:`bgai.analysis.api`.

With a roll (DICE, or the roll a Match ID / XGID / FIBS board carries; given both ways they must agree), the
legal plays ranked by the agent, best first (:func:`~bgai.analysis.api.rank_plays`), with the Position ID of
each resulting position from the mover's view (sides not swapped).  What they are ranked by (the JSON
``ranking`` field; the header line names it and the agent's ply):

* no cube and score given (a bare Position ID or wildbg board): cubeless money equity
  (:func:`bgai.core.equity.cubeless_equity`) for agents with probabilities (gnubg, neural models), shown with
  all five probabilities after each play (win, win gammon, win backgammon, lose gammon, lose backgammon);
* with a Match ID, XGID or FIBS board, agents with probabilities: GNU Backgammon's 0-ply cubeful checker-play
  evaluation: match play by the mover's cubeful match-winning chance (``mwc``), shown with GNU Backgammon's
  normalised equity; money play by cubeful money equity;
* agents without probabilities (pubeval, heuristics): the agent's own cubeless **score** (not points per
  game), cube and score unused; the JSON field is ``score`` instead of ``equity``.

Without a roll it prints the cube decision of the side on roll, as GNU Backgammon's ``hint`` does: No double /
Double, take / Double, pass / Too good ..., with the cubeful equities of no double, double/take and
double/pass (:func:`~bgai.analysis.api.decide_cube`; money play with a centred cube and the Jacoby rule when
no cube state is given).  When the side on roll may not double (Crawford game, cube owned by the opponent,
dead cube) it says so.  With a double pending it adds the proper response.

A game that is over is an error.  When no play is legal the list holds one entry with ``"play": ""`` and the
unchanged position, as in ``bgai moves``.  ``--board`` draws the position first.

``--batch`` reads lines ``POSITION [DICE]`` (``-`` = stdin, answered line by line as they arrive, each answer
flushed) and prints one JSON object per line: with a roll, the shape of ``bgai moves --batch`` with ``equity``
or ``score`` (and ``probabilities``, ``mwc``) added to each play and ``match_id``/``ranking`` for lines with
cube fields; without a roll, ``{"position_id", ["match_id",] "cube": {...}}`` (the cube decision).  A batch
file is ranked in chunks of :data:`bgai.cli.moves.CHUNK` lines, each in one agent call.  A bad line (also a
line that is not UTF-8 text) gets ``{"line": n, "error": "..."}`` and the others are still answered; the exit
status is then 1.
"""

from __future__ import annotations

import json
import os
import sys

from bgai.cli.args import batch_items, error_text, reading_batch
from bgai.cli.moves import CHUNK
from bgai.core.notation import NO_LEGAL_PLAY
from bgai.errors import BgaiError


def register(subparsers) -> None:
    """Add the ``hint`` subcommand."""
    p = subparsers.add_parser(
        "hint",
        help="rank the legal plays of a position (or give the cube decision) with an agent",
        description="Rank the legal plays of a position, best first, with an agent (default: the shipped model); "
        "without a roll, the cube decision.  POSITION: Position ID[:Match ID], XGID, wildbg board or FIBS board.",
    )
    p.add_argument("position", metavar="POSITION", nargs="?",
                   help="Position ID, POSITION_ID:MATCH_ID, XGID, wildbg board or FIBS board line")
    p.add_argument("dice", metavar="DICE", nargs="?", help="the roll, e.g. 31 or 3-1")
    p.add_argument("--agent", default="default",
                   help="agent spec (default: 'default', the shipped model; or pubeval, gnubg, model.pt:ply=1 ...)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--board", action="store_true", help="draw the position first")
    p.add_argument("--batch", metavar="FILE",
                   help="lines 'POSITION [DICE]' ('-' = stdin, answered line by line); JSON lines out")
    p.add_argument(
        "--match-id",
        metavar="MATCH_ID",
        help="GNU Backgammon Match ID (cube, score; also POSITION_ID:MATCH_ID)",
    )
    p.set_defaults(func=run)


# ------------------------------------------------------------------------------------------------ helpers


def _spec(agent) -> str:
    return str(getattr(agent, "spec", None) or getattr(agent, "name", "agent"))


def _agent_label(given: str, agent) -> str:
    """The agent as the user named it, with the model that answered when that is another name (``default``):
    ``'default (bgai-td128.pt)'``."""
    spec = _spec(agent)
    model = os.path.basename(spec.split(":")[0]) if os.sep in spec or spec.endswith((".pt", ".onnx", ".npz")) else spec
    return given if model in (given, os.path.basename(given.split(":")[0])) else f"{given} ({model})"


def _ranking(agent, req) -> str:
    """What the values of a hint are (the ``ranking`` field of the JSON answers)."""
    caps = agent.capabilities
    if not caps.probabilities:
        return "agent score (cubeless; the agent has no probabilities, so the cube and score are not used)"
    if not req.cube_given:
        return "cubeless money equity"
    if req.cube_state.is_money:
        return "cubeful money equity (0-ply cubeful, per unit of the cube)"
    return "cubeful match equity (0-ply cubeful; MWC and GNU Backgammon's normalised equity)"


def _play_dicts(ranked, ids: list[str]) -> list[dict]:
    from bgai.core.equity import OUTPUTS

    out = []
    for r, pid in zip(ranked, ids):
        d = {"play": r.play.notation, "position_id": pid}
        if r.score_kind == "score":
            d["score"] = round(r.score, 6)
        else:
            d["equity"] = round(r.equity, 6)
        if r.mwc is not None:
            d["mwc"] = round(r.mwc, 6)
        if r.probabilities is not None:
            d["probabilities"] = {k: round(float(v), 6) for k, v in zip(OUTPUTS, r.probabilities)}
        out.append(d)
    return out


def _answers(agent, reqs) -> list[list[dict]]:
    """The plays of several requests with dice, ranked in one agent call; resulting Position IDs encoded in one
    vectorised call."""
    import numpy as np

    from bgai.analysis.api import rank_plays_batch
    from bgai.core.position_id import encode_position_ids

    ranked = rank_plays_batch(agent, np.stack([r.board for r in reqs]), [r.dice for r in reqs],
                              [r.cube_state if r.cube_given else None for r in reqs])
    ids = encode_position_ids(np.stack([p.afterstate for rk in ranked for p in rk]))
    out, k = [], 0
    for rk in ranked:
        out.append(_play_dicts(rk, ids[k:k + len(rk)]))
        k += len(rk)
    return out


def _record(agent, req, plays: list[dict], *, full: bool) -> dict:
    out = {"position_id": req.position_id, "dice": list(req.dice)}
    if full:
        out.update(agent=_spec(agent), ply=agent.capabilities.ply, score_kind=agent.capabilities.score_kind)
    if req.cube_given:  # the shape of ``bgai moves --batch`` unless the line has cube fields
        if req.match_id:
            out["match_id"] = req.match_id
        out["ranking"] = _ranking(agent, req)
    elif full:
        out["ranking"] = _ranking(agent, req)
    out["plays"] = plays
    return out


def _cube_record(agent, req, decision, *, full: bool) -> dict:
    from bgai.game.cube import cube_decision_dict, describe_state

    out = {"position_id": req.position_id}
    if req.match_id:
        out["match_id"] = req.match_id
    if full:
        out.update(agent=_spec(agent), state=describe_state(req.cube_state))
    out["cube"] = cube_decision_dict(decision)
    if req.double_offered:
        out["response"] = "take" if decision.take else "pass"
    return out


# ------------------------------------------------------------------------------------------------ run


def run(args) -> int:
    """Run ``bgai hint``; returns the exit status."""
    from bgai.agents.registry import make_agent
    from bgai.formats.request import read_position_request

    if args.batch:
        if args.position or args.dice:
            raise BgaiError("give either POSITION DICE or --batch FILE, not both")
        if args.match_id:
            raise BgaiError("--batch takes the Match ID per line (POSITION_ID:MATCH_ID D1D2), not --match-id")
        if args.board or args.json:
            raise BgaiError("--batch writes JSON lines; --json and --board are for one position")
        return _run_batch(make_agent(args.agent), args.batch)
    if not args.position:
        raise BgaiError("hint needs POSITION [DICE] (or --batch FILE)")
    if args.board and args.json:
        raise BgaiError("--board draws the position as text; not with --json")
    req = read_position_request(args.position, args.dice, match_id=args.match_id)
    agent = make_agent(args.agent)
    if args.board:
        from bgai.core.board import render

        print(render(req.board))
    if req.dice is None:
        return _run_cube_hint(args, agent, req)
    plays = _answers(agent, [req])[0]
    if args.json:
        print(json.dumps(_record(agent, req, plays, full=True)))
        return 0
    _print_plays(args, agent, req, plays)
    return 0


def _print_plays(args, agent, req, plays: list[dict]) -> None:
    from bgai.game.cube import describe_state

    caps = agent.capabilities
    kind = caps.score_kind
    head = f"Position ID {req.position_id}"
    if req.match_id:
        head += f", Match ID {req.match_id}"
    if req.cube_given:
        head += f" ({describe_state(req.cube_state)})"
    print(f"{head}, roll {req.dice}, agent {_agent_label(args.agent, agent)} ({kind}), {caps.ply}-ply")
    notes = [f"  ranked by {_ranking(agent, req)}"]
    if req.rolled:
        notes.append("  the position's dice are rolled: checker play (cube decisions come before the roll)")
    value = "score" if kind == "score" else "equity"
    if len(plays) == 1 and not plays[0]["play"]:
        print(f"  {NO_LEGAL_PLAY}; the position stays {plays[0]['position_id']} (the turn passes), "
              f"{value} {plays[0][value]:+.4f}")
        print("\n".join(notes))
        return
    width = max(len(p["play"]) for p in plays)
    best = plays[0][value]
    for i, p in enumerate(plays, 1):
        line = f"{i:3d}. {p['play']:<{width}}  {value} {p[value]:+.4f}"
        line += f" ({p[value] - best:+.4f})" if i > 1 else " " * 10
        if "mwc" in p:
            line += f"  MWC {100 * p['mwc']:.2f}%"
        if "probabilities" in p:
            pr = p["probabilities"]
            line += (f"  win {100 * pr['win']:.1f}% wg {100 * pr['win_gammon']:.1f}% "
                     f"wbg {100 * pr['win_backgammon']:.1f}% lg {100 * pr['lose_gammon']:.1f}% "
                     f"lbg {100 * pr['lose_backgammon']:.1f}%")
        line += f"  {p['position_id']}"
        print(line)
    print("\n".join(notes))


def _run_cube_hint(args, agent, req) -> int:
    """The cube decision (no dice): GNU Backgammon-style analysis with the agent's probabilities."""
    from bgai.analysis.api import decide_cube
    from bgai.game.cube import describe_state, format_cube_decision

    d = decide_cube(agent, req.board, req.cube_state)
    if args.json:
        print(json.dumps(_cube_record(agent, req, d, full=True)))
        return 0
    caps = agent.capabilities
    ply = f", {caps.ply}-ply" if caps.ply is not None else ""
    print(f"Position ID {req.position_id}" + (f", Match ID {req.match_id}" if req.match_id else "")
          + f": {describe_state(req.cube_state)}; agent {_agent_label(args.agent, agent)}{ply}")
    print(format_cube_decision(d))
    if req.double_offered:
        print(f"Proper response to the double: {'take' if d.take else 'pass'}")
    return 0


def _run_batch(agent, path: str) -> int:
    with reading_batch(path):
        return _process(agent, path, chunk=1 if path == "-" else CHUNK)


def _process(agent, path: str, *, chunk: int) -> int:
    from bgai.analysis.api import decide_cube
    from bgai.formats.request import read_position_request

    out = sys.stdout
    failed = False
    pending = []  # (line number, request) with dice

    def read(text: str):
        """A request with dice, or (request, cube decision) for a position without dice."""
        parts = text.split(None, 1)
        req = read_position_request(parts[0], parts[1] if len(parts) > 1 else None)
        return req if req.dice is not None else (req, decide_cube(agent, req.board, req.cube_state))

    def write(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")

    def flush() -> None:
        nonlocal failed
        if pending:
            reqs = [r for _, r in pending]
            try:
                answers = _answers(agent, reqs)
            except BgaiError:  # e.g. a match longer than the table: answer the lines one by one
                answers = []
                for r in reqs:
                    try:
                        answers.append(_answers(agent, [r])[0])
                    except BgaiError as exc:
                        answers.append(exc)
            for (n, r), plays in zip(pending, answers):
                if isinstance(plays, BgaiError):
                    failed = True
                    write({"line": n, "error": error_text(plays)})
                else:
                    write(_record(agent, r, plays, full=False))
            pending.clear()
        out.flush()

    for n, item in batch_items(path, read):
        if isinstance(item, BgaiError):
            flush()  # keep the output in input order
            failed = True
            write({"line": n, "error": error_text(item)})
            out.flush()
        elif isinstance(item, tuple):  # a cube decision
            flush()
            write(_cube_record(agent, item[0], item[1], full=False))
            out.flush()
        else:
            pending.append((n, item))
            if len(pending) >= chunk:
                flush()
    flush()
    return 1 if failed else 0
