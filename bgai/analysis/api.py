"""bgai's analysis API: one import for every front end (``bgai hint``, the servers, terminal play, the web page).

Small exact value types and a few functions::

    from bgai.analysis.api import read_position_request, rank_plays, evaluate_position, decide_cube

    req = read_position_request("4HPwATDgc/ABMA:cAkAAAAAAAAA", "31")   # any format: Position ID[:Match ID],
    plays = rank_plays(agent, req.board, req.dice, req.cube_state)    # XGID, wildbg p0..p25, FIBS board
    plays[0].play.notation, plays[0].score, plays[0].score_kind        # '8/5 6/5', 0.2, 'equity'

Value types: :class:`~bgai.core.dice.Dice` (one roll), :class:`~bgai.core.cube_state.CubeState` (cube and
score, side on roll's view), :class:`~bgai.formats.request.PositionRequest` (a parsed request),
:class:`~bgai.analysis.plays.RankedPlay` (a play with its evaluation), :class:`~bgai.analysis.position.Evaluation`
and :class:`~bgai.game.cube.CubeDecision`.  What an agent can answer is in its ``capabilities``
(:class:`~bgai.agents.base.Capabilities`).
"""

from __future__ import annotations

from bgai.agents.base import Capabilities
from bgai.analysis.plays import SCORE_KINDS, RankedPlay, rank_plays, rank_plays_batch
from bgai.analysis.position import Evaluation, choose_play, decide_cube, evaluate_position, position_probabilities
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.formats.request import PositionRequest, parse_position_request, read_position_request
from bgai.game.cube import CubeDecision

__all__ = [
    "Capabilities",
    "CubeDecision",
    "CubeState",
    "Dice",
    "Evaluation",
    "PositionRequest",
    "RankedPlay",
    "SCORE_KINDS",
    "choose_play",
    "decide_cube",
    "evaluate_position",
    "parse_position_request",
    "position_probabilities",
    "rank_plays",
    "rank_plays_batch",
    "read_position_request",
]
