"""Connection limits, idle timeouts and the ``Host`` check of bgai's servers.

Both servers bound what a client can hold (``bgai serve http|external --max-connections N --timeout S``):

* **HTTP** (:func:`http_server_config`, uvicorn with the httptools protocol, or h11 without it): at most ``N``
  connections at a time; a connection beyond that is answered ``503`` with ``{"message": "too many connections
  ..."}`` and closed at once.
  A connection that has no request in progress -- a silent one, one sending its request too slowly, an idle
  keep-alive one -- is closed ``S`` seconds after it opened or after its last response (a request the bot is
  answering is never cut).  uvicorn's own limits are set too: ``limit_concurrency`` (``N + 1``: uvicorn counts the
  asking connection, so ``N`` connections are served), ``timeout_keep_alive`` (``S``) and a request head larger
  than :data:`MAX_HEADER_BYTES` is refused with 400 (h11's ``max_incomplete_event_size``; counted by
  :func:`limited_httptools_protocol` with httptools).
* **External-player protocol** (:class:`ConnectionSlots`, used by :class:`bgai.serve.external.ExternalServer`):
  at most ``N`` connections, one thread each; a connection beyond that gets the one line
  ``Error: too many connections (at most N)`` and is closed.  A connection that sends nothing for ``S`` seconds
  is closed (``S`` = 0: never; GNU Backgammon keeps one connection open for a whole session, between the bot's
  turns too, so the default is long: :data:`EXTERNAL_TIMEOUT`).

The HTTP server also refuses a request whose ``Host`` header is not one of its own names (:class:`HostCheck`:
DNS rebinding, a web page of another site reaching a server on localhost): answer ``400`` with
``{"message": "..."}``.  Allowed by default (:func:`allowed_hosts`): ``localhost``, ``127.0.0.1``, ``::1`` and
the host the server is bound to; more with ``--allow-host NAME`` (``*`` allows any).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterable

from bgai.errors import BgaiError

__all__ = [
    "HTTP_MAX_CONNECTIONS",
    "HTTP_TIMEOUT",
    "EXTERNAL_MAX_CONNECTIONS",
    "EXTERNAL_TIMEOUT",
    "MAX_HEADER_BYTES",
    "LOCAL_HOSTS",
    "LimitError",
    "check_limits",
    "ConnectionSlots",
    "too_many_line",
    "HostCheck",
    "allowed_hosts",
    "host_name",
    "limited_h11_protocol",
    "limited_httptools_protocol",
    "http_server_config",
]

#: Defaults of ``bgai serve http``: connections at a time, seconds a connection may stay without a request.
HTTP_MAX_CONNECTIONS = 64
HTTP_TIMEOUT = 10.0
#: Defaults of ``bgai serve external``: connections at a time, seconds without a command before closing.
EXTERNAL_MAX_CONNECTIONS = 16
EXTERNAL_TIMEOUT = 3600.0
#: Largest request head (request line and headers) the HTTP server reads, in bytes (h11's limit).
MAX_HEADER_BYTES = 16 * 1024
#: Host names every HTTP server answers to (besides the address it is bound to).
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
#: Upper bound of ``--max-connections`` (each external connection is a thread).
MAX_CONNECTIONS_LIMIT = 10_000


class LimitError(BgaiError):
    """A connection limit or timeout that cannot be used."""


def check_limits(max_connections: int, timeout: float, *, allow_no_timeout: bool = False) -> tuple[int, float]:
    """Validate ``--max-connections`` and ``--timeout``.

    Args:
        max_connections: 1 .. :data:`MAX_CONNECTIONS_LIMIT`.
        timeout: seconds, > 0 (or 0 = no timeout when ``allow_no_timeout``), finite.

    Returns:
        ``(max_connections, timeout)`` as int and float.

    Raises:
        LimitError: a value out of range, naming the option.
    """
    if isinstance(max_connections, bool) or not isinstance(max_connections, int):
        raise LimitError(f"--max-connections must be an integer, got {max_connections!r}")
    if not 1 <= max_connections <= MAX_CONNECTIONS_LIMIT:
        raise LimitError(f"--max-connections must be 1..{MAX_CONNECTIONS_LIMIT}, got {max_connections}")
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        raise LimitError(f"--timeout must be a number of seconds, got {timeout!r}") from None
    low_ok = t >= 0 if allow_no_timeout else t > 0
    if not math.isfinite(t) or not low_ok:
        need = ">= 0 (0: no timeout)" if allow_no_timeout else "> 0"
        raise LimitError(f"--timeout must be a number of seconds {need}, got {timeout!r}")
    return max_connections, t


# ------------------------------------------------------------------------------------------ external server
def too_many_line(max_connections: int) -> bytes:
    """The line sent to a connection refused by the external-player server."""
    return f"Error: too many connections (at most {max_connections})\n".encode()


class ConnectionSlots:
    """A counter of open connections with a fixed capacity (thread-safe).

    Args:
        capacity: connections allowed at a time (>= 1).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = int(capacity)
        self._sem = threading.BoundedSemaphore(self.capacity)
        self._lock = threading.Lock()
        self._open = 0

    def acquire(self) -> bool:
        """Take a slot; False (without waiting) when all are taken."""
        if not self._sem.acquire(blocking=False):
            return False
        with self._lock:
            self._open += 1
        return True

    def release(self) -> None:
        """Give back a slot taken by :meth:`acquire`."""
        with self._lock:
            self._open -= 1
        self._sem.release()

    @property
    def open(self) -> int:
        """Slots taken now."""
        with self._lock:
            return self._open


# --------------------------------------------------------------------------------------------- Host header
def host_name(host_header: str) -> str:
    """The host name of a ``Host`` header, lower-case, without port, brackets or a trailing dot
    (``'[::1]:8080'`` -> ``'::1'``, ``'LocalHost.:80'`` -> ``'localhost'``)."""
    h = host_header.strip().lower()
    if h.startswith("["):
        end = h.find("]")
        h = h[1:end] if end > 0 else h[1:]
    elif h.count(":") == 1:
        h = h.split(":", 1)[0]
    return h.rstrip(".")


def allowed_hosts(bound_host: str | None, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Host names an HTTP server bound to ``bound_host`` answers to: :data:`LOCAL_HOSTS`, the bound host (unless
    it is a wildcard address such as ``0.0.0.0``) and ``extra`` (``'*'``: any host).

    Raises:
        LimitError: an empty name in ``extra``.
    """
    names = list(LOCAL_HOSTS)
    if bound_host and bound_host not in ("0.0.0.0", "::", ""):
        names.append(host_name(bound_host))
    for e in extra:
        if not isinstance(e, str) or not e.strip():
            raise LimitError(f"--allow-host needs a host name (or '*'), got {e!r}")
        names.append("*" if e.strip() == "*" else host_name(e))
    return tuple(dict.fromkeys(names))


class HostCheck:
    """ASGI middleware answering ``400 {"message": ...}`` to a request whose ``Host`` header is not allowed.

    Args:
        app: the ASGI application.
        hosts: allowed host names (:func:`allowed_hosts`); ``'*'`` allows every host.
    """

    def __init__(self, app, hosts: Iterable[str] = LOCAL_HOSTS) -> None:
        self.app = app
        self.hosts = frozenset(host_name(h) if h != "*" else "*" for h in hosts)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket") or "*" in self.hosts:
            await self.app(scope, receive, send)
            return
        raws = [value for key, value in scope.get("headers") or () if key == b"host"]
        raw = raws[0] if len(raws) == 1 else None  # two Host headers: refused (RFC 9112 section 3.2), not the last one
        name = host_name(raw.decode("latin-1")) if raw else ""
        if name in self.hosts:
            await self.app(scope, receive, send)
            return
        shown = name[:40] + ("..." if len(name) > 40 else "")
        what = (f"the request has {len(raws)} Host headers" if len(raws) > 1
                else f"host {shown!r} is not served here" if raw else "the request has no Host header")
        body = json.dumps({"message": f"{what}: allowed hosts are {', '.join(sorted(self.hosts))} "
                                      "(bgai serve http --allow-host NAME)"}).encode()
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


# ------------------------------------------------------------------------------------------------ HTTP server
def _refusal(max_connections: int) -> bytes:
    body = json.dumps({"message": f"too many connections (at most {max_connections}); try again later"}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    return head + body


def _limited(base, max_connections: int, timeout: float):
    """``base`` (a uvicorn HTTP protocol class) with a connection cap and an idle timeout (module docstring)."""
    refusal = _refusal(max_connections)

    class Limited(base):
        _refused = False
        _idle = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            if len(self.connections) >= max_connections:
                self._refused = True
                transport.write(refusal)
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)
            if self._busy():
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._disarm()
            if not self._busy():
                self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            if self._refused:
                return
            super().connection_lost(exc)

        def _busy(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _arm(self) -> None:
            self._disarm()
            self._idle = self.loop.call_later(timeout, self._expired)

        def _disarm(self) -> None:
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None

        def _expired(self) -> None:
            self._idle = None
            if not self._busy() and not self.transport.is_closing():
                self.transport.close()

    Limited.__name__ = Limited.__qualname__ = "Limited" + base.__name__
    return Limited


def limited_h11_protocol(max_connections: int, timeout: float):
    """uvicorn's h11 protocol class (pure Python) with a connection cap and an idle timeout (module docstring).

    Args:
        max_connections: connections served at a time; the next one gets a 503 and is closed.
        timeout: seconds a connection may stay open with no request in progress.

    Returns:
        A subclass of ``uvicorn.protocols.http.h11_impl.H11Protocol`` for ``uvicorn.Config(http=...)``.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return _limited(H11Protocol, max_connections, timeout)


def limited_httptools_protocol(max_connections: int, timeout: float):
    """uvicorn's httptools protocol class (llhttp, in C; h11 parses in pure Python) with the same
    connection cap and idle timeout as :func:`limited_h11_protocol`, and a request head refused with 400 beyond
    :data:`MAX_HEADER_BYTES`.

    Returns:
        A subclass of ``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol``.

    Raises:
        ImportError: httptools is not installed (the ``serve`` extra installs it).
    """
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class LimitedHttpToolsProtocol(_limited(HttpToolsProtocol, max_connections, timeout)):
        _head = 0

        # httptools' parser (llhttp) sets no limit on the request head: count it here.  An exception raised in a
        # parser callback makes uvicorn answer 400 "Invalid HTTP request received." and close, as h11 does
        # beyond its max_incomplete_event_size.
        def on_message_begin(self) -> None:
            self._head = 0
            super().on_message_begin()

        def on_url(self, url: bytes) -> None:
            self._grow(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._grow(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _grow(self, n: int) -> None:
            self._head += n
            if self._head > MAX_HEADER_BYTES:
                raise ValueError(f"request head over {MAX_HEADER_BYTES} bytes")

    return LimitedHttpToolsProtocol


def http_server_config(
    app, host: str, port: int, *, max_connections: int = HTTP_MAX_CONNECTIONS, timeout: float = HTTP_TIMEOUT,
    log_level: str = "info", access_log: bool = False,
):
    """A ``uvicorn.Config`` serving ``app`` with bgai's limits (module docstring).

    The fast parts of uvicorn when installed (the ``serve`` extra): the httptools (llhttp) protocol
    (:func:`limited_httptools_protocol`) and the uvloop event loop; else h11 (:func:`limited_h11_protocol`) and
    asyncio, with the same limits and answers.  No access log by default (``access_log``): formatting a log line
    per request costs about as much CPU as parsing the request.

    Raises:
        LimitError: bad limits.
    """
    import uvicorn

    n, t = check_limits(max_connections, timeout)
    try:
        protocol = limited_httptools_protocol(n, t)
    except ImportError:
        protocol = limited_h11_protocol(n, t)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=access_log,
        http=protocol,
        loop="auto",  # uvloop when installed, else asyncio
        limit_concurrency=n + 1,
        timeout_keep_alive=t,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
