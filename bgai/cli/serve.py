"""``bgai serve external|http|ubgi``: serve the bot to GNU Backgammon (external-player protocol), over HTTP/JSON, or
to a Universal Backgammon Interface user interface on stdin/stdout.

``bgai serve external --port 4242 [--agent SPEC]`` listens for GNU Backgammon (``set player 1 external
localhost:4242``) or any client of its external-player protocol; ``bgai serve http --port 8080 [--agent SPEC]``
serves the JSON API (OpenAPI at ``/docs``) and the web page to play against the bot (``/``); ``bgai serve ubgi
[--agent SPEC]`` is a UBGI engine on stdin/stdout (:mod:`bgai.serve.ubgi`).

Both take ``--max-connections N`` (connections at a time; more are refused at once) and ``--timeout S`` (a
connection without a request in progress, or silent, is closed after S seconds); ``serve http`` also
``--allow-host NAME`` (Host headers answered besides localhost, 127.0.0.1, ::1 and ``--host``).  See
:mod:`bgai.serve.limits`.
"""

from __future__ import annotations

import argparse
import sys

from bgai.cli.args import seed_type
from bgai.serve.limits import (
    EXTERNAL_MAX_CONNECTIONS,
    EXTERNAL_TIMEOUT,
    HTTP_MAX_CONNECTIONS,
    HTTP_TIMEOUT,
    allowed_hosts,
    check_limits,
)

DEFAULT_AGENT = "default"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``serve`` subcommand to bgai's argument parser."""
    p = subparsers.add_parser(
        "serve",
        help="serve the bot: GNU Backgammon external player, HTTP/JSON API and web page, or UBGI engine",
        description="Serve bgai's bot to other programs.",
    )
    sub = p.add_subparsers(dest="protocol", metavar="PROTOCOL")
    sub.required = True
    ext = sub.add_parser(
        "external",
        help="GNU Backgammon's external-player protocol (TCP)",
        description=(
            "Answer GNU Backgammon's external-player protocol: FIBS board lines in, moves / cube answers out. "
            "In GNU Backgammon: 'set player 1 external localhost:PORT', then play."
        ),
        epilog="example:  bgai serve external --port 4242 --agent pubeval",
    )
    ext.add_argument("--host", default="localhost", help="address to listen on (default: localhost)")
    ext.add_argument("--port", type=int, default=4242, help="TCP port (default: 4242; 0 = any free port)")
    ext.add_argument(
        "--scores",
        type=str.lower,
        choices=("gnubg", "fibs"),
        default="gnubg",
        help="how board lines give the match score: 'gnubg' (default; as GNU Backgammon's frontend writes them) or "
        "'fibs' (the FIBS server's convention, for FIBS bots that forward its board lines)",
    )
    _common(ext)
    _limits(ext, EXTERNAL_MAX_CONNECTIONS, EXTERNAL_TIMEOUT,
            "seconds a connection may send nothing before it is closed; 0 = never (GNU Backgammon keeps its "
            "connection open for the whole session, between the bot's turns too)")
    ext.set_defaults(func=run_external)

    http = sub.add_parser(
        "http",
        help="HTTP/JSON API (FastAPI) and a web page to play against the bot",
        description=(
            "Serve the JSON API (best play and ranked plays, evaluation, cube decisions; OpenAPI at /docs) and a "
            "web page at / to play a money game against the bot."
        ),
        epilog="example:  bgai serve http --port 8080   then open http://127.0.0.1:8080/",
    )
    http.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    http.add_argument("--port", type=int, default=8080, help="TCP port (default: 8080)")
    _common(http)
    _limits(http, HTTP_MAX_CONNECTIONS, HTTP_TIMEOUT,
            "seconds a connection may stay open without a request in progress (silent, sending its request too "
            "slowly, or idle between requests)")
    http.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host header is NAME (repeatable; '*' = any host).  By default only "
        "localhost, 127.0.0.1, ::1 and --host are answered (400 otherwise: DNS rebinding); with --host 0.0.0.0 "
        "name the addresses or names clients use",
    )
    http.set_defaults(func=run_http)

    ubgi = sub.add_parser(
        "ubgi",
        help="Universal Backgammon Interface engine on stdin/stdout (for UBGI user interfaces)",
        description=(
            "Run bgai as a UBGI engine (Universal Backgammon Interface, draft 0.01): a user interface writes "
            "'ubgi', then FIBS board lines or XGIDs, one a line, on stdin; bgai answers the best action on stdout "
            "(a play such as '24/18 18/13', double/roll, take/drop, a blank line when nothing is legal), 'sorry' "
            "for what it cannot answer.  Also 'analyse POSITION', 'rollout POSITION [trials N] [seed S]', 'stop', "
            "'quit'.  Errors go to stderr.  The agent is built at 'ubgi'."
        ),
        epilog="example:  printf 'ubgi\\nXGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10\\nquit\\n' | "
        "bgai serve ubgi --agent gnubg",
    )
    _common(ubgi)
    ubgi.set_defaults(func=run_ubgi)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        metavar="SPEC",
        help="agent to serve: 'default' (the shipped model: $BGAI_MODEL, else the file checkpoints/models.json "
        "names; an error if there is none), random, pubeval, racer, blocker, gnubg, a checkpoint path such as model.pt[:ply=1], or "
        "an exported model.onnx / model.npz",
    )
    p.add_argument("--seed", type=seed_type, default=0, help="seed for agents that use randomness, 0..2**63-1 (default 0)")


def _limits(p: argparse.ArgumentParser, max_connections: int, timeout: float, timeout_help: str) -> None:
    p.add_argument(
        "--max-connections",
        type=int,
        default=max_connections,
        metavar="N",
        help=f"connections served at a time; more are refused at once (default {max_connections})",
    )
    p.add_argument("--timeout", type=float, default=timeout, metavar="S",
                   help=f"{timeout_help} (default {timeout:g})")


def _check_port(port: int, host: str | None = None) -> None:
    """Refuse a port outside 0..65535 and, when ``host`` is given, a port that cannot be bound (in use)."""
    import socket

    from bgai.errors import BgaiError

    if not 0 <= port <= 65535:
        raise BgaiError(f"--port must be 0..65535, got {port}")
    if host is not None:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
            except OSError as exc:
                raise BgaiError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def make_bot(spec: str):
    """The :class:`bgai.serve.bot.Bot` for an ``--agent`` value (``'default'`` resolved first, so the banner and
    ``version`` answers name the model file actually served).

    Raises:
        AgentSpecError: an unknown agent, or ``default`` with no shipped model and no ``$BGAI_MODEL``.
        CheckpointError: an unreadable model file.
    """
    from bgai.agents.registry import resolve_spec
    from bgai.serve.bot import Bot

    return Bot.from_spec(resolve_spec(spec))


def run_external(args: argparse.Namespace) -> int:
    """Run ``bgai serve external``."""
    from bgai.errors import BgaiError
    from bgai.serve.external import serve_external

    check_limits(args.max_connections, args.timeout, allow_no_timeout=True)  # bad options before the port
    _check_port(args.port)
    bot = make_bot(args.agent)

    def ready(server) -> None:
        print(
            f"bgai external player ({bot.spec}) listening on {args.host}:{server.port}\n"
            f"in GNU Backgammon: set player 1 external {args.host}:{server.port}",
            file=sys.stderr,
            flush=True,
        )

    try:
        serve_external(
            bot, args.host, args.port, seed=args.seed, scores=args.scores, ready=ready,
            max_connections=args.max_connections, timeout=args.timeout,
        )
    except OSError as exc:
        raise BgaiError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0


def run_http(args: argparse.Namespace) -> int:
    """Run ``bgai serve http``."""
    from bgai.errors import BgaiError
    from bgai.serve.http import serve_http

    check_limits(args.max_connections, args.timeout)  # bad options before the port (which may be taken)
    _check_port(args.port, args.host)
    allowed_hosts(args.host, args.allow_host)  # a bad --allow-host fails before the model is loaded
    bot = make_bot(args.agent)
    where = (f"http://{args.host}:{args.port}/" if args.port else
             f"a free port of {args.host} (the next line names it)")
    print(f"bgai HTTP API ({bot.spec}) on {where}  (API docs: /docs)", file=sys.stderr, flush=True)
    try:
        serve_http(
            bot, args.host, args.port, seed=args.seed, max_connections=args.max_connections, timeout=args.timeout,
            allow_hosts=args.allow_host,
        )
    except OSError as exc:
        raise BgaiError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0


def run_ubgi(args: argparse.Namespace) -> int:
    """Run ``bgai serve ubgi``: check the agent spec now (one-line error, exit 2), build the agent at ``ubgi``."""
    from bgai.agents.registry import resolve_spec
    from bgai.serve.ubgi import check_agent_spec, serve_ubgi

    spec = check_agent_spec(resolve_spec(args.agent))
    return serve_ubgi(spec, seed=args.seed)
