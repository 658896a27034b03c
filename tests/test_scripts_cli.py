"""Every script in scripts/ answers a bad option with one usage line and exit status 2 (bgai's own
argument parser, :class:`bgai.cli.args.BgaiArgumentParser`), never argparse's multi-line usage block."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "scripts", "*.py"))
                 if "ArgumentParser(" in open(p, encoding="utf-8").read())


def test_scripts_found():
    assert "bench_disagreements.py" in SCRIPTS and len(SCRIPTS) >= 20


@pytest.mark.parametrize("script", SCRIPTS)
def test_bad_option_is_one_line(script):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), "--no-such-option"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{script}: error: ") and lines[0].endswith(f"(see '{script} --help')")
    assert "--no-such-option" in lines[0] or "required" in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
