"""bgai.util.parallel: work units run in this process or in spawn workers, the same results for any number of
workers, errors raised in the caller, interruption returning the finished units; and the work-unit sizes of
evaluations (defect 27: sized from the count and the agents, so that workers have work, never from the workers)."""

from __future__ import annotations

import gc
import os
import signal

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.errors import AgentSpecError, BgaiError
from bgai.evaluate.cubeful import evaluate_cubeful
from bgai.evaluate.series import TARGET_UNITS, evaluate, series_unit_size
from bgai.util.parallel import BACKENDS, UnitRun, WorkerDied, register_backend, run_units, start_method, unit_size


def _setup(base):
    if base < 0:
        raise BgaiError(f"bad base {base}")
    return {"base": base}


def _draw(context, unit):
    """A pure function of (context, unit): a seeded draw."""
    seed, index = unit
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    return context["base"] + int(rng.integers(0, 1_000_000))


def _fail_on_3(context, unit):
    if unit[1] == 3:
        raise ValueError("unit 3 failed")
    return unit[1]


def test_results_independent_of_workers_and_in_unit_order():
    units = [(7, i) for i in range(6)]
    seen = []
    one = run_units(_draw, units, workers=1, setup=_setup, setup_args=(100,),
                    on_result=lambda i, r: seen.append(i), progress=lambda d, t: seen.append((d, t)))
    assert one.complete and one.interrupted is None and one.workers == 1
    assert seen == [0, (1, 6), 1, (2, 6), 2, (3, 6), 3, (4, 6), 4, (5, 6), 5, (6, 6)]
    two = run_units(_draw, units, workers=2, setup=_setup, setup_args=(100,))
    assert two.complete and two.workers == 2
    assert one.ordered() == two.ordered() == [_draw({"base": 100}, u) for u in units]
    assert len(set(one.ordered())) == 6
    # a context given for in-process runs is used instead of running setup
    assert run_units(_draw, units[:2], setup=_setup, setup_args=(-1,), context={"base": 0}).ordered() == [
        _draw({"base": 0}, u) for u in units[:2]]
    assert run_units(_draw, units[:1], workers=8, setup=_setup, setup_args=(0,)).workers == 1  # one per unit


def _exit_on_1(context, unit):
    if unit == 1:
        os._exit(3)  # the worker dies (killed, out of memory, ...)
    return unit


def _frozen(context, unit):
    return gc.get_freeze_count()


def test_forked_workers_never_collect_the_objects_they_inherit():
    if start_method() != "fork":
        pytest.skip("workers are spawned here (torch loaded or no fork)")
    assert gc.get_freeze_count() == 0
    inherited = len(gc.get_objects())
    run = run_units(_frozen, [0, 1], workers=2)
    # the parent's objects are in the workers' permanent generation (gc.freeze at the fork): never scanned there
    assert run.workers == 2 and min(run.ordered()) >= inherited // 2
    assert gc.get_freeze_count() == 0  # this process has them back


def test_errors_reach_the_caller():
    with pytest.raises(ValueError, match="unit 3 failed"):
        run_units(_fail_on_3, [(0, i) for i in range(5)], workers=2)
    with pytest.raises(BgaiError, match="bad base -1"):  # a worker's setup error, raised by its first unit
        run_units(_draw, [(0, 0), (0, 1)], workers=2, setup=_setup, setup_args=(-1,))
    with pytest.raises(WorkerDied, match=r"ended unexpectedly \(exit code 3\)"):  # reported, never waited for
        run_units(_exit_on_1, [0, 1, 2, 3], workers=2)
    with pytest.raises(BgaiError, match="workers must be >= 1"):
        run_units(_draw, [(0, 0)], workers=0)
    with pytest.raises(BgaiError, match=r"unknown parallel backend 'nosuch'; known: local\b"):  # 'ray' once imported
        run_units(_draw, [(0, 0)], backend="nosuch")


def test_backends_plug_in_behind_the_same_call():
    calls = []

    def serial(fn, units, run, collect, *, setup, setup_args, context):
        calls.append(len(units))
        ctx = setup(*setup_args)
        for i in reversed(range(len(units))):  # any completion order
            collect(i, fn(ctx, units[i]))

    register_backend("test-serial", serial)
    try:
        units = [(3, i) for i in range(4)]
        res = run_units(_draw, units, setup=_setup, setup_args=(5,), backend="test-serial")
        assert calls == [4] and res.ordered() == run_units(_draw, units, setup=_setup, setup_args=(5,)).ordered()
    finally:
        BACKENDS.pop("test-serial")


def test_interruption_returns_the_finished_units():
    def stop_at_2(context, unit):  # in-process only: Ctrl-C while unit 2 runs
        if unit == 2:
            raise KeyboardInterrupt
        return unit * 10

    run = run_units(stop_at_2, list(range(5)))
    assert run.interrupted == "SIGINT" and not run.complete and run.results == {0: 0, 1: 10}

    def term_at_1(context, unit):  # SIGTERM to this process while unit 1 runs
        if unit == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return unit

    handler = signal.getsignal(signal.SIGTERM)
    run = run_units(term_at_1, list(range(4)))
    assert run.interrupted == "SIGTERM" and run.results == {0: 0} and run.ordered() == [0]
    assert signal.getsignal(signal.SIGTERM) is handler  # restored
    assert UnitRun(results={1: "b", 0: "a"}, total=3).ordered() == ["a", "b"]


def test_a_callers_own_signal_handlers_are_kept():
    # the trainer turns SIGINT/SIGTERM into a flag checked between steps: its evaluations must not swallow them
    flags = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: flags.append(signum))
    try:
        def ctrl_c_at_1(context, unit):
            if unit == 1:
                os.kill(os.getpid(), signal.SIGINT)
            return unit

        run = run_units(ctrl_c_at_1, list(range(3)))
        assert flags == [signal.SIGINT] and run.complete and run.interrupted is None

        def raise_at_1(context, unit):  # the handler's "stop now": propagates
            if unit == 1:
                raise KeyboardInterrupt
            return unit

        with pytest.raises(KeyboardInterrupt):
            run_units(raise_at_1, list(range(3)))
    finally:
        signal.signal(signal.SIGINT, old)


def test_unit_size_rule():
    assert unit_size(1000, smallest=500, largest=1000) == 500
    assert unit_size(1000, smallest=64, largest=1000) == 64  # ceil(1000 / 16) = 63, even
    assert unit_size(100_000, smallest=500, largest=1000) == 1000
    assert unit_size(20, smallest=500, largest=1000) == 20
    assert unit_size(21, smallest=500, largest=1000, even=False) == 21
    assert unit_size(30, smallest=1, largest=1000, target_units=4) == 8
    with pytest.raises(BgaiError):
        unit_size(0, smallest=1, largest=2)


def test_series_units_sized_from_games_and_agents_not_workers():
    pubeval = make_agent("pubeval")
    assert pubeval.batch_games == 500 and TARGET_UNITS == 16
    assert series_unit_size(1000, (pubeval, pubeval)) == 500  # 2 units: 2 workers have work
    assert series_unit_size(100_000, (pubeval, pubeval)) == 1000
    assert series_unit_size(20, (pubeval, pubeval)) == 20

    class Search:  # an agent that searches (gnubg, a 1-ply net): small batches play at speed
        batch_games = 64

    assert series_unit_size(1000, (Search(), pubeval)) == 64  # 16 units (the last of 40 games)
    assert series_unit_size(1000, (Search(), pubeval), largest=200) == 64
    assert series_unit_size(10_000, (pubeval, pubeval), largest=200) == 200
    try:
        gnubg = make_agent("gnubg")
    except AgentSpecError:
        gnubg = None
    if gnubg is not None:
        assert gnubg.batch_games == 64


def test_neural_search_agents_use_small_units():
    torch = pytest.importorskip("torch")
    from bgai.agents.neural import NeuralAgent
    from bgai.model.features import get_encoder
    from bgai.model.nets import NetSpec, ValueNet

    enc = get_encoder("tesauro198")
    net = ValueNet(NetSpec(enc.size, (8,), "sigmoid"), generator=torch.Generator().manual_seed(1))
    pubeval = make_agent("pubeval")
    assert series_unit_size(1000, (NeuralAgent(net, enc, ply=0), pubeval)) == 500
    one_ply = NeuralAgent(net, enc, ply=1)
    assert one_ply.batch_games == 64 and series_unit_size(1000, (one_ply, pubeval)) == 64  # 16 units, not 1


def test_two_workers_share_a_1000_game_series_with_the_same_result(capsys, tmp_path):
    import json

    from bgai.cli import main

    r1 = evaluate("pubeval", "racer", 1000, 5, workers=1)
    assert r1.chunk_games == 500 and r1.workers == 1
    path = tmp_path / "r.json"
    assert main(["eval", "pubeval", "racer", "--games", "1000", "--seed", "5", "--workers", "2", "--no-progress",
                 "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["partial"] is False and data["workers"] == 2 and data["chunk_games"] == 500
    assert data["ppg"] == r1.ppg and data["a"] == {"win": r1.a.win, "gammon": r1.a.gammon, "backgammon": r1.a.backgammon}
    out = capsys.readouterr()
    assert "2 worker(s) for 2 work unit(s) of up to 500 games" in out.out and "note" not in out.err
    assert f"ppg for pubeval: {r1.ppg:+.3f} +- {r1.ci95:.3f}" in out.out  # the same games


def test_cubeful_units_sized_too():
    r = evaluate_cubeful("pubeval", "racer", 40, 2, chunk=10)
    assert r.unit_size == 10 and "4 work unit(s) of up to 10 games" in r.table()
    r = evaluate_cubeful("pubeval", "racer", 40, 2)
    assert r.unit_size == 40 and "1 work unit(s) of up to 40 games" in r.table()


def _threads(context, unit):
    """torch's and BLAS's thread counts while a unit runs."""
    import torch
    from threadpoolctl import threadpool_info

    blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    return torch.get_num_threads(), blas


def test_units_run_in_this_process_single_threaded_and_the_counts_come_back():
    # one worker runs the units here with one torch and one BLAS thread, as each worker process does (two
    # processes' spinning second threads made `bgai label --workers 1` 5x slower on 2 cores), then restores both
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(2, user_api="blas"):
        old = torch.get_num_threads()
        torch.set_num_threads(2)
        try:
            run = run_units(_threads, [(0, 0), (0, 1)], workers=1, context={})
            assert [run.results[i] for i in (0, 1)] == [(1, [1] * len(run.results[0][1]))] * 2
            assert torch.get_num_threads() == 2
            assert all(p["num_threads"] == 2 for p in threadpool_info() if p["user_api"] == "blas")
        finally:
            torch.set_num_threads(old)
