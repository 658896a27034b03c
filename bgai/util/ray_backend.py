"""The ``'ray'`` backend of :func:`bgai.util.parallel.run_units`: work units on a Ray cluster (optional extra
``bgai[ray]``; ``pip install 'bgai[ray]'``).

Use.  :func:`connect` joins a cluster (``'auto'``: the one ``ray start --head`` made on this machine, else a local
one started here; or an address ``HOST:PORT`` / ``ray://HOST:10001``) and registers the backend; then
``run_units(..., backend='ray', workers=W)`` runs the units on ``W`` Ray actors.  The command line does both for
``--ray auto|ADDRESS`` (``bgai eval``, ``bgai analyse``, ``bgai label``).

How. The job's ``(setup, setup_args)`` is put into Ray's object store once per job (one ``ray.put``; each node
fetches it once, its actors share that copy). A checkpoint named by a spec string in ``setup_args`` (an agent spec
``model.pt[:ply=N]``, also inside a tuple, list, dict or dataclass such as :class:`bgai.train.labels.LabelSettings`)
travels with it as bytes: an actor on a machine where that path is missing or holds other bytes (sha256) writes them
to ``$TMPDIR/bgai-ray/<sha256>/<name>`` and uses that path. Each actor (one CPU) loads the compiled kernels in use
in the driver (:func:`bgai.util.jit.load_kernels`: numba's cached machine code, as a forked local worker inherits
them) and runs ``setup(*setup_args)`` once (with its first unit), limits torch / BLAS to one thread
(:func:`bgai.util.threads.limit_threads`), then runs the units handed to it; the driver hands each actor one unit at
a time, as results come back, like the local pool (two at a time while units take under :data:`PREFETCH_BELOW_S`, so
that the next one is already there when one finishes). A unit is ``fn(context, unit)`` with ``fn`` and the unit
pickled per task (a few hundred bytes); its result comes back through the object store. So results are those of the
local backend, bit for bit (the units are pure functions of ``(setup_args, unit)``: :mod:`bgai.util.parallel`).

Actors between jobs.  When a job has finished, its actors wait :data:`KEEP_S` seconds for
this driver's next job, which then runs on them without starting processes (a job that needs more starts the
rest); then, or at :func:`release_workers`, they are stopped and their CPUs freed.  An error or an interrupt stops
a job's actors at once.

Faults.  Actors are made with ``max_restarts`` and ``max_task_retries`` (:data:`RESTARTS`): when an actor's
process dies (killed, out of memory, its machine lost), Ray starts it again (``setup`` runs again) and re-runs
the units it had not returned; a unit's result is taken once (the first and only reply to its task), so none is
counted twice, and the result of the job is unchanged.  An actor that dies more than :data:`RESTARTS` times
raises :class:`bgai.util.parallel.WorkerDied`.  An exception raised by ``fn`` or ``setup`` is not retried: it
is raised in the driver (as the same exception class) after the actors are stopped.

Interrupts.  The driver waits for results in short slices (:data:`POLL_S`), so Ctrl-C / SIGTERM stop the run as
on the local backend: the units not finished are cancelled, the actors killed, and ``run_units`` returns the
finished ones with ``interrupted`` set.

Not supported: ``setup_args`` that name files other than checkpoints outside a shared file system are sent as
bytes only when they are existing files named by a string (see above); a ``context`` built in the driver is not
used (the actors build their own).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from bgai.errors import BgaiError
from bgai.util.fileio import atomic_write_bytes
from bgai.util.jit import load_kernels, loaded_kernels
from bgai.util.journal import spec_file_path
from bgai.util.parallel import UnitRun, WorkerDied, register_backend
from bgai.util.threads import limit_threads

__all__ = ["connect", "auto_address", "check_address", "CONNECT_TIMEOUT_S", "ray_available", "cluster_cpus",
           "RESTARTS", "POLL_S", "IN_FLIGHT", "PREFETCH_BELOW_S", "KEEP_S", "release_workers"]

#: Restarts of a dead actor, and retries of the units it held, before the job fails with WorkerDied.
RESTARTS = 4
#: Seconds the driver waits for a result before looking at signals again.
POLL_S = 0.2
#: Units kept at an actor when units are short (:data:`PREFETCH_BELOW_S`): the next one is already there when one
#: finishes, so the round trip (about a millisecond on one machine) is not spent idle.
IN_FLIGHT = 2
#: Wall seconds of a unit (as the driver sees it) below which units are handed out :data:`IN_FLIGHT` at a time;
#: longer ones go one at a time to an actor that has none, as the local pool hands them out: a unit queued behind
#: a long one could otherwise wait while another actor is idle at the end of the job (up to a unit's time).
PREFETCH_BELOW_S = 0.05


def ray_available() -> bool:
    """Whether the ``ray`` package can be imported (the ``bgai[ray]`` extra)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _ray():
    try:
        import ray
    except ImportError:
        raise BgaiError("the Ray backend needs the ray package: pip install 'bgai[ray]'") from None
    return ray


def connect(address: str = "auto", *, num_cpus: int | None = None, log_to_driver: bool = False) -> str:
    """Join a Ray cluster (or start a local one) and register the ``'ray'`` backend of
    :func:`bgai.util.parallel.run_units`.  Calling it again once connected does nothing.

    Args:
        address: ``'auto'``: the cluster of :func:`auto_address` (``RAY_ADDRESS``, else the one ``ray start``
            recorded on this machine) if there is one, else a new local one (``num_cpus`` CPUs, default all);
            never another process's private cluster (Ray's own ``'auto'`` joins any cluster it finds running on
            the machine, e.g. one that a test or another user's job started and may stop at any time).  Any
            other value: a cluster address (``HOST:PORT``, ``ray://HOST:10001``), which must answer: it is
            checked first (:func:`check_address`, a TCP connection within :data:`CONNECT_TIMEOUT_S`), so that a
            wrong address fails in seconds instead of Ray's minutes of retries.
        num_cpus: CPUs of a local cluster started here (``None``: all of this machine's).
        log_to_driver: show the workers' output here.

    Returns:
        A one-line description (the address and the CPUs the cluster has).

    Raises:
        BgaiError: ray is not installed, or the cluster at ``address`` cannot be joined (one line naming the
            address; Ray's own log lines of the failed attempt are not shown).
    """
    ray = _ray()
    if not ray.is_initialized():
        if address == "auto":
            target = auto_address()
        else:
            check_address(address)
            target = address
        old_term = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
        common = dict(include_dashboard=False, log_to_driver=log_to_driver, configure_logging=False)
        ray_log = logging.getLogger("ray")
        old_level = ray_log.level
        ray_log.setLevel(logging.ERROR)  # Ray's notes on starting (token authentication ...) are not bgai's output
        try:
            # RAY_ADDRESS would override the address given to ray.init (also 'local'): target already took it
            with _environ(RAY_ADDRESS=None):
                if target is None:  # its workers at nice 0, as the local pool's (below)
                    with _environ(**{_NICENESS: os.environ.get(_NICENESS, "0")}):
                        ray.init(address="local", num_cpus=num_cpus, **common)
                else:
                    with _environ(**{k: os.environ.get(k, v) for k, v in _JOIN_TIMEOUTS.items()}), _stderr_kept():
                        ray.init(address=target, **common)
        except Exception as exc:  # ray raises ConnectionError, ValueError, RuntimeError ...
            where = address if target is None or target == address else f"{address} ({target})"
            raise BgaiError(f"cannot join the Ray cluster at {where!r}: {type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
        finally:
            ray_log.setLevel(old_level)
        if old_term is not None:  # ray.init sets its own: keep SIGTERM as before, so run_units stops on it
            signal.signal(signal.SIGTERM, old_term)
        _JOINED[:] = [address if address != "auto" else
                      f"auto ({'local, started here' if target is None else target})"]
    register_backend("ray", _run_ray)
    return f"Ray cluster {_JOINED[0] if _JOINED else address}: {cluster_cpus()} CPU(s)"


#: Ray's setting of its workers' nice value (Ray's default: 15), set to 0 for a local cluster :func:`connect` starts
#: (unless set in the environment): at nice 15 on a machine shared with other sessions (Linux groups a session's
#: processes for CPU shares, autogroup), two actors got about 15% of a core each where two local workers (nice 0)
#: got their share; the local pool's workers run at nice 0 too.  A cluster started with ``ray start`` keeps
#: Ray's default unless started with ``RAY_worker_niceness=0`` in its environment.
_NICENESS = "RAY_worker_niceness"

#: What :func:`connect` joined (for its one-line description).
_JOINED: list[str] = []

#: Seconds :func:`check_address` waits for a host name to resolve and for a TCP connection to open.
CONNECT_TIMEOUT_S = 3.0

#: Ray's settings for joining a cluster whose address answered :func:`check_address` (applied unless already set
#: in the environment): one attempt (about 35 s) instead of Ray's 20, for an address where a gRPC service that is
#: not Ray's listens.  (Ray's C++ timeouts are read when ray is imported, so they are not set here.)
_JOIN_TIMEOUTS = {"RAY_gcs_server_port_wait_time_s": "1"}


def auto_address() -> str | None:
    """The cluster ``connect('auto')`` joins: ``RAY_ADDRESS`` if set, else the one ``ray start`` recorded on this
    machine (Ray's ``ray_current_cluster`` file) when it answers; ``None``: none, start a local cluster.

    Raises:
        BgaiError: ``RAY_ADDRESS`` is set but does not answer (:func:`check_address`).
    """
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and env not in ("auto", "local"):
        check_address(env)
        return env
    if env == "local":
        return None
    try:
        from ray._private.services import find_bootstrap_address  # the file `ray start` writes, `ray stop` removes
        recorded = find_bootstrap_address(None)
    except Exception:  # noqa: BLE001 - an internal of Ray that moved: no recorded cluster
        recorded = None
    if not recorded:
        return None
    try:
        check_address(recorded)
    except BgaiError:  # left by a head node that died without `ray stop`
        return None
    return recorded


def check_address(address: str, timeout: float | None = None) -> None:
    """Check that a Ray cluster address (``HOST:PORT``, ``[IPV6]:PORT`` or ``ray://HOST:PORT``) is well formed,
    that its host name resolves and that a TCP connection to it opens, each within ``timeout`` seconds
    (default :data:`CONNECT_TIMEOUT_S`).  A loopback host (``localhost``, ``127.0.0.1``) is also tried at this
    machine's address, where Ray itself connects for it.

    Raises:
        BgaiError: one line naming the address and what failed.
    """
    timeout = CONNECT_TIMEOUT_S if timeout is None else timeout
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port_text = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if "://" in rest or not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BgaiError(f"bad Ray cluster address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    port = int(port_text)
    hosts = [host]
    if host in ("localhost", "127.0.0.1", "::1"):
        try:
            from ray._private.services import resolve_ip_for_localhost
            hosts.append(resolve_ip_for_localhost(host))
        except Exception:  # noqa: BLE001 - the loopback address alone
            pass
    reasons = [_tcp_reason(h, port, timeout) for h in hosts]
    if not all(reasons):
        return
    reason = reasons[0]
    raise BgaiError(f"cannot join the Ray cluster at {address!r}: {reason}")


def _tcp_reason(host: str, port: int, timeout: float) -> str:
    """Why no TCP connection to ``host:port`` opened within ``timeout`` seconds ('' when one did)."""
    found: list = []

    def resolve() -> None:  # getaddrinfo takes no timeout: run it in a thread that is waited for that long
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            found.append(exc)

    t = threading.Thread(target=resolve, daemon=True, name="bgai-resolve")
    t.start()
    t.join(timeout)
    if not found:
        return f"host {host!r} did not resolve within {timeout:g} s"
    if isinstance(found[0], OSError):
        return f"unknown host {host!r} ({found[0].strerror or found[0]})"
    reason = ""
    for family, kind, proto, _, addr in found[0]:
        try:
            with socket.socket(family, kind, proto) as s:
                s.settimeout(timeout)
                s.connect(addr)
                if _tls():
                    return ""
                # Ray's head node (its GCS, and the Ray Client server of ray://) speaks gRPC, i.e. HTTP/2: to the
                # client connection preface and an empty SETTINGS frame it answers with its own SETTINGS frame
                # (RFC 9113, section 3.4: 9-byte frame header, type 0x4 at byte 3)
                head = b""
                try:
                    s.sendall(_H2_PREFACE)
                    while len(head) < 9:
                        chunk = s.recv(9 - len(head))
                        if not chunk:
                            break
                        head += chunk
                except OSError:
                    pass
            if len(head) == 9 and head[3] == 0x4:
                return ""
            reason = f"what answers at {host}:{port} is not a Ray cluster (no gRPC reply within {timeout:g} s)"
        except OSError as exc:
            reason = (f"no answer from {host}:{port} within {timeout:g} s" if isinstance(exc, TimeoutError)
                      else f"nothing answers at {host}:{port} ({exc.strerror or exc})")
    return reason


#: HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113, section 3.4).
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _tls() -> bool:
    """Whether Ray is set to TLS (``RAY_USE_TLS``): then its port answers a TLS handshake, not HTTP/2 in clear."""
    return os.environ.get("RAY_USE_TLS", "0").strip().lower() in ("1", "true", "yes")


@contextlib.contextmanager
def _environ(**values: str | None):
    """Environment variables set (``None``: removed) while the block runs, then restored."""
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _stderr_kept():
    """File descriptor 2 sent to a temporary file while the block runs (Ray's C++ core writes its log lines
    there); the lines are written to stderr after the block when it succeeded, dropped when it raised."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable stderr: nothing to keep
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        ok = False
        try:
            yield
            ok = True
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if ok:
                tmp.seek(0)
                text = tmp.read()
                if text:
                    os.write(2, text)


def cluster_cpus() -> int:
    """CPUs of the Ray cluster joined (0 when not connected)."""
    ray = _ray()
    if not ray.is_initialized():
        return 0
    return int(ray.cluster_resources().get("CPU", 0))


# --- checkpoints sent as bytes -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Shipped:
    """A string that named an existing file: its bytes, to be landed on the worker's machine."""

    text: str
    path: str
    sha256: str
    data: bytes


def _file_part(text: str) -> str | None:
    """The existing file a spec string names (:func:`bgai.util.journal.spec_file_path`), or None."""
    return spec_file_path(text)


def _ship(obj: Any) -> Any:
    """``obj`` with each string naming an existing file replaced by :class:`_Shipped` (recursively)."""
    if isinstance(obj, str):
        path = _file_part(obj)
        if path is None:
            return obj
        with open(path, "rb") as f:
            data = f.read()
        return _Shipped(obj, path, hashlib.sha256(data).hexdigest(), data)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_ship(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _ship(v) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _ShippedDataclass(obj, {f.name: _ship(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                                       if isinstance(getattr(obj, f.name), str) and _file_part(getattr(obj, f.name))})
    return obj


@dataclass(frozen=True)
class _ShippedDataclass:
    value: Any
    fields: dict


def _same_file(path: str, sha256: str) -> bool:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest() == sha256
    except OSError:
        return False


def _land(obj: Any) -> Any:
    """Undo :func:`_ship` on a worker: files written where needed, strings pointing at them."""
    if isinstance(obj, _Shipped):
        if _same_file(obj.path, obj.sha256):
            return obj.text
        local = os.path.join(tempfile.gettempdir(), "bgai-ray", obj.sha256, os.path.basename(obj.path))
        if not _same_file(local, obj.sha256):
            os.makedirs(os.path.dirname(local), exist_ok=True)
            atomic_write_bytes(local, obj.data)
        return local + obj.text[len(obj.path):]
    if isinstance(obj, _ShippedDataclass):
        return dataclasses.replace(obj.value, **{k: _land(v) for k, v in obj.fields.items()})
    if isinstance(obj, (tuple, list)):
        return type(obj)(_land(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _land(v) for k, v in obj.items()}
    return obj


# --- actors ------------------------------------------------------------------------------------------------------


class _UnitWorker:
    """A Ray actor: the job's context built once (with its first unit, so that the actor takes no constructor
    argument from the object store: Ray warns on stderr about such actors when they may restart), then units run
    one at a time."""

    def __init__(self) -> None:
        self.context, self.error, self.job = None, None, None

    def _build(self, job_ref: list) -> None:
        self.context, self.error = None, None
        setup, setup_args, kernels = _ray().get(job_ref[0])  # a list: Ray resolves only top-level references itself
        try:
            load_kernels(kernels)  # the compiled kernels in use in the driver, from the start (bgai.util.jit)
            self.context = setup(*_land(setup_args)) if setup is not None else None
            limit_threads(1)
        except Exception as exc:  # noqa: BLE001 - raised with the first unit, as the local backend does
            self.error = exc
        self.job = job_ref[0].hex()

    def pid(self) -> int:
        return os.getpid()

    def run(self, job_ref: list, fn: Callable[[Any, Any], Any], unit: Any) -> Any:
        if self.job != job_ref[0].hex():  # the first unit of a job (also after a restart: a new process)
            self._build(job_ref)
        if self.error is not None:
            raise self.error
        return fn(self.context, unit)


_ACTOR_CLASS = None


def _actor_class():
    global _ACTOR_CLASS
    if _ACTOR_CLASS is None:
        _ACTOR_CLASS = _ray().remote(num_cpus=1, max_restarts=RESTARTS, max_task_retries=RESTARTS,
                                     concurrency_groups={"control": 1})(_UnitWorker)
    return _ACTOR_CLASS


#: Actors of the run in progress (for tests: a fault test kills one of their processes).
LIVE_ACTORS: list = []

#: Seconds the actors of a finished job wait for this driver's next job before they are stopped (their CPUs
#: freed): a job that starts within that time runs on them at once, without starting processes (1.5-2.5 CPU s
#: each, measured on a 2-core machine: Python, Ray's worker, bgai's imports and kernels).
KEEP_S = 10.0
_POOL: list = []  # idle actors of this driver's finished jobs
_POOL_KEY: list = [None]  # the Ray job (driver connection) they belong to
_POOL_LOCK = threading.Lock()
_POOL_TIMER: list = [None]


def _pool_key():
    ctx = _ray().get_runtime_context()
    return ctx.get_job_id(), ctx.get_node_id()


def release_workers() -> int:
    """Stop the idle actors kept for this driver's next job (:data:`KEEP_S`) now, freeing their CPUs.

    Returns:
        The number of actors stopped.
    """
    with _POOL_LOCK:
        if _POOL_TIMER[0] is not None:
            _POOL_TIMER[0].cancel()
            _POOL_TIMER[0] = None
        idle, _POOL[:] = list(_POOL), []
        current = _POOL_KEY[0] is not None and _ray().is_initialized() and _pool_key() == _POOL_KEY[0]
    if current:
        _kill(idle)
    return len(idle) if current else 0


def _kill(actors: list) -> None:
    for actor in actors:
        try:
            _ray().kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone, or Ray shut down
            pass


def _take_actors(n: int) -> list:
    """``n`` actors for a job: idle ones of this driver's last job first (those that answer within a second),
    new ones for the rest."""
    ray = _ray()
    key = _pool_key()
    with _POOL_LOCK:
        if _POOL_TIMER[0] is not None:
            _POOL_TIMER[0].cancel()
            _POOL_TIMER[0] = None
        idle = list(_POOL) if _POOL_KEY[0] == key else []  # another connection's handles are void
        _POOL[:] = []
    kept, extra = idle[:n], idle[n:]
    if kept:  # a kept actor whose process died while idle (and could not be restarted) is replaced
        probes = [a.pid.options(concurrency_group="control").remote() for a in kept]
        ready, _ = ray.wait(probes, num_returns=len(probes), timeout=1.0)
        alive = []
        for actor, probe in zip(kept, probes):
            try:
                if probe in ready:
                    ray.get(probe)
                    alive.append(actor)
                    continue
            except Exception:  # noqa: BLE001 - a dead actor: replaced below
                pass
            extra.append(actor)
        kept = alive
    _kill(extra)
    return kept + [_actor_class().remote() for _ in range(n - len(kept))]


def _keep_actors(actors: list) -> None:
    """The actors of a job that finished: kept :data:`KEEP_S` seconds for this driver's next job (each holds the
    job's context until its next job replaces it or it is stopped)."""
    with _POOL_LOCK:
        _POOL[:] = actors
        _POOL_KEY[0] = _pool_key()
        timer = threading.Timer(KEEP_S, release_workers)
        timer.daemon = True
        timer.name = "bgai-ray-keep"
        _POOL_TIMER[0] = timer
        timer.start()


def actor_pid(actor) -> int:
    """The process id of a live actor of a run (answered beside the unit it is running: concurrency group
    ``control``)."""
    ray = _ray()
    return ray.get(actor.pid.options(concurrency_group="control").remote())


def _run_ray(fn, units: Sequence, run: UnitRun, collect: Callable[[int, Any], None], *, setup, setup_args,
             context) -> None:
    """The ``'ray'`` backend (:data:`bgai.util.parallel.BACKENDS`); ``context`` is not used."""
    ray = _ray()
    if not ray.is_initialized():
        raise BgaiError("the Ray backend is not connected: call bgai.util.ray_backend.connect() first")
    from ray.exceptions import RayActorError, RayTaskError

    job = ray.put((setup, _ship(setup_args), loaded_kernels()))
    actors = _take_actors(run.workers)
    LIVE_ACTORS[:] = actors
    finished = False
    todo = list(range(len(units)))[::-1]
    pending: dict[Any, tuple[int, int, float]] = {}  # ref -> (actor, unit index, time handed out)
    load = [0] * len(actors)
    last = [0.0] * len(actors)  # when each actor's last result came back
    ahead = 1  # units kept at each actor: IN_FLIGHT once the units are seen to be short

    def submit(a: int) -> None:
        i = todo.pop()
        pending[actors[a].run.remote([job], fn, units[i])] = (a, i, time.perf_counter())
        load[a] += 1

    try:
        for a in range(len(actors)):
            if todo:
                submit(a)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S)
            for ref in ready:
                a, i, handed = pending.pop(ref)
                load[a] -= 1
                now = time.perf_counter()
                # the unit ran from when it was handed out, or from the actor's previous result if it waited
                ahead = IN_FLIGHT if now - max(handed, last[a]) < PREFETCH_BELOW_S else 1
                last[a] = now
                try:
                    result = ray.get(ref)
                except RayTaskError as exc:
                    cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                    raise cause from None
                except RayActorError as exc:
                    raise WorkerDied(f"Ray worker {a} died more than {RESTARTS} times (last: "
                                     f"{type(exc).__name__})") from None
                collect(i, result)
                while todo and load[a] < ahead:
                    submit(a)
        finished = True
    finally:
        LIVE_ACTORS[:] = []
        if finished:  # every unit returned: the actors are idle, kept for this driver's next job
            _keep_actors(actors)
        else:  # an error or an interrupt: units may still run; the actors are stopped
            for ref in pending:
                try:
                    ray.cancel(ref, force=False)
                except Exception:  # noqa: BLE001 - the actor is killed next anyway
                    pass
            _kill(actors)
