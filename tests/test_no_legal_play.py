"""A roll with no legal play is worded the same by every front end (bgai.core.notation.NO_LEGAL_PLAY): the
HTTP ``/api/plays`` answer's ``note``, the web page (which shows that note), ``bgai hint`` and its JSON."""

from __future__ import annotations

import json
import os

import httpx
import numpy as np
import uvicorn
from conftest import UvicornThread, free_port

from bgai.cli import main
from bgai.core.board import starting_board
from bgai.core.dice import Dice
from bgai.core.movegen import legal_plays
from bgai.core.notation import NO_LEGAL_PLAY
from bgai.core.position_id import encode_position_id
from bgai.serve.bot import Bot
from bgai.serve.http import STATIC_DIR, create_app


def _closed_out() -> np.ndarray:
    """The side on roll has a checker on the bar against a closed board: no roll enters."""
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 24], b[0, 5] = 1, 14
    b[1, :6], b[1, 7] = 2, 3
    return b


BOARD = _closed_out()
PID = encode_position_id(BOARD)


def test_the_position_has_no_legal_play():
    assert NO_LEGAL_PLAY == "no legal play"
    for d in ((3, 1), (6, 6), (5, 2)):
        plays = legal_plays(BOARD, Dice(*d))
        assert len(plays) == 1 and not plays[0].steps and plays[0].notation == ""  # the one "play": the pass


def test_api_plays_says_it_in_note_and_keeps_its_fields():
    app = create_app(Bot.from_spec("pubeval"))
    server = UvicornThread(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            body = client.get("/api/plays", params={"position_id": PID, "dice": "31"}).json()
            start = client.get("/api/plays", params={"position_id": encode_position_id(starting_board()),
                                                      "dice": "31"}).json()
    finally:
        server.stop()
    assert body["note"] == NO_LEGAL_PLAY
    assert body["plays"] == [] and body["best"] is None and body["count"] == 0 and body["position_id"] == PID
    assert "note" not in start and start["count"] == 16 and start["best"]["play"]


def test_the_web_page_shows_the_servers_note():
    with open(os.path.join(STATIC_DIR, "app.js"), encoding="utf-8") as f:
        js = f.read()
    assert "no legal play" not in js.lower()  # no wording of its own ...
    assert "${S.note}." in js and "${r.note}." in js and "S.note = r.note;" in js  # ... the answer's note


def test_bgai_hint_says_it(capsys):
    assert main(["hint", PID, "31", "--agent", "pubeval"]) == 0
    out = capsys.readouterr().out
    assert f"  {NO_LEGAL_PLAY}; the position stays {PID} (the turn passes)" in out
    assert main(["hint", PID, "31", "--agent", "pubeval", "--json"]) == 0
    plays = json.loads(capsys.readouterr().out)["plays"]
    assert len(plays) == 1 and plays[0]["play"] == "" and plays[0]["position_id"] == PID
