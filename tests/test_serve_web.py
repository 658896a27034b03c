"""The web page, in headless Chromium (Debian package ``chromium``) against the running HTTP server.

The page's autoplay mode (``/?autoplay=1&seed=N``) clicks the page's own buttons: New game, Roll or (sometimes)
Double, Take or Drop, a random entry of the legal-play list, Play; once it types an illegal play first, which
must be refused.  The game record the
page shows is then replayed here with bgai's rules: every play of both sides must be legal with its dice and the
result must be the one the page announced.  A screenshot of a game in progress is saved in the test's tmp dir.
Skipped with a reason when chromium is not installed.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess

import pytest
from test_serve_http import Server  # noqa: E402 (tests/ is on sys.path under pytest)

from bgai.core.board import flip, is_game_over, result_kind, starting_board
from bgai.core.movegen import legal_plays, parse_play
from bgai.serve.bot import Bot

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), shutil.which("google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium); web page test skipped"
)


def _agent() -> str:
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        return "pubeval"
    return "gnubg"  # an agent with probabilities, so the page shows win/gammon chances


@pytest.fixture(scope="module")
def server():
    bot = Bot.from_spec(_agent())
    s = Server(bot)
    s.bot = bot
    yield s
    s.stop()


def _chromium(tmp_path, url: str, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--virtual-time-budget=120000", "--window-size=1280,900", *extra, url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _replay(log: list[str], resignations: list | None = None) -> tuple[int, str]:
    """Replay the page's game record with bgai's rules (plays, cube actions, resignations, scoring with the Jacoby
    rule); returns (plays checked, final line).  Each resignation is appended to ``resignations`` as ``(your board,
    cube value, cube owner, points, accepted)``."""
    board = starting_board()  # from "your" view
    m = re.fullmatch(r"Opening roll: you (\d), bgai (\d)\.", log[0])
    assert m, log[0]
    checked = 0
    turn = "You" if int(m.group(1)) > int(m.group(2)) else "bgai"
    cube, owner = 1, None
    dropped_by = None
    resigned = None
    for line in log[1:-1]:
        if m := re.fullmatch(r"You resign a (single game|gammon|backgammon): bgai (accepts|rejects)\.", line):
            assert turn == "You", line
            pts = {"single game": 1, "gammon": 2, "backgammon": 3}[m.group(1)]
            if resignations is not None:
                resignations.append((board.copy(), cube, owner, pts, m.group(2) == "accepts"))
            if m.group(2) == "accepts":
                resigned = pts
            continue
        if m := re.fullmatch(r"You double to (\d+): bgai (takes|drops)\.", line):
            assert turn == "You" and owner in (None, "You") and int(m.group(1)) == 2 * cube, line
            if m.group(2) == "takes":
                cube, owner = 2 * cube, "bgai"
            else:
                dropped_by = "bgai"
            continue
        if m := re.fullmatch(r"bgai doubles to (\d+)\.", line):
            assert turn == "bgai" and owner in (None, "bgai") and int(m.group(1)) == 2 * cube, line
            continue
        if m := re.fullmatch(r"You take: the cube is on (\d+)\.", line):
            cube, owner = 2 * cube, "You"
            assert int(m.group(1)) == cube
            continue
        if line == "You drop.":
            dropped_by = "You"
            continue
        m = re.fullmatch(r"(You|bgai) (\d)(\d): (.+)", line) or re.fullmatch(
            r"(You|bgai) rolled (\d)(\d): (no legal play)\.", line
        )
        assert m, line
        who, dice, text = m.group(1), (int(m.group(2)), int(m.group(3))), m.group(4)
        assert who == turn, f"{who} moved out of turn: {line}"
        mover = board if who == "You" else flip(board)
        if text == "no legal play":
            assert not any(p.steps for p in legal_plays(mover, dice)), line
            after = mover
        else:
            after = parse_play(text, mover, dice).afterstate  # raises if the play is not legal
            checked += 1
        board = after if who == "You" else flip(after)
        turn = "bgai" if who == "You" else "You"
    last = log[-1]
    m = re.fullmatch(r"(You win|bgai wins) (?:a (single game|gammon|backgammon)( by resignation)?|the game \(double dropped\)) "
                     r"\((\d+) points?\)\.", last)
    assert m, last
    pts = int(m.group(4))
    if resigned is not None:
        assert m.group(1) == "bgai wins" and m.group(3) and m.group(2) == ["single game", "gammon", "backgammon"][resigned - 1]
        assert pts == cube * (1 if owner is None else resigned), last  # Jacoby rule: centred cube counts 1
        return checked, last
    if dropped_by is not None:
        assert (m.group(1) == "You win") == (dropped_by == "bgai") and pts == cube, last
        return checked, last
    mover_view = board if turn == "bgai" else flip(board)  # the side that made the last play
    assert is_game_over(mover_view)[0]
    winner, kind = result_kind(mover_view)
    assert int(winner[0]) == 0
    assert pts == cube * (1 if owner is None else int(kind[0])), last  # Jacoby rule: centred cube counts 1
    assert (m.group(1) == "You win") == (turn == "bgai")
    return checked, last


def test_a_whole_game_through_the_page(server, tmp_path):
    r = _chromium(tmp_path, f"{server.url}/?autoplay=1&seed=6", "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert 'data-autoplay-done="1"' in body, body
    illegal = html.unescape(re.search(r'data-illegal-error="([^"]*)"', body).group(1))
    assert "is not one of your legal plays" in illegal
    log = [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", re.search(r'<ol id="log">(.*?)</ol>', dom, re.S).group(1))]
    checked, last = _replay(log)
    assert checked >= 4
    score = html.unescape(re.search(r'<span id="score">(.*?)</span>', dom).group(1))
    pts = int(re.search(r"\((\d+) point", last).group(1))
    assert score == (f"You {pts} \u2013 bgai 0" if last.startswith("You") else f"You 0 \u2013 bgai {pts}")
    # the board is drawn: the final position's checkers, and the bot's evaluation of its last play
    assert dom.count('class="checker') + dom.count('class="off') >= 15
    assert "bgai played" in dom
    if _agent() == "gnubg":
        assert "bgai wins" in dom and "equity" in dom
        # the cube was used both ways (with this seed): the bot doubled and took, you doubled and took
        assert any(x.startswith("bgai doubles to") for x in log) and any(x.startswith("You take") for x in log)
        assert any(re.fullmatch(r"You double to \d+: bgai takes\.", x) for x in log)


def test_screenshot_of_a_game_in_progress(server, tmp_path):
    shot = tmp_path / "bgai-web.png"
    r = _chromium(tmp_path, f"{server.url}/?autoplay=1&seed=4&stopafter=8", f"--screenshot={shot}")
    assert r.returncode == 0, r.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    # the same state as a DOM: mid-game, your turn to choose among legal plays only
    r = _chromium(tmp_path, f"{server.url}/?autoplay=1&seed=4&stopafter=8", "--dump-dom")
    body = re.search(r"<body([^>]*)>", r.stdout).group(1)
    assert 'data-autoplay-done="stopped"' in body and 'data-phase="move"' in body
    options = [html.unescape(o) for o in re.findall(r"<option[^>]*>(.*?)</option>", r.stdout)]
    assert options
    print(f"screenshot: {shot}")


def test_resigning_through_the_page(server, tmp_path):
    """Autoplay offers to resign a gammon after two plays: the page shows the bot's answer, which must be
    bgai.analysis.resign's for that position and cube, and the game ends (or goes on) accordingly."""
    from bgai.analysis.resign import resignation_decision
    from bgai.game.cube import CubeState

    r = _chromium(tmp_path, f"{server.url}/?autoplay=1&seed=6&resignafter=2&resign=2", "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert 'data-autoplay-done="1"' in body, body
    log = [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", re.search(r'<ol id="log">(.*?)</ol>', dom, re.S).group(1))]
    resignations: list = []
    _replay(log, resignations)
    assert len(resignations) == 1
    board, cube, owner, pts, accepted = resignations[0]
    cs = CubeState(cube_value=cube, owner=-1 if owner is None else (0 if owner == "bgai" else 1), jacoby=True)
    want = resignation_decision(server.bot.agent, flip(board), cs, pts, decider_on_roll=False)
    assert accepted == want.accept
    if accepted:
        assert log[-1].startswith("bgai wins a gammon by resignation")
        assert "your resignation" in dom
