"""bgai.util.jit: the lazy-kernel rule (LazyKernel: numpy path first, the kernel loaded after enough work, use /
prepare / reset) and compile_kernel's fallback when numba has no writable cache directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from bgai.util import jit
from bgai.util.jit import LazyKernel

pytest.importorskip("numba", reason="numba (the 'fast' extra) is not installed: no compiled kernels to test")
if not jit.AVAILABLE:
    pytest.skip("compiled kernels are turned off (BGAI_NUMBA=0)", allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _double(x):
    return 2 * x


def _add_double(x):  # pragma: no cover - compiled by numba
    return _double(x) + 1


def _sub_double(x):  # pragma: no cover - compiled by numba
    return _double(x) - 1


def test_seconds_counted_after_each_numpy_call_then_loaded_once():
    primed = []
    k = LazyKernel(_add_double, 0.5, helpers=(_double,), prime=primed.append)
    assert k.name == "_add_double" and k.get() is None and k.kernel is None
    k.count(0.3)
    assert k.get() is None and k.work == 0.3 and primed == []
    k.count(0.25)  # 0.55 s of numpy work: the next call loads it
    kernel = k.get()
    assert kernel is not None and kernel(20) == 41 and primed == [kernel]
    assert k.get() is kernel and k.get(compiled=False) is None
    assert not k.use(False) and k.get() is None  # turned off: no more loading, whatever the work counted
    k.count(100.0)
    assert k.get() is None and not k.prepare()
    assert k.use() and k.kernel is kernel and primed == [kernel]  # loaded once per process


def test_positions_counted_before_the_call():
    k = LazyKernel(_add_double, 10, helpers=(_double,))
    assert k.get(4) is None and k.get(5) is None and k.work == 9
    assert k.get(100, False) is None and k.work == 9  # compiled=False never loads and does not count
    kernel = k.get(1)  # the 10th position
    assert kernel is not None and kernel(1) == 3


def test_compiled_true_loads_at_once_and_prepare_and_reset():
    k = LazyKernel(_add_double, 10**9, helpers=(_double,))
    kernel = k.get(1, True)
    assert kernel is not None and k.get(1) is kernel  # used from then on
    k.reset()  # a fresh process's state: numpy path again, no work counted
    assert k.kernel is None and k.work == 0 and k.get(1) is None
    assert k.prepare() and k.kernel is kernel  # a long run: loaded now (the same kernel object)


def test_a_helper_shared_by_two_kernels():
    a = LazyKernel(_add_double, 0, helpers=(_double,))
    b = LazyKernel(_sub_double, 0, helpers=(_double,))
    assert a.get()(5) == 11 and b.get()(5) == 9


PROBE = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from kern import add_one
    from bgai.util.jit import compile_kernel
    k = compile_kernel(add_one)
    print(json.dumps([k(41), k._cache.__class__.__name__]))
""")


def test_compile_kernel_without_a_cache_directory_compiles_uncached(tmp_path):
    # numba finds no cache locator (only the IPython one, which fits no file here): njit(cache=True) raises
    # "cannot cache function"; compile_kernel then compiles without the cache
    (tmp_path / "kern.py").write_text("def add_one(x):\n    return x + 1\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("BGAI_NUMBA", None)
    runs = {}
    for name, extra in (("default", {}), ("no locator", {"NUMBA_CACHE_LOCATOR_CLASSES": "IPythonCacheLocator"})):
        out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True,
                             env=dict(env, **extra), timeout=120)
        assert out.returncode == 0, out.stderr
        runs[name] = json.loads(out.stdout.strip().splitlines()[-1])
    assert runs == {"default": [42, "FunctionCache"], "no locator": [42, "NullCache"]}
