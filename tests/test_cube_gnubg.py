"""Cube decisions against GNU Backgammon itself (a fast subset of scripts/compare_cube_gnubg.py).

Runs the Debian ``gnubg`` headless on ~100 positions from gnubg-agent self-play with random money and match
cube contexts; skipped when ``gnubg`` or ``gnubg-nn`` is not installed (``.ci/run`` installs both).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "scripts", "compare_cube_gnubg.py")


def _load_script():
    spec = importlib.util.spec_from_file_location("compare_cube_gnubg", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compare_cube_gnubg"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


cmp = _load_script()
pytestmark = [
    pytest.mark.skipif(cmp.find_gnubg() is None, reason="GNU Backgammon (gnubg) not installed: apt-get install gnubg"),
]


@pytest.fixture(scope="module")
def report():
    pytest.importorskip("gnubg_nn", reason="gnubg-nn is not installed (pip install gnubg-nn)")
    from bgai.agents.gnubg import GnubgAgent

    cases = cmp.build_cases(100, seed=7, games=6)
    probs = GnubgAgent().probabilities(np.stack([c.board for c in cases]))
    out = cmp.run_gnubg(cases, cmp.find_gnubg(), timeout=300)
    return cmp.compare(cases, out, probs)


def test_cube_logic_equals_gnubg_on_gnubgs_probabilities(report):
    assert report["unparsed"] == 0
    for kind in ("money", "match"):
        block = report[kind]
        assert block["n"] >= 20
        s = block["gnubg_probs"]
        assert s["action_agreement"] == 1.0, s["disagreements"]
        # gnubg prints 6 decimals: the equities agree to rounding
        assert max(s["max_abs_diff_nd_dt_dp"]) < 2e-4


def test_unavailable_cube_agrees(report):
    u = report["unavailable"]
    assert u["n"] >= 3  # Crawford games and post-Crawford leaders are in the sample
    assert u["bgai_agrees"] == u["n"]


def test_whole_pipeline_with_the_gnubg_agent(report):
    s = report["all"]["gnubg_nn"]
    assert s["double_agreement"] >= 0.95
    assert s["take_agreement"] >= 0.95
    assert s["mean_abs_diff_all"] < 0.02
