"""The lean path of ``GET /api/plays`` (bgai.serve.http: straight to the answer, without FastAPI's routing and
middleware) must answer byte for byte what the FastAPI route answers: the same status, headers and body, for good
requests and for every kind of error (which the lean path leaves to FastAPI)."""

from __future__ import annotations

import asyncio
import urllib.parse

import pytest
from fastapi import FastAPI

from bgai.core.board import starting_board
from bgai.core.movegen import afterstates
from bgai.core.position_id import encode_position_id
from bgai.serve.bot import Bot
from bgai.serve.http import create_app

START = "4HPwATDgc/ABMA"


def _call(app, path: str, query: str, *, lean: bool, host: bytes = b"127.0.0.1:8080", method: str = "GET"):
    """One request straight into the ASGI app: the lean path (``app(...)``) or FastAPI's (``FastAPI.__call__``)."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": [(b"host", host)], "client": ("127.0.0.1", 5555), "server": ("127.0.0.1", 8080)}
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run((app if lean else FastAPI.__call__.__get__(app))(scope, receive, send))
    start = sent[0]
    return start["status"], start["headers"], b"".join(m.get("body", b"") for m in sent[1:])


def _positions() -> list[str]:
    board = starting_board()
    out = [START]
    for d in [(3, 1), (6, 6), (5, 2)]:
        after, _ = afterstates(board, d)
        out += [encode_position_id(a[::-1]) for a in after[::5]]
    return out


QUERIES = [
    *(f"position_id={urllib.parse.quote(p, safe='')}&dice={d}" for p in _positions() for d in ("31", "66", "52")),
    f"position_id={START}&die1=6&die2=5",
    f"position_id={START}&dice=31&limit=3",
    f"position_id={START}:cAngADAAKAAA&dice=31",  # a Match ID: cubeful MWC
    f"position_id={START}&match_id=cAkAAAAAAAAA&dice=4-2",
    "xgid=XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10",
    "p24=2&p13=5&p8=3&p6=5&p1=-2&p12=-5&p17=-3&p19=-5&dice=31",
    # errors: FastAPI answers them on both paths
    f"position_id={START}&dice=31&dice=42",
    f"position_id={START}&dice=31&limit=0",
    f"position_id={START}&dice=31&limit=abc",
    f"position_id={START}",
    "position_id=nonsense&dice=31",
    "dice=31",
    f"position_id={START}&dice=77",
    f"position_id={START}&xgid=XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10&dice=31",
]


@pytest.mark.parametrize("spec", ["pubeval", "default"])
def test_lean_path_answers_byte_for_byte_as_fastapi(spec):
    app = create_app(Bot.from_spec(spec))
    assert "/api/plays" in app.lean
    statuses = set()
    for q in QUERIES:
        lean = _call(app, "/api/plays", q, lean=True)
        full = _call(app, "/api/plays", q, lean=False)
        assert lean == full, q
        statuses.add(lean[0])
    assert statuses == {200, 400}


def test_lean_path_keeps_the_host_check_and_leaves_other_requests_to_fastapi():
    app = create_app(Bot.from_spec("pubeval"))
    q = f"position_id={START}&dice=31"
    status, _, body = _call(app, "/api/plays", q, lean=True, host=b"evil.example")
    assert status == 400 and b"not served here" in body
    assert _call(app, "/api/plays", q, lean=True, host=b"evil.example") == _call(
        app, "/api/plays", q, lean=False, host=b"evil.example")
    assert _call(app, "/api/plays", q, lean=True, method="POST")[0] == 405


def test_agents_that_draw_a_play_are_served_by_fastapi():
    app = create_app(Bot.from_spec("random"))
    assert app.lean == {}
    status, _, _ = _call(app, "/api/plays", f"position_id={START}&dice=31", lean=True)
    assert status == 200
