"""The HTTP/JSON API, tested with a real HTTP client (httpx) against uvicorn running on a free loopback port."""

from __future__ import annotations

import socket
import time

import httpx
import numpy as np
import pytest
from conftest import UvicornThread, free_port, has_gnubg_nn

from bgai.core.board import starting_board
from bgai.core.movegen import legal_plays
from bgai.core.position_id import encode_position_id
from bgai.serve.bot import Bot
from bgai.serve.http import create_app

START = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:3:0:10"
START_WILDBG = "p24=2&p19=-5&p17=-3&p13=5&p12=-5&p8=3&p6=5&p1=-2"


class Server(UvicornThread):
    """The app of ``bot`` on a free loopback port, with an httpx client (``client``)."""

    def __init__(self, bot: Bot) -> None:
        import uvicorn

        super().__init__(uvicorn.Config(create_app(bot), host="127.0.0.1", port=free_port(), log_level="warning"))
        self.client = httpx.Client(base_url=self.url, timeout=60)

    def stop(self) -> None:
        self.client.close()
        super().stop()


@pytest.fixture(scope="module")
def pubeval():
    s = Server(Bot.from_spec("pubeval"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def gnubg():
    if not has_gnubg_nn():
        pytest.skip("gnubg-nn (dev extra) is not installed: no agent with probabilities to serve")
    s = Server(Bot.from_spec("gnubg"))
    yield s
    s.stop()


def test_info_and_openapi(pubeval):
    r = pubeval.client.get("/api/info")
    assert r.status_code == 200
    assert r.json()["agent"] == "pubeval" and r.json()["probabilities"] is False
    spec = pubeval.client.get("/openapi.json").json()
    for path in ("/api/plays", "/api/evaluate", "/api/cube", "/move", "/eval"):
        assert path in spec["paths"]
        names = {p["name"] for p in spec["paths"][path]["get"]["parameters"]}
        assert {f"p{i}" for i in range(26)} <= names
    assert {"position_id", "xgid", "dice", "match_id"} <= {p["name"] for p in spec["paths"]["/api/plays"]["get"]["parameters"]}


def test_plays_ranked_in_all_three_position_forms(pubeval):
    c = pubeval.client
    by_pid = c.get("/api/plays", params={"position_id": START, "dice": "31"}).json()
    legal = legal_plays(starting_board(), (3, 1))
    assert by_pid["count"] == len(legal) == len(by_pid["plays"])
    assert {p["play"] for p in by_pid["plays"]} == {p.notation for p in legal}
    assert by_pid["best"] == by_pid["plays"][0]
    scores = [p["score"] for p in by_pid["plays"]]
    assert scores == sorted(scores, reverse=True)
    # the best play is what the agent chooses
    bot = Bot.from_spec("pubeval")
    assert by_pid["best"]["play"] == bot.choose_play(starting_board(), (3, 1), np.random.default_rng(0)).notation
    assert by_pid["best"]["play"] == "8/5 6/5"
    # the resulting position is from the mover's view
    best = next(p for p in legal if p.notation == "8/5 6/5")
    assert by_pid["best"]["position_id"] == encode_position_id(best.afterstate)
    assert by_pid["best"]["board"] == best.afterstate.tolist()
    by_xgid = c.get("/api/plays", params={"xgid": START_XGID}).json()
    by_wild = c.get("/api/plays?die1=3&die2=1&" + START_WILDBG).json()
    for other in (by_xgid, by_wild):
        assert [p["play"] for p in other["plays"]] == [p["play"] for p in by_pid["plays"]]
    assert len(c.get("/api/plays", params={"position_id": START, "dice": "3-1", "limit": 2}).json()["plays"]) == 2


def test_no_legal_play_and_game_over(pubeval):
    c = pubeval.client
    # closed board, one checker on the bar: no play
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 24] = 1
    b[0, 5] = 14
    b[1, 0:6] = 2
    b[1, 6] = 3
    r = c.get("/api/plays", params={"position_id": encode_position_id(b), "dice": "66"}).json()
    assert r["best"] is None and r["plays"] == [] and r["count"] == 0
    # bearing off the last checker ends the game
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 0] = 1
    b[1, 20] = 15  # the opponent's 21-point = the mover's 4-point, in the mover's home board
    r = c.get("/api/plays", params={"position_id": encode_position_id(b), "dice": "21"}).json()
    assert r["best"]["game_over"] is True
    assert r["best"]["result"] == {"winner": "mover", "points": 3}  # opponent still in the winner's home board


def test_wildbg_compatible_move(pubeval):
    c = pubeval.client
    r = c.get("/move?die1=3&die2=1&" + START_WILDBG)
    assert r.status_code == 200
    moves = r.json()["moves"]
    assert len(moves) == len(legal_plays(starting_board(), (3, 1)))
    assert moves[0]["play"] == [{"from": 8, "to": 5}, {"from": 6, "to": 5}]
    r = c.get("/move?die1=1&die2=1&p5=2&p24=-1").json()["moves"]
    assert {tuple((s["from"], s["to"]) for s in m["play"]) for m in r} >= {((5, 4), (4, 3), (3, 2), (2, 1))}


@pytest.mark.parametrize(
    "query, status, message",
    [
        ("/api/plays?dice=31", 400, "no position given"),
        (f"/api/plays?position_id={START}&xgid=x&dice=31", 400, "one form only"),
        ("/api/plays?position_id=hello&dice=31", 400, "Position ID"),
        (f"/api/plays?position_id={START}", 400, "no dice given"),
        (f"/api/plays?position_id={START}&dice=71", 400, "dice '71'"),
        (f"/api/plays?position_id={START}&die1=3", 400, "give both die1 and die2"),
        (f"/api/plays?position_id={START}&dice=31&die1=3&die2=1", 400, "not both"),
        (f"/api/plays?position_id={START}&dice=31&limit=0", 400, "limit must be >= 1"),
        ("/api/plays?xgid=XGID=nonsense&dice=31", 400, "XGID"),
        (f"/api/cube?position_id={START}&match_id=ABC", 400, "Match ID"),
        ("/api/plays?p25=-1&dice=31", 400, "Index 25 is the bar for player x"),
        ("/api/plays?p3=16&dice=31", 400, "between -15 and 15"),
        ("/api/plays?p1=15&p2=1&dice=31", 400, "more than 15 checkers"),
        ("/api/plays?p1=2&p26=1&dice=31", 400, "unknown board parameter 'p26'"),
        ("/move?die1=3&die2=1&p1=2&p30=-1", 400, "unknown board parameter 'p30'"),
        ("/move?p1=15", 400, "Failed to deserialize query string: missing field `die1`"),
        ("/move?die1=3&p1=15", 400, "Failed to deserialize query string: missing field `die2`"),
        ("/move?die1=x&die2=1&p1=1", 400, "Failed to deserialize query string: die1: invalid digit found in string"),
        ("/move?die1=3&die2=1&p1=2&p1=-2", 400, "Failed to deserialize query string: duplicate field `p1`"),
        ("/eval?p1=2&p1=-2&p24=-1", 400, "Failed to deserialize query string: duplicate field `p1`"),
        ("/move?die1=3&die2=1&p1=-2", 400, "the game is over: the side on roll has borne off all 15 checkers"),
        ("/eval?p1=2", 400, "the game is over: the opponent of the side on roll has borne off all 15"),
        ("/move?die1=9&die2=1&p1=1&p24=-1", 400, "Dice values must be between 1 and 6."),
        ("/move?die1=3&die2=1&p1=1&x_away=3&o_away=2", 400, "only money games"),
        (f"/api/plays?position_id={START}&die1=x&die2=1", 400, "die1: expected an integer, got 'x'"),
        (f"/api/plays?position_id={START}&dice=31&limit=abc", 400, "limit: expected an integer, got 'abc'"),
        (f"/api/plays?position_id={START}&dice=31&dice=42", 400, "parameter 'dice' is given 2 times"),
        ("/api/plays?p1=2&p1=-2&p24=-1&dice=31", 400, "parameter 'p1' is given 2 times"),
        (f"/api/plays?position_id={START}&dice=31&limit=1&limit=2", 400, "parameter 'limit' is given 2 times"),
        ("/api/plays?p1=-2&dice=31", 400, "the game is over: the side on roll has borne off all 15 checkers"),
        ("/api/evaluate?p5=3", 400, "the game is over: the opponent of the side on roll has borne off all 15"),
        (f"/api/cube?position_id={START}&match_id=QYkqASAAIAAA", 400, "cube decisions are made before rolling"),
        (f"/api/cube?xgid={START_XGID}", 400, "carry the roll 3-1"),
        (f"/api/cube?position_id={START}&dice=31", 400, "cube decisions are made before rolling"),
        (f"/api/evaluate?position_id={START}", 409, "gives no probabilities"),
        (f"/api/cube?position_id={START}&cube_value=3&cube_owner=opponent", 400, "power of two"),
        (f"/api/cube?position_id={START}&cube_value=2&cube_owner=mine", 400, "cube_owner: expected centred"),
        (f"/api/cube?position_id={START}&cube_value=2", 400, "has an owner"),
        (f"/api/cube?position_id={START}&cube_value=2&cube_owner=opponent&match_id=cAkAAAAAAAAA", 400, "not both"),
        (f"/api/cube?position_id={START}&jacoby=perhaps", 400, "jacoby: expected true or false, got 'perhaps'"),
        # the Match ID twice: named by the HTTP parameters, not the CLI's --match-id
        (f"/api/plays?position_id={START}:cAkAAAAAAAAA&match_id=cAkAAAAAAAAA&dice=31", 400,
         "give the Match ID once: position_id=POSITION_ID:MATCH_ID or match_id=MATCH_ID, not both"),
        # parameters of another endpoint are refused, not ignored
        (f"/api/evaluate?position_id={START}&dice=31", 400,
         "/api/evaluate does not take the parameter 'dice' (it values the position before the roll): leave it out"),
        (f"/api/evaluate?position_id={START}&die1=3&die2=1", 400, "does not take the parameter 'die1'"),
        (f"/api/evaluate?position_id={START}&limit=3", 400,
         "/api/evaluate does not take the parameter 'limit' (it is another endpoint's): leave it out"),
        (f"/api/cube?position_id={START}&limit=3", 400, "/api/cube does not take the parameter 'limit'"),
        (f"/api/plays?position_id={START}&dice=31&points=2", 400, "/api/plays does not take the parameter 'points'"),
        (f"/api/resign?position_id={START}&points=1&limit=3", 400, "/api/resign does not take the parameter 'limit'"),
        # integers are plain decimal digits: no '_' separators, spaces or decimals
        (f"/api/plays?position_id={START}&dice=31&limit=1_0", 400, "limit: expected an integer, got '1_0'"),
        (f"/api/plays?position_id={START}&dice=31&limit=%2010", 400, "limit: expected an integer, got ' 10'"),
        (f"/api/plays?position_id={START}&dice=31&limit=10.0", 400, "limit: expected an integer, got '10.0'"),
        (f"/api/plays?position_id={START}&dice=31&limit=%EF%BC%91", 400, "limit: expected an integer"),
        (f"/api/plays?position_id={START}&die1=0_3&die2=1", 400, "die1: expected an integer, got '0_3'"),
        (f"/api/cube?position_id={START}&cube_value=0_2&cube_owner=opponent", 400,
         "cube_value: expected an integer, got '0_2'"),
        (f"/api/resign?position_id={START}&points=0_1", 400, "points: expected an integer, got '0_1'"),
        ("/move?die1=1_0&die2=1&p1=1&p24=-1", 400, "Failed to deserialize query string: die1: invalid digit found in string"),
    ],
)
def test_malformed_requests_get_4xx_json_saying_what_is_wrong(pubeval, query, status, message):
    r = pubeval.client.get(query)
    assert r.status_code == status, r.text
    if message.startswith("Failed to deserialize"):  # wildbg's plain-text answer (PROTOCOLS.md section 4)
        assert r.headers["content-type"].startswith("text/plain") and r.text == message
    else:
        body = r.json()
        assert set(body) == {"message"} and message in body["message"]
    assert pubeval.client.get("/api/info").status_code == 200  # still serving


def test_evaluate_and_cube_with_a_probability_agent(gnubg):
    from bgai.core.equity import cubeless_equity
    from bgai.game.cube import CubeState, analyse_cube, cube_efficiency

    c = gnubg.client
    bot = Bot.from_spec("gnubg")
    # money, cube centred: the AnkiGammon XGID position (top player on roll)
    xgid = "XGID=-A-Bb-DBB---bBa---bcbbaA-A:0:0:-1:00:4:0:0:0:8"
    r = c.get("/api/evaluate", params={"xgid": xgid})
    assert r.status_code == 200, r.text
    body = r.json()
    from bgai.formats.xgid import decode_xgid

    board = decode_xgid(xgid).board
    p = bot.probabilities(board)
    assert [body["probabilities"][k] for k in ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")] == pytest.approx(p.tolist())
    assert body["cubeless_equity"] == pytest.approx(float(cubeless_equity(p)))
    a = analyse_cube(p, CubeState(jacoby=False), cube_efficiency(board[None]))
    assert body["cubeful_equity"] == pytest.approx(float(a.optimal[0]))
    assert body["state"]["position_id"] == "GW+DAUi03ZABBg"
    # match play through a Match ID: 9-point match, 2-4, cube 2 owned by player 0, player 1 on roll (not rolled:
    # the same state as QYkqASAAIAAA without its 5-2, which /api/cube refuses)
    pid = encode_position_id(starting_board())
    r = c.get("/api/cube", params={"position_id": pid, "match_id": "QQkgASAAIAAA"}).json()
    assert r["state"] == {
        "position_id": pid, "cube_value": 2, "cube_owner": "opponent", "match_length": 9, "score": [4, 2],
        "crawford": False,
    }
    assert r["double"] is False  # the opponent owns the cube
    a = analyse_cube(bot.probabilities(starting_board()), CubeState(2, 1, 9, (4, 2)), 0.68)
    assert r["no_double"] == pytest.approx(float(a.no_double[0]))
    assert r["policy"] == "bgai.game.cube"
    # a hopeless position for the opponent: double, and the opponent should pass
    b = np.zeros((2, 25), dtype=np.int8)
    b[0, 0:5] = 3
    b[1, 24] = 15
    b[1, 0] = 0
    r = c.get("/api/cube", params={"position_id": encode_position_id(b)}).json()
    assert r["take"] is False
    # money cube given directly: owned by the opponent -> no double available
    r = c.get("/api/cube", params={"position_id": encode_position_id(b), "cube_value": 4, "cube_owner": "opponent"}).json()
    assert r["double"] is False and r["state"]["cube_value"] == 4 and r["state"]["cube_owner"] == "opponent"
    assert r["available"] is False and "owned by the opponent" in r["reason"]
    assert "double_take" not in r and "double_pass" not in r
    r2 = c.get("/api/cube", params={"position_id": encode_position_id(b), "cube_value": 4, "cube_owner": "on_roll"}).json()
    assert r2["state"]["cube_owner"] == "on roll" and r2["no_double"] != r["no_double"]
    # wildbg-compatible /eval
    r = c.get("/eval?" + START_WILDBG).json()
    assert r["probabilities"]["win"] == pytest.approx(float(bot.probabilities(starting_board())[0]))
    assert set(r["cube"]) == {"double", "accept"}


def test_cli_serve_http_runs_the_api_and_the_page():
    import os
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgai", "serve", "http", "--port", str(port), "--agent", "pubeval"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=root,
    )
    try:
        assert f"http://127.0.0.1:{port}/" in proc.stderr.readline()
        for _ in range(200):
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/info", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert r.json()["agent"] == "pubeval"
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert page.status_code == 200 and "<svg id=\"board\"" in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/static/app.js", timeout=5).status_code == 200
    finally:
        proc.terminate()
        proc.wait(10)


def test_concurrent_requests_get_their_own_answers(pubeval):
    """Eight threads ask about different positions at once; every answer equals the one given alone."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    ref = np.load(os.path.join(os.path.dirname(__file__), "data", "reference_positions.npz"))["boards"]
    rng = np.random.default_rng(9)
    queries = [
        {"position_id": encode_position_id(ref[i]), "dice": "".join(map(str, rng.integers(1, 7, 2)))}
        for i in rng.choice(len(ref), 24, replace=False)
    ]
    alone = [pubeval.client.get("/api/plays", params=q).json() for q in queries]

    def ask(q):
        with httpx.Client(base_url=pubeval.url, timeout=60) as c:
            return c.get("/api/plays", params=q).json()

    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(ask, queries * 2))
    for i, ans in enumerate(together):
        assert ans == alone[i % len(queries)]


def test_huge_input_is_not_echoed_back(pubeval):
    # (uvicorn itself refuses request lines over ~16 KB; 10,000 characters pass through to the handler)
    pid = "A" * 10_000
    r = pubeval.client.get("/api/plays", params={"position_id": pid, "dice": "31"})
    assert r.status_code == 400
    msg = r.json()["message"]
    assert msg == "Position ID '" + "A" * 40 + "...' (10000 characters): wrong length 10000 (a Position ID has 14 characters)"
    r = pubeval.client.get("/api/plays", params={"position_id": START, "dice": "31", "limit": "9" * 5000 + "x"})
    assert r.status_code == 400 and len(r.text) < 200
    assert r.json()["message"] == "limit: expected an integer, got '" + "9" * 40 + "...' (5001 characters)"
    r = pubeval.client.get("/api/plays", params={"position_id": START, "dice": "31", "limit": "9" * 5000})
    assert r.status_code == 400 and len(r.text) < 200
    assert r.json()["message"] == (
        "limit: expected an integer (this one is far too long), got '" + "9" * 40 + "...' (5000 characters)"
    )


def test_repeated_board_parameter_never_answers_200(pubeval):
    """``p1=2&p1=-2`` used to be read as one of the two; now it is refused on every endpoint."""
    for path in ("/move?die1=3&die2=1&", "/eval?", "/api/plays?dice=31&", "/api/evaluate?", "/api/cube?"):
        r = pubeval.client.get(path + "p1=2&p1=-2&p6=5&p19=-5")
        assert r.status_code == 400, (path, r.text)
    r = pubeval.client.get("/move?die1=3&die2=1&p1=2&p6=5&p19=-5")
    assert r.status_code == 200 and r.json()["moves"][0]["play"]


def test_error_handler_helpers():
    from bgai.errors import quote_input as _quote  # the one quoting helper (was bgai.serve.http._quote)
    from bgai.errors import shorten_message as _shorten

    assert _quote("abc") == "'abc'"
    assert _quote("x" * 41) == "'" + "x" * 40 + "...' (41 characters)"
    assert _shorten("dice '71': bad") == "dice '71': bad"
    assert _shorten("a" * 1000) == "a" * 397 + "..."
    huge = "Position ID '" + "A" * 100_000 + "': wrong length"
    assert _shorten(huge) == "Position ID '" + "A" * 40 + "...' (100000 characters): wrong length"


def test_crawford_game_cube_is_not_available(gnubg):
    """GNU Backgammon says "You cannot double." in the Crawford game: no double/take figures are offered."""
    r = gnubg.client.get("/api/cube", params={"position_id": "wN1tAwDb3Q4AAA", "match_id": "8AmgADAAIAAA"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["state"]["crawford"] is True
    assert body["double"] is False and body["available"] is False
    assert "Crawford" in body["reason"]
    assert "double_take" not in body and "no_double" in body


def test_one_request_parser_like_hint(pubeval):
    """/api/cube refuses a cube turned in the Crawford game (as ``bgai hint`` does); POSITION_ID:MATCH_ID and
    the other request-parser forms are accepted; scores are labelled."""
    c = pubeval.client
    r = c.get("/api/cube", params={"position_id": "dncPAADt7g4AAA", "match_id": "ggGgACAAIAAA"})
    assert r.status_code == 400 and r.json()["message"] == (
        "Match ID 'ggGgACAAIAAA': the cube was turned in the Crawford game")
    r = c.get("/api/plays", params={"position_id": f"{START}:cAkAAAAAAAAA", "dice": "31"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == 16 and body["best"]["play"] == "8/5 6/5" and body["best"]["score_kind"] == "score"
    assert body["best"]["equity"] is None and body["dice"] == [3, 1]
    r = c.get("/api/plays", params={"position_id": f"{START}:QYkqASAAIAAA"})  # the Match ID's roll 5-2
    assert r.status_code == 200 and r.json()["dice"] == [5, 2]
    r = c.get("/api/plays", params={"position_id": f"{START}:QYkqASAAIAAA", "dice": "31"})
    assert r.status_code == 400 and "dice 3-1 disagree with the roll 5-2" in r.json()["message"]
    assert c.get("/api/info").json()["score_kind"] == "score"


def test_plays_with_a_match_id_rank_by_mwc(gnubg):
    r = gnubg.client.get("/api/plays", params={"position_id": f"{START}:cAngADAAKAAA", "dice": "31"}).json()
    best = r["best"]
    assert best["play"] == "8/5 6/5" and best["score_kind"] == "mwc" and best["score"] == best["mwc"]
    assert best["equity"] == pytest.approx(-0.042, abs=3e-3)  # GNU Backgammon 0-ply (tests/test_hint_qa.py)
    mwcs = [p["mwc"] for p in r["plays"]]
    assert mwcs == sorted(mwcs, reverse=True)


def test_random_agent_lists_its_chosen_play_first():
    """QA (session 6): the random bot's chosen play was compared by identity with the generator's plays, so the
    generator's first play was always listed first; the chosen play is the one choose_play returns."""
    from bgai.agents.registry import make_agent
    from bgai.core.position_id import decode_position_id
    from bgai.serve.bot import Bot

    bot = Bot(make_agent("random"), "random")
    board = decode_position_id("4HPwATDgc/ABMA")
    firsts = set()
    for seed in range(20):
        want = bot.choose_play(board, (3, 1), np.random.default_rng(seed))
        ranked = bot.rank_plays(board, (3, 1), np.random.default_rng(seed))
        assert ranked[0].play == want and len(ranked) == len(bot.legal_plays(board, (3, 1)))
        firsts.add(ranked[0].play.notation)
    assert len(firsts) > 5  # (16 legal plays of 3-1 at the start)
