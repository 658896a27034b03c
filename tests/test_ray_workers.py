"""How work-unit workers start: the compiled kernels in use in the driver are loaded by workers that start fresh
(a spawned local worker, a Ray actor) before their first unit, and a Ray driver keeps its actors for its next job
(bgai.util.jit.loaded_kernels, bgai.util.ray_backend.KEEP_S / release_workers)."""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np
import pytest

from bgai.agents import pubeval
from bgai.core import movegen
from bgai.errors import AgentSpecError
from bgai.evaluate.series import build_agents, run_play_unit
from bgai.util import jit, parallel
from bgai.util.parallel import run_units

PUBEVAL = "bgai.agents.pubeval:_kernel"


def kernels_in_worker(context, unit) -> tuple[str, ...]:
    """A unit: the kernels in use in the worker that runs it."""
    return jit.loaded_kernels()


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed (or BGAI_NUMBA=0): no compiled kernels")
def test_kernels_in_use_are_listed_by_loader_and_turned_off_again():
    assert movegen.use_compiled() and pubeval.use_compiled()
    assert {PUBEVAL, "bgai.core.movegen:generate"} <= set(jit.loaded_kernels())
    pubeval.use_compiled(False)
    assert PUBEVAL not in jit.loaded_kernels()
    jit.load_kernels([PUBEVAL, "bgai.no_such_module:f", "bgai.agents.pubeval:no_such_kernel"])  # others skipped
    assert PUBEVAL in jit.loaded_kernels()


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed (or BGAI_NUMBA=0): no compiled kernels")
def test_spawned_local_worker_starts_with_the_kernels_of_its_parent(monkeypatch):
    pubeval.use_compiled()
    monkeypatch.setattr(parallel, "start_method", lambda: "spawn")  # as with torch loaded, or Ray connected
    run = run_units(kernels_in_worker, [0, 1], workers=2)
    assert run.complete
    for kernels in run.ordered():  # before its first unit, without a score computed there yet
        assert PUBEVAL in kernels


# --- Ray ------------------------------------------------------------------------------------------------------

ray = pytest.importorskip("ray", reason="ray is not installed (the optional extra bgai[ray]: pip install 'bgai[ray]')")
from bgai.util import ray_backend  # noqa: E402 - after the skip: the module needs ray to run jobs

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # kernels_in_worker: Ray's workers lack tests/

UNITS = [(5, u, 6 * 40, 40, True) for u in range(6)]
ARGS = ("pubeval", "racer", False)


@pytest.fixture(scope="module")
def cluster():
    term = signal.getsignal(signal.SIGTERM)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    signal.signal(signal.SIGTERM, term)
    ray_backend.connect()
    yield
    ray_backend.release_workers()
    ray.shutdown()


def _job(pids: list | None = None, **kw):
    def on_result(i, res):
        if pids is not None and not pids:
            pids.extend(sorted(ray_backend.actor_pid(a) for a in ray_backend.LIVE_ACTORS))

    return run_units(run_play_unit, UNITS, workers=2, setup=build_agents, setup_args=ARGS, backend="ray",
                     on_result=on_result, **kw)


def _gone(pid: int, within: float = 15.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _same(a, b) -> None:
    for x, y in zip(a.ordered(), b.ordered(), strict=True):
        np.testing.assert_array_equal(x.points, y.points)
        np.testing.assert_array_equal(x.plies, y.plies)


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed (or BGAI_NUMBA=0): no compiled kernels")
def test_ray_actor_starts_with_the_kernels_of_the_driver(cluster):
    ray_backend.release_workers()  # new actors: processes that start fresh
    pubeval.use_compiled()
    run = run_units(kernels_in_worker, [0, 1], workers=2, backend="ray")
    assert run.complete and all(PUBEVAL in kernels for kernels in run.ordered())


def test_next_job_runs_on_the_kept_actors_until_released(cluster):
    ray_backend.release_workers()
    first, second, third = [], [], []
    a = _job(first)
    b = _job(second)  # within KEEP_S: the same processes, another job's context
    assert a.complete and b.complete and len(first) == 2
    assert second == first
    _same(a, b)
    local = run_units(run_play_unit, UNITS, workers=1, setup=build_agents, setup_args=ARGS)
    _same(a, local)
    assert ray_backend.release_workers() == 2
    assert all(_gone(pid) for pid in first)
    c = _job(third)
    assert c.complete and not set(third) & set(first)
    _same(a, c)


def test_kept_actors_stop_after_keep_s(cluster, monkeypatch):
    ray_backend.release_workers()
    monkeypatch.setattr(ray_backend, "KEEP_S", 0.5)
    pids = []
    assert _job(pids).complete
    assert all(_gone(pid) for pid in pids)
    assert ray_backend.release_workers() == 0


def test_failed_job_keeps_no_actor(cluster):
    ray_backend.release_workers()
    assert _job().complete
    with pytest.raises(AgentSpecError):
        run_units(run_play_unit, UNITS, workers=2, setup=build_agents, setup_args=("pubeval", "nonsense", False),
                  backend="ray")
    assert ray_backend.release_workers() == 0
