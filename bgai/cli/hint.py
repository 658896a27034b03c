"""``bgai hint POSITION_ID[:MATCH_ID] DICE --agent AGENT [--json]`` and ``bgai hint --batch FILE --agent AGENT``.

Without DICE (``bgai hint POSITION_ID[:MATCH_ID] [--match-id MATCH_ID]``) it prints the cube decision of the side
on roll, as GNU Backgammon's ``hint`` does: No double / Double, take / Double, pass / Too good ..., with the
cubeful equities of no double, double/take and double/pass (:mod:`bgai.game.cube`; money play with a centred cube and
the Jacoby rule when no Match ID is given).  When the side on roll may not double (Crawford game, cube owned by
the opponent, dead cube) it says so and shows no double/take lines.  A Match ID that carries a roll means the
dice are rolled: the answer is then checker play for that roll (cube decisions come before the roll); DICE given
as well must be the same roll.

The legal plays ranked by the agent, best first, with the Position ID of each resulting position from the
mover's view (sides not swapped).  Ranking (the ``ranking`` field of the JSON answer):

* no Match ID: cubeless money equity (:func:`bgai.core.equity.cubeless_equity`) for agents with probabilities
  (gnubg, neural), which also get the mover's win/gammon/backgammon probabilities after each play;
* with a Match ID, agents with probabilities: GNU Backgammon's 0-ply cubeful checker-play evaluation
  (:func:`bgai.evaluate.cubeful_afterstate_equities`): match play by the mover's cubeful match-winning chance
  (``mwc``), shown with GNU Backgammon's normalised equity; money play by cubeful money equity;
* agents without probabilities (pubeval, heuristics): the agent's own cubeless score, cube and score unused.

A game that is over (a side has borne off all 15 checkers) is an error.  When no play is legal the list holds
one entry with ``"play": ""`` and the unchanged position, as in ``bgai moves``.

``--batch`` reads lines ``POSITION_ID[:MATCH_ID] D1D2`` (``-`` = stdin; D1D2 may be left out when the Match ID
carries the roll) and prints one JSON object per line, the shape of ``bgai moves --batch`` with ``equity`` (and
``probabilities``, ``mwc``) added to each play and ``match_id``/``ranking`` for lines with a Match ID; the whole
batch goes through the agent in one call.  A bad line gets ``{"line": n, "error": "..."}`` and the others are
still answered; the exit status is then 1.
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
    p.add_argument("--batch", metavar="FILE", help="lines 'POSITION_ID[:MATCH_ID] D1D2' ('-' = stdin); JSON lines out")
    p.add_argument(
        "--match-id",
        metavar="MATCH_ID",
        help="GNU Backgammon Match ID (cube, score; also POSITION_ID:MATCH_ID); without DICE: the cube decision",
    )
    p.set_defaults(func=run)


def _play_dicts(ranked, plays_by_key, with_probs: bool) -> list[dict]:
    from bgai.core.equity import OUTPUTS
    from bgai.core.position_id import encode_position_ids

    ids = encode_position_ids(np.stack([r.afterstate for r in ranked]))
    out = []
    for r, pid in zip(ranked, ids):
        d = {"play": plays_by_key.get(r.afterstate.tobytes(), ""), "position_id": pid, "equity": round(r.equity, 6)}
        if r.mwc is not None:
            d["mwc"] = round(r.mwc, 6)
        if with_probs and r.probabilities is not None:
            d["probabilities"] = {k: round(float(v), 6) for k, v in zip(OUTPUTS, r.probabilities)}
        out.append(d)
    return out


def _notations(board: np.ndarray, dice: tuple[int, int]) -> dict[bytes, str]:
    from bgai.core.movegen import legal_plays

    return {np.asarray(p.afterstate, dtype=np.int8).tobytes(): p.notation for p in legal_plays(board, dice)}


def _rank(agent, boards: np.ndarray, dice: np.ndarray, states=None):
    from bgai.analysis.plays import rank_plays

    return rank_plays(agent, boards, dice, states)


def _ranking(agent, state) -> str:
    """What the equities of a hint are (the ``ranking`` field of the JSON answers)."""
    from bgai.agents.base import ProbabilityAgent

    if not isinstance(agent, ProbabilityAgent):
        return "agent score (cubeless; the agent has no probabilities, so the cube and score are not used)"
    if state is None:
        return "cubeless money equity"
    if state.is_money:
        return "cubeful money equity (0-ply, per unit of the cube)"
    return "cubeful match equity (0-ply; MWC and GNU Backgammon's normalised equity)"


class _Request:
    """One hint request, parsed and checked: Position ID first, then the Match ID, then the dice."""

    def __init__(self, position: str, match_id: str | None, dice_text: str | None):
        from bgai.cli.moves import check_game_not_over
        from bgai.core.position_id import decode_position_id
        from bgai.formats.match_id import decode_match_id
        from bgai.game.match import cube_state_from_match_id, match_from_match_id

        if ":" in position:  # gnubg's POSITION_ID:MATCH_ID
            if match_id:
                raise BgaiError("give the Match ID once: POSITION_ID:MATCH_ID or --match-id, not both")
            position, match_id = position.split(":", 1)
        self.position_id, self.match_id = position, match_id or None
        self.board = decode_position_id(position)
        check_game_not_over(self.board)
        self.state = None
        self.pending = False
        ms_dice = (0, 0)
        if self.match_id:
            ms = decode_match_id(self.match_id)
            self.state = cube_state_from_match_id(self.match_id, self.board)
            self.pending = match_from_match_id(self.match_id, self.board)[0].offered_by is not None
            ms_dice = tuple(ms.dice)
        self.dice = parse_dice(dice_text) if dice_text else None
        if ms_dice != (0, 0):
            if self.dice is not None and sorted(self.dice) != sorted(ms_dice):
                raise BgaiError(
                    f"dice {self.dice[0]}{self.dice[1]} disagree with the roll {ms_dice[0]}{ms_dice[1]} in Match ID "
                    f"{self.match_id!r}: give the dice once"
                )
            if self.dice is None:
                self.dice = (int(ms_dice[0]), int(ms_dice[1]))
            self.rolled = True
        else:
            self.rolled = False


def run(args) -> int:
    """Run ``bgai hint``; returns the exit status."""
    from bgai.agents.registry import make_agent

    if args.batch:
        if args.position_id or args.dice:
            raise BgaiError("give either POSITION_ID DICE or --batch FILE, not both")
        if args.match_id:
            raise BgaiError("--batch takes the Match ID per line (POSITION_ID:MATCH_ID D1D2), not --match-id")
        agent = make_agent(args.agent)
        return _run_batch(agent, args.batch)
    if not args.position_id:
        raise BgaiError("hint needs POSITION_ID and DICE (or --batch FILE)")
    req = _Request(args.position_id, args.match_id, args.dice)
    args.position_id, args.match_id = req.position_id, req.match_id
    if req.dice is None:
        return _run_cube_hint(args, req.board, req.state, req.pending)
    agent = make_agent(args.agent)
    dice = req.dice
    ranked = _rank(agent, req.board[None], np.array([dice]), [req.state])[0]
    plays = _play_dicts(ranked, _notations(req.board, dice), with_probs=True)
    ranking = _ranking(agent, req.state)
    if args.json:
        out = {"position_id": req.position_id, "dice": list(dice), "agent": args.agent, "ranking": ranking}
        if req.match_id:
            out["match_id"] = req.match_id
        out["plays"] = plays
        print(json.dumps(out))
        return 0
    from bgai.agents.base import ProbabilityAgent
    from bgai.game.cube import describe_state

    kind = "equity" if isinstance(agent, ProbabilityAgent) else "score"
    head = f"Position ID {req.position_id}"
    if req.match_id:
        head += f", Match ID {req.match_id} ({describe_state(req.state)})"
    print(f"{head}, roll {dice[0]}{dice[1]}, agent {args.agent} ({kind})")
    notes = [f"  ranked by {ranking}"]
    if req.rolled:
        notes.append("  the Match ID's dice are rolled: checker play (cube decisions come before the roll)")
    if len(plays) == 1 and not plays[0]["play"]:
        print(f"  no legal play; the position stays {plays[0]['position_id']} (the turn passes), "
              f"{kind} {plays[0]['equity']:+.4f}")
        print("\n".join(notes))
        return 0
    width = max(len(p["play"]) for p in plays)
    best = plays[0]["equity"]
    for i, p in enumerate(plays, 1):
        line = f"{i:3d}. {p['play']:<{width}}  {kind} {p['equity']:+.4f}"
        if i > 1:
            line += f" ({p['equity'] - best:+.4f})"
        if "mwc" in p:
            line += f"  MWC {100 * p['mwc']:.2f}%"
        if "probabilities" in p:
            pr = p["probabilities"]
            line += (
                f"  win {100 * pr['win']:.1f}% wg {100 * pr['win_gammon']:.1f}% "
                f"lg {100 * pr['lose_gammon']:.1f}%"
            )
        line += f"  {p['position_id']}"
        print(line)
    print("\n".join(notes))
    return 0


def _run_batch(agent, path: str) -> int:
    try:
        if path == "-":
            lines = sys.stdin.read().splitlines()
        else:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
    except OSError as exc:
        raise BgaiError(f"cannot read batch file {path!r}: {exc}") from exc
    items: list[tuple[int, _Request | None, str | None]] = []
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        parts = text.split(None, 1)
        try:
            req = _Request(parts[0], None, parts[1] if len(parts) > 1 else None)
            if req.dice is None:
                raise BgaiError(f"expected 'POSITION_ID[:MATCH_ID] D1D2', got {text!r} (no dice)")
            items.append((n, req, None))
        except BgaiError as exc:
            items.append((n, None, str(exc)))
    good = [req for _, req, err in items if err is None]
    ranked = []
    if good:
        ranked = _rank(agent, np.stack([r.board for r in good]), np.array([r.dice for r in good]),
                       [r.state for r in good])
    by_req = {id(r): rk for r, rk in zip(good, ranked)}
    failed = 0
    for n, req, err in items:
        if err is not None:
            failed += 1
            print(json.dumps({"line": n, "error": err}))
            continue
        plays = _play_dicts(by_req[id(req)], _notations(req.board, req.dice), with_probs=True)
        out = {"position_id": req.position_id, "dice": list(req.dice)}
        if req.match_id:  # the shape of ``bgai moves --batch`` unless the line has a Match ID
            out["match_id"] = req.match_id
            out["ranking"] = _ranking(agent, req.state)
        out["plays"] = plays
        print(json.dumps(out))
    return 1 if failed else 0


def _run_cube_hint(args, board, state, pending: bool) -> int:
    """The cube decision (no dice): GNU Backgammon-style analysis with the agent's probabilities."""
    from bgai.agents.registry import make_agent
    from bgai.game.cube import CubeState, cube_decision_dict, describe_state, format_cube_decision
    from bgai.game.play_cube import agent_cube_decision

    if state is None:
        state = CubeState()  # money game, centred cube, Jacoby on (GNU Backgammon's default)
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
