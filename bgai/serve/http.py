"""bgai's HTTP/JSON API (FastAPI; OpenAPI description at ``/openapi.json``, interactive docs at ``/docs``) and
the web page to play a money game against the bot (``/``).

Requests are read by bgai's one request parser (:func:`bgai.formats.request.read_request_params`), so they
accept what ``bgai hint`` accepts and get the same error messages.  Positions are given in any of three forms
(exactly one per request):

* ``position_id=4HPwATDgc/ABMA`` -- a GNU Backgammon Position ID, side on roll's view (also
  ``POSITION_ID:MATCH_ID``, GNU Backgammon's combined form, or any other text the request parser reads);
* ``xgid=XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10`` -- an XGID (also gives dice, cube and score);
* ``p0`` .. ``p25`` -- wildbg's board parameters (the player to act moves 24 -> 1, positive = its checkers,
  ``p25`` its bar, ``p0`` the opponent's bar; see :mod:`bgai.formats.wildbg`).

Dice: ``dice=31`` (or ``3-1``, ``3 1``, ``3,1``) or ``die1=3&die2=1``.  Cube and score: ``match_id=...`` (GNU Backgammon Match
ID; its player on roll is the side of the position), or taken from the XGID, or for money play
``cube_value=2&cube_owner=on_roll|opponent|centred[&jacoby=false]``; default a centred cube in money play with
the Jacoby rule.

Endpoints (all ``GET``; every answer is JSON):

=================  ============================================================================================
``/api/info``      server, agent, whether it has probabilities, cube policy
``/api/plays``     all legal plays ranked best first (``limit`` to cut the list), with the best play separately;
                   with a Match ID or XGID (agents with probabilities) by cubeful equity or match-winning chance
``/api/evaluate``  cubeless probabilities, cubeless and cubeful equity of the side on roll before it rolls
``/api/cube``      the cube decision (double / take) for the side on roll
``/api/resign``    accept or reject a resignation (``points=1|2|3``; ``resigns=opponent`` (default) or ``on_roll``)
``/move``          wildbg-compatible: ``{"moves": [{"play": [{"from":..,"to":..}], "probabilities": {..}}]}``
``/eval``          wildbg-compatible: ``{"cube": {"double":.., "accept":..}, "probabilities": {..}}``
=================  ============================================================================================

Errors (the server keeps running):

* a malformed request: status 400 with ``{"message": "<what is wrong>"}``, for every endpoint of the ``/api``
  family and for every kind of mistake -- bad values (``"Position ID '...': wrong length 5 ..."``), parameters
  of the wrong type or missing (``"limit: expected an integer, got 'abc'"``; FastAPI's 422 ``{"detail":
  [...]}`` is never sent), a parameter given more than once (``p1=2&p1=-2``), a finished game (the side to act
  or its opponent has no checker left: ``"game over: ..."``), dice with ``/api/cube`` (cube decisions are made
  before rolling, so a Match ID or XGID carrying rolled dice, or ``dice``/``die1``/``die2``, is refused; so are
  dice parameters with ``/api/evaluate``), a parameter of another ``/api`` endpoint (``limit`` with
  ``/api/evaluate``: ``"/api/evaluate does not take the parameter 'limit' ..."``; a name no endpoint takes is
  ignored), an integer not written as plain decimal digits (``limit=1_0``, ``die1=%203``: ``"limit: expected an
  integer, got '1_0'"``).
  Quoted input is cut to :data:`MAX_QUOTE` characters and a message to :data:`MAX_MESSAGE`, so a huge
  parameter is never echoed back (:func:`bgai.errors.shorten_message`).
* the wildbg-compatible ``/move`` and ``/eval`` keep wildbg's behaviour (PROTOCOLS.md section 4): bad boards
  and dice are 400 ``{"message": ...}`` as above, but a query string that does not deserialise -- a missing or
  non-integer ``die1``/``die2``, a repeated parameter -- is 400 with a **plain-text** body as wildbg's axum
  server writes it: ``Failed to deserialize query string: missing field `die1```,
  ``Failed to deserialize query string: duplicate field `p1```.
* an agent that cannot answer (no probabilities, :class:`bgai.errors.AgentCapabilityError`): 409
  ``{"message": ...}``; an unexpected failure: 500
  ``{"message": "internal error: <exception type>"}`` (details only in the server log).
* an unknown path (404), a method other than GET (405) and a request whose ``Host`` header is not one of the
  server's names (400, DNS rebinding; :class:`bgai.serve.limits.HostCheck`) get ``{"message": ...}`` too.

Speed: the handlers are ``async`` and answer on the event loop (no hand-off to a worker thread and back per
request; the bot serialises agent calls anyway, so one request computes at a time either way), and the server
runs torch and BLAS single-threaded (:func:`serve_http`).  ``scripts/bench_http.py`` measures the latency of
``/api/plays`` and ``/api/evaluate`` with one client beside the in-process time of the same call.

``/api/info`` names the served model by its file name and id (SHA-256 prefix), never by its path
(:mod:`bgai.serve.public`).  Connection limits and idle timeouts: :mod:`bgai.serve.limits`
(``bgai serve http --max-connections N --timeout S --allow-host NAME``).
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import re
from typing import Annotated
from urllib.parse import parse_qsl

import numpy as np
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, BeforeValidator, ValidationError
from pydantic_core import PydanticCustomError, to_json
from starlette.exceptions import HTTPException as StarletteHTTPException

from bgai import __version__
from bgai.analysis.api import CubeDecision, PositionRequest, RankedPlay
from bgai.core.board import as_batch, flip, result_kind
from bgai.core.cube_state import CubeState
from bgai.core.dice import Dice
from bgai.core.equity import OUTPUTS, swap_perspective
from bgai.core.notation import NO_LEGAL_PLAY
from bgai.core.position_id import encode_position_ids
from bgai.errors import (
    MAX_MESSAGE,
    MAX_QUOTE,
    AgentCapabilityError,
    BgaiError,
    InvalidDiceError,
    quote_input,
    shorten_message,
)
from bgai.formats.request import check_game_not_over, read_request_params
from bgai.formats.wildbg import board_from_wildbg
from bgai.game.cube import CONSERVATIVE_POLICY, JANOWSKI_POLICY
from bgai.serve.bot import Bot
from bgai.serve.limits import (
    HTTP_MAX_CONNECTIONS,
    HTTP_TIMEOUT,
    LOCAL_HOSTS,
    HostCheck,
    allowed_hosts,
    http_server_config,
)
from bgai.serve.public import model_info, public_bot
from bgai.util.integers import is_decimal
from bgai.util.threads import limit_threads

__all__ = ["create_app", "serve_http", "STATIC_DIR", "MAX_QUOTE", "MAX_MESSAGE"]

log = logging.getLogger(__name__)

#: Folder of the web page's files.
STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")

_WILDBG_KEYS = tuple(f"p{i}" for i in range(26))
#: Paths answering like wildbg's server (plain-text 400 for a query string that does not deserialise).
_WILDBG_PATHS = ("/move", "/eval")


class RequestError(BgaiError):
    """A request that cannot be answered as asked (status 400)."""


async def _check_repeats(request: Request) -> None:
    """Refuse a query parameter given more than once (``p1=2&p1=-2``): which one was meant cannot be known."""
    params = request.query_params
    for key in params:
        n = len(params.getlist(key))
        if n > 1:
            raise _RepeatedParameter(key, n)


class _RepeatedParameter(RequestError):
    def __init__(self, key: str, count: int) -> None:
        super().__init__(f"parameter {quote_input(key)} is given {count} times; give each parameter once")
        self.key = key


#: Descriptions of pydantic's validation error types, for ``"<param>: <what is wrong>"`` messages.
_VALIDATION_WORDS = {
    "missing": "missing (a required parameter)",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "int_parsing_size": "expected an integer (this one is far too long)",
    "bool_parsing": "expected true or false",
    "float_parsing": "expected a number",
    "string_too_long": "too long",
}


def _validation_message(exc: RequestValidationError) -> str:
    """``'<param>: <what is wrong>[, got '<input>']'`` for each error of a FastAPI validation failure."""
    parts = []
    for err in exc.errors():
        loc = [str(x) for x in err.get("loc", ()) if x not in ("query", "path", "body", "header")]
        name = ".".join(loc) or "request"
        kind = err.get("type", "")
        what = _VALIDATION_WORDS.get(kind) or str(err.get("msg", "invalid")).rstrip(".")
        what = what[:1].lower() + what[1:]
        if kind != "missing" and "input" in err:
            what += f", got {quote_input(err['input'])}"
        parts.append(f"{name}: {what}")
    return "; ".join(parts) or "invalid request"


def _wildbg_validation_text(exc: RequestValidationError) -> str:
    """wildbg's (axum's) plain-text body for a query string that does not deserialise."""
    err = (exc.errors() or [{}])[0]
    loc = [str(x) for x in err.get("loc", ()) if x not in ("query", "path", "body", "header")]
    name = loc[-1] if loc else "query"
    if err.get("type") == "missing":
        return f"Failed to deserialize query string: missing field `{name}`"
    return f"Failed to deserialize query string: {name}: invalid digit found in string"


def _wildbg_openapi() -> dict:
    """OpenAPI descriptions of the p0 .. p25 board parameters (read from the raw query string)."""
    params = []
    for i in range(26):
        what = {0: "the opponent's bar (<= 0)", 25: "the bar of the player to act (>= 0)"}.get(
            i, f"point {i} of the player to act (positive: its checkers, negative: the opponent's)"
        )
        params.append(
            {"name": f"p{i}", "in": "query", "required": False, "schema": {"type": "integer", "minimum": -15,
             "maximum": 15}, "description": f"wildbg board: {what}"}
        )
    return {"parameters": params}


def _query_model(model: type[BaseModel]):
    """A dependency reading ``model`` (a :class:`PositionParams` subclass) from the query string.

    Validates with pydantic directly: FastAPI's own reading of a query-parameter model re-inspects every field's
    annotation on each request (about a third of a millisecond); the messages are the same (pydantic's errors
    become a :class:`RequestValidationError` with FastAPI's ``("query", name)`` locations).  The parameters are
    described in OpenAPI by :func:`_openapi`.
    """
    names = tuple(model.model_fields)

    async def read(request: Request) -> BaseModel:
        params = request.query_params
        try:
            return model.model_validate({k: params[k] for k in names if k in params})
        except ValidationError as exc:
            raise RequestValidationError([{**e, "loc": ("query", *e["loc"])} for e in exc.errors()]) from None

    return read


def _openapi(model: type[BaseModel] | None = None) -> dict:
    """OpenAPI ``parameters`` of an endpoint: ``model``'s fields (query parameters) and the wildbg board's."""
    params = []
    if model is not None:
        schema = model.model_json_schema()
        required = set(schema.get("required", ()))
        for name, prop in schema["properties"].items():
            params.append({"name": name, "in": "query", "required": name in required, "schema": prop})
    return {"parameters": params + _wildbg_openapi()["parameters"]}


def _num(x: float | None) -> float | None:
    """A JSON number: None for a missing value or NaN (JSON has no NaN)."""
    return None if x is None or x != x else float(x)


def _json_response(content: dict) -> Response:
    """``content`` as a 200 JSON answer, serialised by pydantic-core's ``to_json`` -- the serialiser FastAPI uses
    for an endpoint's returned ``dict`` (the same bytes) -- without FastAPI's validation of the returned value
    against the endpoint's return annotation (a walk over every play's fields)."""
    return Response(to_json(content), media_type="application/json")


def _steps_json(steps: tuple) -> list[dict]:
    """A play's steps as the answer lists them: ``[{"from": 8, "to": 5, "hit": false}, ...]`` (remembered for a
    steps tuple: the same few plays recur; the lists are only read, by the JSON serialiser)."""
    try:
        return _steps_json_recurring(steps)
    except TypeError:  # unhashable steps (lists)
        return [{"from": int(f), "to": int(t), "hit": bool(h)} for f, t, h in steps]


@functools.lru_cache(maxsize=8192)
def _steps_json_recurring(steps: tuple) -> list[dict]:
    return [{"from": int(f), "to": int(t), "hit": bool(h)} for f, t, h in steps]


def _plays_json(ranked: list[RankedPlay], board: np.ndarray) -> tuple[str, list[dict]]:
    """The ranked plays, rank 1 first, each: notation, steps, the agent's value (``score`` in the unit
    ``score_kind`` names, null for an agent without evaluation), equities and probabilities, the resulting
    position (mover's view), with the Position ID of ``board`` (the ``(2, 25)`` position before the play).  The
    Position IDs (of ``board`` and of the afterstates), game-over flags and results are computed for all at
    once (one numpy pass instead of one per play)."""
    after = np.empty((len(ranked) + 1, 2, 25), dtype=np.int8)  # (filled row by row: cheaper than np.stack)
    after[0] = board
    for i, rp in enumerate(ranked, 1):
        after[i] = rp.play.afterstate
    board_id, *ids = encode_position_ids(after, validate=False)  # (a read request's board and its afterstates)
    if not ranked:
        return board_id, []
    after = after[1:]
    boards = after.tolist()
    over = [not any(me) or not any(opp) for me, opp in boards]  # a side has borne off all (counts are >= 0)
    probs = [None if (p := rp.probabilities) is None
             else dict(zip(OUTPUTS, (p if type(p) is np.ndarray and p.dtype == np.float64 else
                                     np.asarray(p, dtype=np.float64)).tolist())) for rp in ranked]
    results = {}
    if any(over):
        winner, pts = result_kind(after[np.array(over)])
        results = dict(zip(np.flatnonzero(over).tolist(), zip(winner.tolist(), pts.tolist())))
    items = []
    for i, rp in enumerate(ranked):
        p = rp.play
        out = {
            "rank": i + 1,
            "play": p.notation,
            "steps": _steps_json(p.steps),
            "score": _num(rp.score),
            "score_kind": rp.score_kind if rp.score_kind != "none" else None,
            "equity": _num(rp.equity),
            "probabilities": probs[i],
            "position_id": ids[i],
            "board": boards[i],
            "game_over": i in results,
        }
        if rp.cubeful_equity is not None:
            out["cubeless_equity"] = rp.cubeless_equity
        if rp.mwc is not None:
            out["mwc"] = rp.mwc
        if i in results:
            winner, pts = results[i]
            out["result"] = {"winner": "mover" if winner == 0 else "opponent", "points": pts}
        items.append(out)
    return board_id, items


def _cube_json(d: CubeDecision) -> dict:
    """A cube decision as ``/api/cube`` answers it: ``double``, ``take``, ``policy``, ``action``,
    ``available`` (and ``reason`` when not), the cubeful equities (``no_double``, and ``double_take`` /
    ``double_pass`` when the side on roll may double) and in match play the matching ``mwc_*`` figures."""
    out = {"double": d.double, "take": d.take, "policy": d.policy, "action": d.action, "available": d.available}
    if d.reason is not None:
        out["reason"] = d.reason
    if d.no_double is not None:
        out["no_double"] = d.no_double
        if d.available:
            out.update(double_take=d.double_take, double_pass=d.double_pass)
    if d.mwc is not None:
        out["mwc_no_double"] = d.mwc[0]
        if d.available:
            out.update(mwc_double_take=d.mwc[1], mwc_double_pass=d.mwc[2])
    return out


def _state_json(req: PositionRequest) -> dict:
    st = req.cube_state
    return {
        "position_id": req.position_id,
        "cube_value": st.cube_value,
        "cube_owner": {-1: "centred", 0: "on roll", 1: "opponent"}[st.owner],
        "match_length": st.match_length,
        "score": list(st.score),
        "crawford": st.crawford,
    }


def _decimal(value: object) -> object:
    """An integer query parameter as written: ASCII decimal digits with an optional sign, nothing else (pydantic's
    lax mode would also read ``1_0`` as 10, `` 10 ``, ``10.0``); the number itself is pydantic's to check.

    Raises:
        PydanticCustomError: ``int_parsing`` (``"<param>: expected an integer, got '1_0'"``).
    """
    if isinstance(value, str) and not is_decimal(value):
        raise PydanticCustomError("int_parsing", "Input should be a valid integer")
    return value


#: An integer query parameter written with plain decimal digits (:func:`_decimal`).
QueryInt = Annotated[int, BeforeValidator(_decimal)]


class PositionParams(BaseModel):
    """Query parameters naming a position (and, by Match ID, the cube and score); read by
    :func:`bgai.formats.request.read_request_params`."""

    position_id: str | None = None
    xgid: str | None = None
    match_id: str | None = None


class PlayParams(PositionParams):
    """Query parameters of ``/api/plays``: a position, a roll, and how many plays to list."""

    dice: str | None = None
    die1: QueryInt | None = None
    die2: QueryInt | None = None
    limit: QueryInt | None = None


class CubeStateParams(PositionParams):
    """Query parameters of ``/api/evaluate`` and ``/api/cube``: a position and a money cube state."""

    cube_value: QueryInt | None = None
    cube_owner: str | None = None
    jacoby: bool | None = None


class ResignParams(CubeStateParams):
    """Query parameters of ``/api/resign``: a position, a cube state, the offer and who makes it."""

    points: QueryInt
    resigns: str | None = None


#: The parameters of one ``/api`` endpoint that another one takes, per endpoint: refused (400) rather than
#: silently ignored (``limit`` with ``/api/evaluate``).  A name no endpoint takes is ignored.
_DICE_KEYS = ("dice", "die1", "die2")
_NOT_HERE = {
    "/api/plays": ("points", "resigns"),
    "/api/evaluate": ("limit", "points", "resigns") + _DICE_KEYS,
    "/api/cube": ("limit", "points", "resigns"),  # (dice: refused by the endpoint, "before rolling")
    "/api/resign": ("limit",),
}


def _refuse_unused(params, path: str) -> None:
    """Refuse a parameter of another ``/api`` endpoint given to ``path`` (:data:`_NOT_HERE`).

    Raises:
        RequestError: ``"/api/evaluate does not take the parameter 'limit' (...): leave it out"``.
    """
    for key in _NOT_HERE[path]:
        if key in params:
            why = "it values the position before the roll" if key in _DICE_KEYS else "it is another endpoint's"
            raise RequestError(f"{path} does not take the parameter {key!r} ({why}): leave it out")


_PLAY_FIELDS = tuple(PlayParams.model_fields)
_JSON_TYPE = (b"content-type", b"application/json")
#: The parameters of ``/api/plays`` that are not text (validated by pydantic).
_INT_PLAY_FIELDS = frozenset(k for k, f in PlayParams.model_fields.items() if f.annotation != (str | None))


class _Refused(Exception):
    """A request the lean path leaves to FastAPI."""


class _App(FastAPI):
    """bgai's FastAPI application with a lean path for the hottest endpoint: ``GET`` requests of the paths in
    :attr:`lean` go straight to their ASGI handler (behind the host check), skipping FastAPI's middleware stack,
    routing and dependency resolution (about a third of a millisecond per request); everything else, and every
    request the handler does not answer itself, is FastAPI's."""

    lean: dict = {}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            handler = self.lean.get(scope["path"])
            if handler is not None:
                await handler(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(bot: Bot, *, seed: int = 0, hosts=LOCAL_HOSTS):
    """The FastAPI application serving ``bot`` (see the module docstring for the endpoints).

    Args:
        bot: the bot to serve (thread-safe).  Answers name its agent by :func:`bgai.serve.public.public_spec`
            (a model's file name, never its directories).
        seed: seed of the random generator used by agents that need one.
        hosts: host names the app answers to (``Host`` header; :class:`bgai.serve.limits.HostCheck`, ``'*'``:
            any); default ``localhost``, ``127.0.0.1``, ``::1``.
    """
    import threading

    model = model_info(bot.spec)
    bot = public_bot(bot)

    app = _App(
        title="bgai",
        version=__version__,
        description=(
            "bgai backgammon bot: best play and ranked plays, evaluation and cube decisions. Positions as GNU "
            "Backgammon Position ID (`position_id`, also `POSITION_ID:MATCH_ID`), XGID (`xgid`) or wildbg board "
            "(`p0`..`p25`); dice as `dice=31` or `die1`/`die2`; cube and score as `match_id`."
        ),
        dependencies=[Depends(_check_repeats)],
    )
    app.add_middleware(HostCheck, hosts=tuple(hosts))
    rng_lock = threading.Lock()
    rng = np.random.default_rng(seed)

    def next_rng() -> np.random.Generator:
        with rng_lock:
            return np.random.default_rng(rng.integers(2**63))

    def rng_if_needed() -> np.random.Generator | None:
        """A generator for an agent that chooses at random (:meth:`Bot.rank_plays` uses one only for an agent
        without play scores); None otherwise (making one costs about 40 microseconds)."""
        return None if bot.capabilities.play_scores else next_rng()

    def answer_plays(params, limit: int | None) -> bytes:
        """The ``/api/plays`` answer (JSON) to query parameters ``params`` (``limit`` read from them)."""
        _refuse_unused(params, "/api/plays")
        req = read_request_params(params)
        if req.dice is None:
            raise RequestError("no dice given: use dice=31 or die1=3&die2=1 (or an XGID with dice)")
        if limit is not None and limit < 1:
            raise RequestError(f"limit must be >= 1, got {limit}")
        ranked = bot.rank_plays(req.board, req.dice, rng_if_needed(), req.cube_state if req.cube_given else None)
        position_id, items = _plays_json(ranked[:limit] if limit is not None else ranked, req.board)
        out = {
            "position_id": position_id,
            "dice": list(req.dice),
            "agent": bot.spec,
            "best": items[0] if items else None,
            "count": len(ranked),
            "plays": items,
        }
        if not ranked:
            out["note"] = NO_LEGAL_PLAY
        return to_json(out)

    async def lean_plays(scope, receive, send) -> None:
        """``GET /api/plays`` without FastAPI's routing, dependencies and middleware layers (the same answer);
        anything but a well-formed request of an agent that scores plays goes through FastAPI, which answers
        errors (repeated parameters, bad values, failures) as every other endpoint does."""
        # the query as starlette's QueryParams reads it, in a plain dict (whose lookups are several times cheaper)
        pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        params = dict(pairs)
        try:
            if len(params) != len(pairs):  # a parameter given more than once
                raise _Refused
            if _INT_PLAY_FIELDS.isdisjoint(params.keys()):  # text parameters only: nothing for pydantic to check
                limit = None
            else:
                limit = PlayParams.model_validate({k: params[k] for k in _PLAY_FIELDS if k in params}).limit
            body = answer_plays(params, limit)
        except Exception:  # noqa: BLE001 - answered again by FastAPI, with its error handling
            await FastAPI.__call__(app, scope, receive, send)
            return
        # the messages starlette's Response sends for it (the same head and body), without making one
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode()), _JSON_TYPE]})
        await send({"type": "http.response.body", "body": body})

    if bot.capabilities.play_scores:  # (others draw a random play: one draw per request, by FastAPI's route)
        app.lean = {"/api/plays": HostCheck(lean_plays, hosts=tuple(hosts))}

    @app.exception_handler(BgaiError)
    async def _bad_request(request: Request, exc: BgaiError):
        if isinstance(exc, _RepeatedParameter) and request.url.path in _WILDBG_PATHS:
            return PlainTextResponse(f"Failed to deserialize query string: duplicate field `{exc.key[:MAX_QUOTE]}`", 400)
        status = 409 if isinstance(exc, AgentCapabilityError) else 400
        return JSONResponse(status_code=status, content={"message": shorten_message(str(exc))})

    @app.exception_handler(RequestValidationError)
    async def _invalid_parameters(request: Request, exc: RequestValidationError):
        if request.url.path in _WILDBG_PATHS:
            return PlainTextResponse(_wildbg_validation_text(exc), 400)
        return JSONResponse(status_code=400, content={"message": shorten_message(_validation_message(exc))})

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        path = quote_input(request.url.path)
        if exc.status_code == 404:
            message = f"not found: {path} (the API is under /api, its description at /docs)"
        elif exc.status_code == 405:
            message = f"method {quote_input(request.method)} is not allowed on {path}"
        else:
            message = str(exc.detail)
        return JSONResponse(status_code=exc.status_code, content={"message": shorten_message(message)}, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):  # noqa: ARG001
        log.exception("internal error on %s", request.url.path)
        return JSONResponse(status_code=500, content={"message": f"internal error: {type(exc).__name__}"})

    @app.get("/api/info", summary="Server and agent information")
    async def info() -> dict:
        caps = bot.capabilities
        return {
            "name": "bgai",
            "version": __version__,
            "agent": bot.spec,
            "model": model,
            "probabilities": bool(caps.probabilities),
            "score_kind": caps.score_kind,
            "ply": caps.ply,
            "cube_policy": JANOWSKI_POLICY if caps.cube else CONSERVATIVE_POLICY,
        }

    @app.get("/api/plays", summary="All legal plays, ranked best first", openapi_extra=_openapi(PlayParams))
    async def plays(request: Request, params: Annotated[PlayParams, Depends(_query_model(PlayParams))]) -> dict:
        """Every legal play of the position with the roll, best first by the agent's value.

        Each play: standard notation, single-die steps (from 25 = bar, to 0 = off), the agent's ``score`` and
        what it is (``score_kind``: ``equity`` in points per game, ``mwc`` match-winning chance, ``score`` the
        agent's own units), equity and probabilities after the play (agents with probabilities; cubeful with a
        Match ID or XGID), the resulting Position ID and board (mover's view, rows not swapped) and whether the
        game is over.  ``best`` is the first play; when no play is legal ``best`` is ``null``, ``plays`` empty and
        ``note`` says :data:`bgai.core.notation.NO_LEGAL_PLAY` (``"no legal play"``; absent otherwise).
        """
        return Response(answer_plays(request.query_params, params.limit), media_type="application/json")

    @app.get("/api/evaluate", summary="Probabilities, cubeless and cubeful equity of the side on roll",
             openapi_extra=_openapi(CubeStateParams))
    async def evaluate(request: Request, params: Annotated[CubeStateParams, Depends(_query_model(CubeStateParams))]) -> dict:
        """Cubeless outcome probabilities (win, win gammon, win backgammon, lose gammon, lose backgammon) of the
        side on roll before it rolls, cubeless equity (ppg) and cubeful equity (per unit of the cube; the
        normalised money equity of the match-winning chance in match play), with the cube decision.  Dice
        parameters are refused (a roll carried by an XGID or Match ID is left aside)."""
        _refuse_unused(request.query_params, "/api/evaluate")
        req = read_request_params(request.query_params)
        ev = bot.evaluate(req.board, req.cube_state)
        out = {
            "probabilities": dict(zip(OUTPUTS, map(float, ev.probabilities))),
            "cubeless_equity": ev.cubeless_equity,
            "cubeful_equity": ev.cubeful_equity,
            "cube": _cube_json(ev.cube),
            "state": _state_json(req),
        }
        if ev.mwc is not None:
            out.update(mwc=ev.mwc, cubeless_mwc=ev.cubeless_mwc)
        return _json_response(out)

    @app.get("/api/cube", summary="Cube decision for the side on roll", openapi_extra=_openapi(CubeStateParams))
    async def cube(request: Request, params: Annotated[CubeStateParams, Depends(_query_model(CubeStateParams))]) -> dict:
        """Should the side on roll double, and should the opponent take?  Uses bgai.game.cube on the agent's
        probabilities (agents without probabilities: never double, always take).  The position is before the
        roll: a Match ID or XGID with rolled dice (or dice parameters) is refused."""
        _refuse_unused(request.query_params, "/api/cube")
        req = read_request_params(request.query_params)
        if req.dice is not None:
            raise RequestError(
                "cube decisions are made before rolling: give the position without dice (the Match ID, XGID or "
                f"dice parameters carry the roll {req.dice})"
            )
        return _json_response({"state": _state_json(req), **_cube_json(bot.cube_decision(req.board, req.cube_state))})

    @app.get("/api/resign", summary="Accept or reject a resignation", openapi_extra=_openapi(ResignParams))
    async def resign(request: Request, params: Annotated[ResignParams, Depends(_query_model(ResignParams))]) -> dict:
        """Should a side accept its opponent's resignation of ``points`` (1 a single game, 2 a gammon, 3 a
        backgammon, before the cube)?  ``resigns=opponent`` (default): the side on roll decides;
        ``resigns=on_roll``: the side on roll resigns and its opponent decides.  bgai.analysis.resign decides:
        money play in points (cube included), match play in match-winning chances (``units``).  The position is
        valued before the roll: a Match ID or XGID with rolled dice (or dice parameters) is refused."""
        _refuse_unused(request.query_params, "/api/resign")
        req = read_request_params(request.query_params)
        if req.dice is not None:
            raise RequestError("resignations are judged before the roll: give the position without dice")
        out = _resignation_json(bot, req.board, req.cube_state, params.points, params.resigns or "opponent")
        out["state"] = _state_json(req)
        return out

    # ----------------------------------------------------------------------------------- wildbg compatible
    def _wildbg_probs(p) -> dict | None:
        if p is None:
            return None
        return {"win": float(p[0]), "winG": float(p[1]), "winBg": float(p[2]), "loseG": float(p[3]),
                "loseBg": float(p[4])}

    def _wildbg_board(request: Request):
        params = request.query_params
        stray = [k for k in params if re.fullmatch(r"p\d+", k) and k not in _WILDBG_KEYS]
        if stray:
            raise RequestError(f"unknown board parameter {quote_input(stray[0])}: a wildbg board has p0 .. p25")
        x_away, o_away = params.get("x_away"), params.get("o_away")
        if (x_away or "0") != "0" or (o_away or "0") != "0":
            raise RequestError("only money games are supported here (x_away and o_away 0 or absent)")
        board = board_from_wildbg({k: params[k] for k in _WILDBG_KEYS if k in params})
        check_game_not_over(board)
        return board

    def _wildbg_dice(die1: int, die2: int) -> Dice:
        try:
            return Dice.parse((die1, die2))
        except InvalidDiceError:
            raise InvalidDiceError("Dice values must be between 1 and 6.") from None  # wildbg's message

    @app.get("/move", summary="wildbg-compatible: all plays, best first", openapi_extra=_wildbg_openapi())
    async def wildbg_move(request: Request, die1: QueryInt, die2: QueryInt) -> dict:
        board = _wildbg_board(request)
        dice = _wildbg_dice(die1, die2)
        ranked = bot.rank_plays(board, dice, rng_if_needed())
        if not ranked:
            return _json_response({"moves": [{"play": [], "probabilities": _wildbg_probs(_after_probs(bot, board))}]})
        return _json_response({
            "moves": [
                {
                    "play": [{"from": int(f), "to": int(t)} for f, t, _ in rp.play.steps],
                    "probabilities": _wildbg_probs(rp.probabilities),
                }
                for rp in ranked
            ]
        })

    @app.get("/eval", summary="wildbg-compatible: probabilities and cube hints", openapi_extra=_wildbg_openapi())
    async def wildbg_eval(request: Request) -> dict:
        board = _wildbg_board(request)
        ev = bot.evaluate(board)
        return _json_response({"cube": {"double": ev.cube.double, "accept": ev.cube.take},
                               "probabilities": _wildbg_probs(ev.probabilities)})

    # ----------------------------------------------------------------------------------------- web page
    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(os.path.join(STATIC_DIR, "index.html"), media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def _resignation_json(bot: Bot, board: np.ndarray, state: CubeState, points: int, resigns: str) -> dict:
    """The ``/api/resign`` answer (see there); ``board`` and ``state`` from the view of the side on roll."""
    if resigns not in ("opponent", "on_roll"):
        raise RequestError(f"resigns must be opponent or on_roll, got {quote_input(resigns)}")
    if points not in (1, 2, 3):
        raise RequestError(f"points must be 1 (a single game), 2 (a gammon) or 3 (a backgammon), got {points}")
    money = state.match_length == 0
    on_roll_decides = resigns == "opponent"
    board = board if on_roll_decides else flip(board)
    dec = bot.resignation(board, state if on_roll_decides else state.swapped(), points, decider_on_roll=on_roll_decides)
    played = None if np.isnan(dec.equity_if_played) else dec.equity_if_played
    return {
        "accept": dec.accept,
        "points": points,
        "resigns": resigns,
        "decides": "opponent" if resigns == "on_roll" else "on_roll",
        "units": "points" if money else "mwc",
        "equity_if_accepted": dec.equity_if_accepted,
        "equity_if_played": played,
        "agent": bot.spec,
    }


def _after_probs(bot: Bot, board: np.ndarray):
    """Probabilities for the mover when no play is possible (the position unchanged, opponent to roll)."""
    if not bot.has_probabilities:
        return None
    p = bot.probabilities(flip(as_batch(board)[0]))
    return swap_perspective(p)


def serve_http(
    bot: Bot,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    seed: int = 0,
    log_level: str = "info",
    max_connections: int = HTTP_MAX_CONNECTIONS,
    timeout: float = HTTP_TIMEOUT,
    allow_hosts=(),
) -> None:
    """Run the HTTP server with uvicorn until interrupted, with bgai's limits (:mod:`bgai.serve.limits`): at most
    ``max_connections`` connections, a connection without a request in progress closed after ``timeout``
    seconds, only requests whose ``Host`` is ``localhost``/``127.0.0.1``/``::1``, ``host`` or one of
    ``allow_hosts`` (``'*'``: any).  Torch and BLAS run single-threaded in this process
    (:func:`bgai.util.threads.limit_threads`): one position per request gains nothing from a second thread, which
    only spins and adds to the tail latency.  The compiled kernels of the per-request work are loaded and the
    model's bear-off database read before serving (:meth:`bgai.serve.bot.Bot.prepare_to_serve`).  The objects
    made before serving are frozen out of the garbage collector's full collections (``gc.freeze``).

    Raises:
        OSError: the address cannot be bound.  LimitError: bad limits.
    """
    import uvicorn

    limit_threads(1)  # one position per request: a second torch/BLAS thread only spins
    bot.prepare_to_serve()  # kernels, databases and fixed weights from the first request (Bot.prepare_to_serve)
    app = create_app(bot, seed=seed, hosts=allowed_hosts(host, allow_hosts))
    # the objects made so far (torch, numpy, the model, FastAPI) live as long as the server: out of the garbage
    # collector's sight, so that its full collections, triggered by the requests' short-lived objects, do not
    # walk them again and again (tens of milliseconds each, in the latency of the request that triggers one)
    gc.collect()
    gc.freeze()
    config = http_server_config(app, host, port, max_connections=max_connections, timeout=timeout, log_level=log_level)
    uvicorn.Server(config).run()
