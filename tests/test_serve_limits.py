"""Server hardening: connection limits and idle timeouts (HTTP and the external-player protocol), the HTTP ``Host``
check (DNS rebinding), JSON ``{"message"}`` for every HTTP error, no model path in what the servers tell clients,
and ``bgai play --match`` refused outside 1..64.  Everything on loopback, with small limits and a 1 s timeout.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

import httpx
import numpy as np
import pytest
from conftest import UvicornThread, free_port

from bgai.agents.registry import make_agent
from bgai.serve.bot import Bot
from bgai.serve.external import ExternalServer, ExternalSession
from bgai.serve.http import create_app
from bgai.serve.limits import LimitError, allowed_hosts, check_limits, host_name, http_server_config
from bgai.serve.public import public_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT, TIMEOUT = 3, 1.0


class Http(UvicornThread):
    """uvicorn on a free loopback port, configured as ``bgai serve http`` configures it."""

    def __init__(self, app, **limits) -> None:
        super().__init__(http_server_config(app, "127.0.0.1", free_port(), log_level="warning", **limits))


@pytest.fixture(scope="module")
def http():
    s = Http(create_app(Bot.from_spec("pubeval")), max_connections=LIMIT, timeout=TIMEOUT)
    yield s
    s.stop()


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def _read_all(sock: socket.socket, limit: float = 10.0) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed it (seconds from now)."""
    t0 = time.monotonic()
    sock.settimeout(limit)
    data = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        data += chunk
    return data, time.monotonic() - t0


def _get(port: int, path: str = "/api/info", host: str | None = "127.0.0.1", method: str = "GET") -> tuple[int, dict, str]:
    """One HTTP/1.1 request on a fresh connection: ``(status, headers, body)``."""
    with _connect(port) as s:
        head = f"{method} {path} HTTP/1.1\r\n" + (f"Host: {host}\r\n" if host is not None else "")
        s.sendall((head + "Connection: close\r\n\r\n").encode())
        data, _ = _read_all(s)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body.decode()


def _assert_closed_silently_after_timeout(silent: list[socket.socket], opened: float) -> None:
    """Each connection in ``silent`` (opened at ``opened``, monotonic) is closed by the server without an answer,
    about :data:`TIMEOUT` seconds after it was opened."""
    for s in silent:
        data, _ = _read_all(s, 10)
        s.close()
        assert data == b""
    took = time.monotonic() - opened
    assert TIMEOUT - 0.1 <= took <= TIMEOUT + 3, took


# ------------------------------------------------------------------------------------------------------- HTTP
def test_http_refuses_connections_beyond_the_limit_and_closes_silent_ones(http):
    silent = [_connect(http.port) for _ in range(LIMIT)]
    opened = time.monotonic()
    time.sleep(0.3)  # the server has accepted them
    for _ in range(5):  # N + 5 in all: the extra ones are refused at once
        extra = _connect(http.port)
        data, took = _read_all(extra, 5)
        extra.close()
        assert data.startswith(b"HTTP/1.1 503 ") and took < 2, data
        body = json.loads(data.partition(b"\r\n\r\n")[2])
        assert body == {"message": f"too many connections (at most {LIMIT}); try again later"}
    # the silent ones are closed by the server after the timeout, without an answer
    _assert_closed_silently_after_timeout(silent, opened)
    # and the server answers again
    status, _, body = _get(http.port)
    assert status == 200 and json.loads(body)["agent"] == "pubeval"


def test_http_cuts_a_slow_request_but_not_an_active_keepalive_connection(http):
    slow = _connect(http.port)
    t0 = time.monotonic()
    slow.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    closed_after = None
    for i in range(20):  # one header line every 0.25 s: never a complete request
        time.sleep(0.25)
        try:
            slow.sendall(f"X-Slow-{i}: y\r\n".encode())
        except OSError:
            closed_after = time.monotonic() - t0
            break
        slow.settimeout(0.01)
        try:
            if slow.recv(100) == b"":
                closed_after = time.monotonic() - t0
                break
        except (TimeoutError, BlockingIOError):
            pass
        except OSError:
            closed_after = time.monotonic() - t0
            break
    slow.close()
    assert closed_after is not None and closed_after <= TIMEOUT + 2, closed_after
    # a keep-alive connection asking every 0.6 s stays open well past the timeout
    with _connect(http.port) as s:
        f = s.makefile("rb")
        for _ in range(4):
            s.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status = f.readline()
            length = 0
            while (line := f.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert status.startswith(b"HTTP/1.1 200") and json.loads(f.read(length))["agent"] == "pubeval"
            time.sleep(0.6)
        f.close()


def test_http_host_header_must_name_this_server(http):
    for host in ("127.0.0.1", f"127.0.0.1:{http.port}", f"localhost:{http.port}", f"[::1]:{http.port}", "LOCALHOST."):
        assert _get(http.port, host=host)[0] == 200, host
    for host in ("evil.example", f"evil.example:{http.port}", "127.0.0.1.evil.example", "localhost.evil", ""):
        status, headers, body = _get(http.port, host=host)
        assert status == 400 and headers["content-type"] == "application/json", host
        msg = json.loads(body)["message"]
        assert ("is not served here" if host else "has no Host header") in msg and "--allow-host" in msg, msg
    # two Host headers (QA, session 6: only the last was checked): refused, whatever they name
    with _connect(http.port) as s:
        s.sendall(b"GET /api/info HTTP/1.1\r\nHost: evil.example\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data, _ = _read_all(s)
    assert data.startswith(b"HTTP/1.1 400") and b"2 Host headers" in data, data[:200]
    # an HTTP/1.0 request without a Host header cannot be checked: refused too
    with _connect(http.port) as s:
        s.sendall(b"GET /api/info HTTP/1.0\r\n\r\n")
        data, _ = _read_all(s)
    assert data.startswith(b"HTTP/1.1 400") and b"no Host header" in data
    # --allow-host NAME and '*'
    app = create_app(Bot.from_spec("pubeval"), hosts=allowed_hosts("127.0.0.1", ["bgai.example"]))
    other = Http(app, max_connections=LIMIT, timeout=TIMEOUT)
    try:
        assert _get(other.port, host="bgai.example:8080")[0] == 200
        assert _get(other.port, host="evil.example")[0] == 400
    finally:
        other.stop()
    assert allowed_hosts("0.0.0.0") == ("localhost", "127.0.0.1", "::1")
    assert allowed_hosts("192.168.1.5", ["*"]) == ("localhost", "127.0.0.1", "::1", "192.168.1.5", "*")
    assert host_name("[::1]:8080") == "::1" and host_name("Example.COM.:80") == "example.com"
    with pytest.raises(LimitError):
        allowed_hosts("127.0.0.1", [" "])


def test_http_errors_are_all_json_messages(http):
    status, headers, body = _get(http.port, "/nope")
    assert status == 404 and headers["content-type"] == "application/json"
    assert json.loads(body) == {"message": "not found: '/nope' (the API is under /api, its description at /docs)"}
    status, headers, body = _get(http.port, "/api/info", method="POST")
    assert status == 405 and json.loads(body) == {"message": "method 'POST' is not allowed on '/api/info'"}
    assert headers["allow"] == "GET"
    status, _, body = _get(http.port, "/static/nope.js")
    assert status == 404 and set(json.loads(body)) == {"message"}
    status, _, body = _get(http.port, "/" + "x" * 5000)
    assert status == 404 and len(json.loads(body)["message"]) < 200  # a huge path is not echoed back


def test_http_refuses_a_request_head_over_the_limit(http):
    from bgai.serve.limits import MAX_HEADER_BYTES

    status, _, body = _get(http.port, "/api/info?x=" + "y" * (MAX_HEADER_BYTES - 1000))  # under the limit: served
    assert status == 200 and json.loads(body)["agent"] == "pubeval"
    with _connect(http.port) as s:  # a request line over the limit
        s.sendall(f"GET /api/info?x={'y' * MAX_HEADER_BYTES} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data, _ = _read_all(s)
    assert data.startswith(b"HTTP/1.1 400 "), data[:100]
    with _connect(http.port) as s:  # headers over the limit, in many small ones
        head = "".join(f"X-H{i}: {'z' * 100}\r\n" for i in range(MAX_HEADER_BYTES // 100))
        s.sendall(f"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode())
        data, _ = _read_all(s)
    assert data.startswith(b"HTTP/1.1 400 "), data[:100]


def test_info_names_the_model_by_file_name_and_id_never_by_path(tmp_path):
    folder = tmp_path / "secret-folder"
    folder.mkdir()
    model = folder / "model.pt"
    model.write_bytes(b"not really a model, but a file with an id" * 100)
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    bot = Bot(make_agent("pubeval"), f"{model}:ply=1")
    server = Http(create_app(bot), max_connections=LIMIT, timeout=TIMEOUT)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            info = c.get("/api/info")
            plays = c.get("/api/plays", params={"position_id": "4HPwATDgc/ABMA", "dice": "31"})
    finally:
        server.stop()
    assert info.json()["agent"] == "model.pt:ply=1"
    assert info.json()["model"] == {"file": "model.pt", "id": "sha256:" + sha[:16]}
    assert plays.json()["agent"] == "model.pt:ply=1"
    for text in (info.text, plays.text):
        assert str(tmp_path) not in text and "secret-folder" not in text
    assert bot.spec == f"{model}:ply=1"  # the caller's bot is left alone
    # the external-player protocol's version answer too
    ext = ExternalServer(("127.0.0.1", 0), bot, max_connections=LIMIT, timeout=TIMEOUT)
    try:
        session = ExternalSession(ext.bot, np.random.default_rng(0))
        engine = session.handle("version").splitlines()[2]
    finally:
        ext.server_close()
    assert engine == "Engine: bgai model.pt:ply=1"
    assert public_spec("gnubg") == "gnubg" and public_spec("/a/b/c.onnx") == "c.onnx"


# --------------------------------------------------------------------------------------------------- external
def test_external_server_refuses_beyond_the_limit_and_closes_idle_connections():
    server = ExternalServer(("127.0.0.1", 0), Bot.from_spec("pubeval"), max_connections=LIMIT, timeout=TIMEOUT)
    server.start_in_thread()
    threads_before = threading.active_count()
    try:
        silent = [_connect(server.port) for _ in range(LIMIT)]
        opened = time.monotonic()
        time.sleep(0.3)
        assert threading.active_count() - threads_before == LIMIT  # one thread per connection served
        for _ in range(5):
            extra = _connect(server.port)
            data, took = _read_all(extra, 5)
            extra.close()
            assert data == f"Error: too many connections (at most {LIMIT})\n".encode() and took < 2
        assert threading.active_count() - threads_before == LIMIT  # no thread for a refused connection
        _assert_closed_silently_after_timeout(silent, opened)
        # an active client outlives the timeout; new clients are served again
        with _connect(server.port) as s:
            f = s.makefile("rb")
            for _ in range(4):
                s.sendall(b"help\n")
                assert f.readline() == b"\tNo help information available\n"
                time.sleep(0.6)
            f.close()
        for _ in range(50):
            if threading.active_count() <= threads_before:
                break
            time.sleep(0.05)
        assert threading.active_count() <= threads_before and server.slots.open == 0
    finally:
        server.shutdown()
        server.server_close()


def test_limits_are_checked():
    assert check_limits(5, 2) == (5, 2.0)
    assert check_limits(1, 0, allow_no_timeout=True) == (1, 0.0)
    for n, t in ((0, 1), (10_001, 1), (2, 0), (2, -1), (2, float("inf")), (2, float("nan")), ("3", 1), (True, 1)):
        with pytest.raises(LimitError):
            check_limits(n, t)
    with pytest.raises(LimitError, match="--max-connections"):
        ExternalServer(("127.0.0.1", 0), Bot.from_spec("pubeval"), max_connections=0)


# -------------------------------------------------------------------------------------------------------- CLI
def _bgai(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bgai", *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_cli_refuses_bad_limits_and_match_lengths():
    for args, message in (
        (["play", "--agent", "pubeval", "--match", "99999"], "--match N: a match is played to 1..64 points"),
        (["play", "--agent", "pubeval", "--match", "65"], "got 65"),
        (["play", "--agent", "pubeval", "--match", "0"], "got 0"),
        (["serve", "external", "--agent", "pubeval", "--max-connections", "0"], "--max-connections must be 1..10000"),
        (["serve", "http", "--agent", "pubeval", "--timeout", "0"], "--timeout must be a number of seconds > 0"),
        (["serve", "http", "--agent", "pubeval", "--allow-host", ""], "--allow-host needs a host name"),
    ):
        r = _bgai(*args)
        assert r.returncode == 2 and r.stderr.startswith("bgai: error: ") and message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = _bgai("play", "--agent", "pubeval", "--match", "64", "--seed", "1", stdin="quit\n")
    assert r.returncode == 0 and "a 64-point match" in r.stdout and "Match ID: ?" not in r.stdout


def test_cli_serve_passes_the_limits_on():
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgai", "serve", "external", "--host", "127.0.0.1", "--port", "0", "--agent", "pubeval",
         "--max-connections", "1", "--timeout", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        port = int(proc.stderr.readline().rsplit(":", 1)[1])
        first = _connect(port)
        time.sleep(0.3)
        second = _connect(port)
        assert _read_all(second, 5)[0] == b"Error: too many connections (at most 1)\n"
        second.close()
        data, took = _read_all(first, 10)
        first.close()
        assert data == b"" and took <= 4
    finally:
        proc.terminate()
        proc.wait(10)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgai", "serve", "http", "--port", str(port), "--agent", "pubeval",
         "--max-connections", "1", "--timeout", "1", "--allow-host", "bgai.example"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        proc.stderr.readline()
        for _ in range(200):
            try:
                status = _get(port, host="bgai.example")[0]
                break
            except OSError:
                time.sleep(0.1)
        assert status == 200 and _get(port, host="evil.example")[0] == 400
        first = _connect(port)
        time.sleep(0.3)
        assert _get(port)[0] == 503
        first.close()
    finally:
        proc.terminate()
        proc.wait(10)
