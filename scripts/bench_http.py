"""Benchmark the latency of bgai's HTTP API with one client, beside the in-process time of the same call.

The script starts ``python -m bgai serve http`` (the interpreter and ``PYTHONPATH`` of this process, so
``PYTHONPATH=/other/checkout python scripts/bench_http.py`` measures that checkout's server) on a free local
port, waits until ``/api/info`` answers, and sends requests one after another over one keep-alive connection
(``http.client``), timing each from send to the last byte of the answer (wall clock):

* ``/api/plays?position_id=...&dice=31`` and ``dice=66``: all legal plays ranked at 0-ply (the served agent's
  ply; the shipped model by default);
* ``/api/evaluate?position_id=...``: probabilities, equities and cube decision before the roll.

Positions: seeded pubeval-vs-pubeval self-play (positions before a roll, distinct, from the third play on);
every request of a row uses another position, and the positions where the roll has no legal play are skipped.
Beside each HTTP row, the same work in this process without the web layer: :meth:`bgai.serve.bot.Bot.rank_plays`
(every play's notation read) / :meth:`~bgai.serve.bot.Bot.evaluate` on the same positions (numpy's BLAS and torch
limited to one thread and the compiled kernels loaded, :meth:`~bgai.serve.bot.Bot.prepare_to_serve`, as the server
does), so ``HTTP - in-process`` is the cost of the web layer (request parsing, JSON, uvicorn, the socket, the
client).  Rows print the median (p50) and 90th and 95th percentiles (p90, p95) over the requests, after
``--warmup`` untimed requests, and ``rounds``, the median of the rounds' p50s; the HTTP and in-process passes
alternate over ``--rounds`` rounds.  ``server CPU/request``: the server process's CPU time (user + system,
``/proc``, 10 ms ticks) over a round's HTTP requests divided by their number, the median of the rounds -- the
server's cost without the waits of a busy machine; ``client CPU``: this process's CPU time within the timed round
trips (``http.client`` sending the request and reading the answer), a part of each round trip that is not bgai's.

``--compare CHECKOUT`` serves the same agent from a second bgai checkout too (``PYTHONPATH=CHECKOUT``, e.g. the
main branch) and alternates the two servers pass by pass, so both see the same load: before/after in one run.

Usage: ``python scripts/bench_http.py [--agent default] [--requests 200] [--rounds 3] [--warmup 30] [--seed 1]
[--compare CHECKOUT]``
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse

import numpy as np
from positions import selfplay_positions  # scripts/positions.py

from bgai.agents.registry import resolve_spec
from bgai.cli.args import BgaiArgumentParser
from bgai.core.dice import Dice
from bgai.core.movegen import afterstates
from bgai.core.position_id import encode_position_id
from bgai.serve.bot import Bot
from bgai.util.threads import limit_threads


def with_plays(boards: np.ndarray, roll: tuple[int, int]) -> np.ndarray:
    """The boards where ``roll`` moves at least one checker."""
    dice = np.broadcast_to(np.asarray(roll, dtype=np.int64), (len(boards), 2))
    after, src = afterstates(boards, dice, validate=False)
    moved = np.zeros(len(boards), dtype=bool)
    moved[src[np.any(after != boards[src], axis=(1, 2))]] = True
    return boards[moved]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(agent: str, port: int, checkout: str | None = None) -> subprocess.Popen:
    """``python -m bgai serve http`` on ``port``; with ``checkout``, that checkout's bgai (``PYTHONPATH``)."""
    cmd = [sys.executable, "-m", "bgai", "serve", "http", "--host", "127.0.0.1", "--port", str(port),
           "--agent", agent]
    env = None if checkout is None else {**os.environ, "PYTHONPATH": os.path.abspath(checkout)}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            cwd=None if checkout is None else os.path.abspath(checkout))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with status {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/api/info")
            if conn.getresponse().status == 200:
                conn.close()
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not answer within 120 s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``; NaN elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get(conn: http.client.HTTPConnection, path: str) -> tuple[float, float, dict]:
    """Seconds from sending the request to the last byte of the answer (wall clock), this process's CPU seconds in
    that time (the client's part of the round trip), and the decoded answer."""
    c = time.process_time()
    t = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    dt = time.perf_counter() - t
    dc = time.process_time() - c
    if resp.status != 200:
        raise SystemExit(f"{path}: status {resp.status}: {body[:500]!r}")
    return dt, dc, json.loads(body)


def main() -> None:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", default="default", help="agent spec served (default: the shipped model)")
    ap.add_argument("--requests", type=int, default=200, help="timed requests per row and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", metavar="CHECKOUT", help="also serve from another bgai checkout (e.g. main) and "
                    "alternate the two servers request pass by request pass: the same load for both")
    args = ap.parse_args()

    spec = resolve_spec(args.agent)
    n = args.requests * args.rounds + args.warmup
    pool = selfplay_positions(3 * n, args.seed, games=64)
    rows = {
        "plays 3-1": ("/api/plays?position_id={}&dice=31", with_plays(pool, (3, 1))[:n], Dice.parse("31")),
        "plays 6-6": ("/api/plays?position_id={}&dice=66", with_plays(pool, (6, 6))[:n], Dice.parse("66")),
        "evaluate": ("/api/evaluate?position_id={}", pool[:n], None),
    }
    for name, (_, boards, _) in rows.items():
        if len(boards) < n:
            raise SystemExit(f"{name}: only {len(boards)} positions; lower --requests or --rounds")

    bot = Bot.from_spec(spec)
    limit_threads(1)
    # the compiled kernels and databases, loaded as the server loads them (older trees: use_compiled, or none)
    getattr(bot, "prepare_to_serve", getattr(bot, "use_compiled", lambda: None))()
    rng = np.random.default_rng(args.seed)

    def in_process(name: str, board: np.ndarray) -> float:
        _, _, roll = rows[name]
        t = time.perf_counter()
        if roll is None:
            bot.evaluate(board)
        else:
            [r.notation for r in bot.rank_plays(board, roll, rng)]  # (every play's notation, as the answer has)
        return time.perf_counter() - t

    servers = {"this": None} if not args.compare else {"this": None, "compare": args.compare}
    procs, conns = {}, {}
    http_t: dict[tuple[str, str], list[float]] = {}
    server_cpu: dict[tuple[str, str], list[float]] = {}  # per round: server CPU seconds per request
    client_cpu: dict[tuple[str, str], list[float]] = {}  # per round: this process's CPU seconds per request
    round_p50: dict[tuple[str, str], list[float]] = {}  # per round: the p50 of the HTTP requests
    proc_t: dict[str, list[float]] = {k: [] for k in rows}
    counts: dict[str, list[int]] = {k: [] for k in rows}
    try:
        for srv, checkout in servers.items():
            port = free_port()
            procs[srv] = start_server(spec, port, checkout)
            conns[srv] = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for name in rows:
                http_t[srv, name], server_cpu[srv, name], client_cpu[srv, name] = [], [], []
                round_p50[srv, name] = []
        for name, (path, boards, _) in rows.items():  # warm-up, untimed
            for b in boards[: args.warmup]:
                for srv in servers:
                    get(conns[srv], path.format(urllib.parse.quote(encode_position_id(b), safe="")))
                in_process(name, b)
        for r in range(args.rounds):
            lo = args.warmup + r * args.requests
            for name, (path, boards, _) in rows.items():
                part = boards[lo : lo + args.requests]
                ids = [urllib.parse.quote(encode_position_id(b), safe="") for b in part]
                passes = [*servers, "proc"]
                if r % 2:
                    passes.reverse()
                for kind in passes:
                    if kind == "proc":
                        proc_t[name].extend(in_process(name, b) for b in part)
                        continue
                    cpu0, own = cpu_seconds(procs[kind].pid), 0.0
                    times = []
                    for pid in ids:
                        dt, dc, out = get(conns[kind], path.format(pid))
                        times.append(dt)
                        own += dc
                        if "count" in out and kind == "this":
                            counts[name].append(out["count"])
                    server_cpu[kind, name].append((cpu_seconds(procs[kind].pid) - cpu0) / len(ids))
                    client_cpu[kind, name].append(own / len(ids))
                    http_t[kind, name].extend(times)
                    round_p50[kind, name].append(float(np.median(times)))
        for c in conns.values():
            c.close()
    finally:
        for proc in procs.values():
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()

    print(f"-- {spec}: one client, keep-alive, {args.rounds} rounds x {args.requests} requests per row "
          f"(wall clock, ms); load average {os.getloadavg()[0]:.2f}")
    print("p50s: all requests of a row (rounds: the median of the rounds' p50s); CPU: the median of the rounds' "
          "CPU per request, the server's and this client's within the round trips (sending, reading)")
    for srv, checkout in servers.items():
        if args.compare:
            print(f"server: {'this checkout' if checkout is None else checkout}")
        print(f"{'row':<10} {'HTTP p50':>9} {'rounds':>7} {'p90':>7} {'p95':>7}   {'in-process p50':>14} {'p90':>7}   "
              f"{'web layer p50':>13}   {'server CPU/request':>18} {'client CPU':>10}")
        for name in rows:
            h = 1e3 * np.array(http_t[srv, name])
            p = 1e3 * np.array(proc_t[name])
            h50, h90, h95 = np.percentile(h, [50, 90, 95])
            p50, p90 = np.percentile(p, [50, 90])
            extra = f"   (mean {np.mean(counts[name]):.1f} plays)" if counts[name] else ""
            r50 = 1e3 * np.median(round_p50[srv, name])
            cpu = 1e3 * np.median(server_cpu[srv, name])
            own = 1e3 * np.median(client_cpu[srv, name])
            print(f"{name:<10} {h50:9.3f} {r50:7.3f} {h90:7.3f} {h95:7.3f}   {p50:14.3f} {p90:7.3f}   {h50 - p50:13.3f}   "
                  f"{cpu:18.3f} {own:10.3f}{extra}")


if __name__ == "__main__":
    main()
