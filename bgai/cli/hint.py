"""``bgai hint POSITION_ID DICE --agent AGENT [--json]`` and ``bgai hint --batch FILE --agent AGENT``.

Without DICE (``bgai hint POSITION_ID[:MATCH_ID] [--match-id MATCH_ID]``) it prints the cube decision of the side
on roll, as GNU Backgammon's ``hint`` does: No double / Double, take / Double, pass / Too good ..., with the
cubeful equities of no double, double/take and double/pass (:mod:`bgai.cube`; money play with a centred cube and
the Jacoby rule when no Match ID is given).

The legal plays ranked by the agent, best first, with its equity (pubeval's score stands in for equity) and,
for agents with probabilities (gnubg, neural), the mover's win/gammon/backgammon probabilities after each play,
and each resulting position ID from the mover's view (sides not swapped).

``--batch`` reads lines ``POSITION_ID D1D2`` (``-`` = stdin) and prints one JSON object per line, the shape of
``bgai moves --batch`` with ``equity`` (and ``probabilities``) added to each play; the whole batch goes through
the agent in one call.  A bad line gets ``{"line": n, "error": "..."}``; the exit status is then 1.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from bgai.cli.moves import parse_dice  # the same dice syntax as ``bgai moves``: 31, 3-1, 3,1
from bgai.errors import BgaiError

def register(subparsers) -> None:
    """Add the ``hint`` subcommand."""
    from bgai.agents.registry import valid_specs

    p = subparsers.add_parser(
        "hint",
        help="rank the legal plays of a position with an agent",
        description=f"Rank the legal plays of a position, best first, with an agent ({valid_specs()}).",
    )
    p.add_argument("position_id", metavar="POSITION_ID", nargs="?", help="GNU Backgammon Position ID")
    p.add_argument("dice", metavar="DICE", nargs="?", help="the roll, e.g. 31")
    p.add_argument("--agent", default="pubeval", help="agent spec (default pubeval)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--batch", metavar="FILE", help="lines 'POSITION_ID D1D2' ('-' = stdin); JSON lines out")
    p.add_argument(
        "--match-id",
        metavar="MATCH_ID",
        help="GNU Backgammon Match ID (cube, score; also POSITION_ID:MATCH_ID); without DICE: the cube decision",
    )
    p.set_defaults(func=run)


def _play_dicts(ranked, plays_by_key, with_probs: bool) -> list[dict]:
    from bgai.equity import OUTPUTS
    from bgai.formats.position_id import encode_position_ids

    ids = encode_position_ids(np.stack([r.afterstate for r in ranked]))
    out = []
    for r, pid in zip(ranked, ids):
        d = {"play": plays_by_key.get(r.afterstate.tobytes(), ""), "position_id": pid, "equity": round(r.equity, 6)}
        if with_probs and r.probabilities is not None:
            d["probabilities"] = {k: round(float(v), 6) for k, v in zip(OUTPUTS, r.probabilities)}
        out.append(d)
    return out


def _notations(board: np.ndarray, dice: tuple[int, int]) -> dict[bytes, str]:
    from bgai.movegen import legal_plays

    return {np.asarray(p.afterstate, dtype=np.int8).tobytes(): p.notation for p in legal_plays(board, dice)}


def _rank(agent, boards: np.ndarray, dice: np.ndarray):
    from bgai.evaluate import rank_plays

    return rank_plays(agent, boards, dice)


def run(args) -> int:
    """Run ``bgai hint``; returns the exit status."""
    from bgai.agents.registry import make_agent

    if args.batch:
        if args.position_id or args.dice:
            raise BgaiError("give either POSITION_ID DICE or --batch FILE, not both")
        agent = make_agent(args.agent)
        return _run_batch(agent, args.batch)
    if not args.position_id:
        raise BgaiError("hint needs POSITION_ID and DICE (or --batch FILE)")
    from bgai.formats.position_id import decode_position_id

    if ":" in args.position_id:  # gnubg's POSITION_ID:MATCH_ID
        if args.match_id:
            raise BgaiError("give the Match ID once: POSITION_ID:MATCH_ID or --match-id, not both")
        args.position_id, args.match_id = args.position_id.split(":", 1)
    board = decode_position_id(args.position_id)
    if not args.dice:
        from bgai.formats.match_id import decode_match_id

        ms = decode_match_id(args.match_id) if args.match_id else None
        if ms is None or ms.dice == (0, 0):
            return _run_cube_hint(args, board)
        args.dice = f"{ms.dice[0]}{ms.dice[1]}"  # the roll the Match ID carries
    dice = parse_dice(args.dice)
    agent = make_agent(args.agent)
    ranked = _rank(agent, board[None], np.array([dice]))[0]
    plays = _play_dicts(ranked, _notations(board, dice), with_probs=True)
    if len(plays) == 1 and not plays[0]["play"]:  # no legal play: the unchanged position
        plays = []
    if args.json:
        print(json.dumps({"position_id": args.position_id, "dice": list(dice), "agent": args.agent, "plays": plays}))
        return 0
    kind = "equity" if plays and "probabilities" in plays[0] else "score"
    print(f"Position ID {args.position_id}, roll {dice[0]}{dice[1]}, agent {args.agent} ({kind})")
    if not plays:
        print("  no legal play")
        return 0
    width = max(len(p["play"]) for p in plays)
    best = plays[0]["equity"]
    for i, p in enumerate(plays, 1):
        line = f"{i:3d}. {p['play']:<{width}}  {kind} {p['equity']:+.4f}"
        if i > 1:
            line += f" ({p['equity'] - best:+.4f})"
        if "probabilities" in p:
            pr = p["probabilities"]
            line += (
                f"  win {100 * pr['win']:.1f}% wg {100 * pr['win_gammon']:.1f}% "
                f"lg {100 * pr['lose_gammon']:.1f}%"
            )
        line += f"  {p['position_id']}"
        print(line)
    return 0


def _run_batch(agent, path: str) -> int:
    from bgai.formats.position_id import decode_position_id

    try:
        if path == "-":
            lines = sys.stdin.read().splitlines()
        else:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
    except OSError as exc:
        raise BgaiError(f"cannot read batch file {path!r}: {exc}") from exc
    items: list[tuple[int, str, tuple[int, int] | None, np.ndarray | None, str | None]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise BgaiError(f"expected 'POSITION_ID D1D2', got {line.strip()!r}")
            board = decode_position_id(parts[0])
            dice = parse_dice(parts[1])
            items.append((n, parts[0], dice, board, None))
        except BgaiError as exc:
            items.append((n, parts[0] if parts else "", None, None, str(exc)))
    good = [it for it in items if it[4] is None]
    ranked = []
    if good:
        ranked = _rank(agent, np.stack([it[3] for it in good]), np.array([it[2] for it in good]))
    by_line = {it[0]: r for it, r in zip(good, ranked)}
    failed = 0
    for n, pid, dice, board, err in items:
        if err is not None:
            failed += 1
            print(json.dumps({"line": n, "error": err}))
            continue
        plays = _play_dicts(by_line[n], _notations(board, dice), with_probs=True)
        if len(plays) == 1 and not plays[0]["play"]:
            plays = []
        print(json.dumps({"position_id": pid, "dice": list(dice), "plays": plays}))
    return 1 if failed else 0


def _run_cube_hint(args, board) -> int:
    """The cube decision (no dice): GNU Backgammon-style analysis with the agent's probabilities."""
    from bgai.agents.registry import make_agent
    from bgai.cube import CubeState, cube_decision_dict, describe_state, format_cube_decision
    from bgai.match import cube_state_from_match_id, match_from_match_id
    from bgai.play_cube import agent_cube_decision

    if args.match_id:
        state = cube_state_from_match_id(args.match_id, board)
        pending = match_from_match_id(args.match_id, board)[0].offered_by is not None
    else:
        state, pending = CubeState(), False  # money game, centred cube, Jacoby on (GNU Backgammon's default)
    agent = make_agent(args.agent)
    d = agent_cube_decision(agent, board, state)
    if args.json:
        out = {"position_id": args.position_id, "match_id": args.match_id, "agent": args.agent,
               "state": describe_state(state)}
        if d is None:
            out["cube"] = {"policy": "never double, always take", "double": False, "take": True}
        else:
            out["cube"] = cube_decision_dict(d)
        print(json.dumps(out))
        return 0
    print(f"Position ID {args.position_id}" + (f", Match ID {args.match_id}" if args.match_id else "")
          + f": {describe_state(state)}; agent {args.agent}")
    if d is None:
        print(f"  agent {args.agent} has no probabilities; its cube policy: never double, always take")
        return 0
    print(format_cube_decision(d))
    if pending:
        print(f"Proper response to the double: {'take' if d.take else 'pass'}")
    return 0
