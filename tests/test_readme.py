"""Every command the README shows runs as written on a fresh clone.

The commands are taken from the README's fenced code blocks: every line of a ``bash`` block, and every line
starting with ``$ `` in the other blocks (comments after `` # `` dropped).  They run in order, as a user would
type them, from a folder that links to the repository's folders (so that what a command writes lands in that
folder, not in the checkout), with the project's ``bgai`` and ``python``, under a time limit, with only these
changes (so that the suite stays minutes long; the README's own figures were measured at full size):

* counts are scaled down: ``--games N`` -> 40, ``--matches N`` -> 4, ``--trials N`` -> 72, ``--shards N`` -> 1,
  ``--positions N`` -> 2, ``--seconds N`` -> 1; ``bgai train`` runs get a small ``run.games`` (TD) or one epoch
  (supervised);
* servers (``bgai serve ...``) are started, must say that they listen (UBGI: answer ``ubgi``) and are then
  stopped; ``bgai play`` gets ``quit`` on stdin;
* commands that need what a test cannot give are listed in :data:`NOT_RUN` with the reason.

A command whose README comment starts with ``error`` shows an error on purpose: it must exit with status 2 and
print one line.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

pytestmark = pytest.mark.slow

#: Commands (by prefix) that are not run, with the reason.
NOT_RUN = {
    "tensorboard": "a viewer for the logs, started by hand",
    "source ": "changes the calling shell",
    "pip install": "installation (CI installs with scripts/env.sh)",
    "ray start": "starts a cluster node",
    "ray stop": "stops a cluster node",
    "curl": "needs a running server (the same requests are tested in tests/test_serve_http.py)",
    "bash scripts/quickstart.sh": "run by .ci/run after the tests",
    "bash scripts/test.sh": "this very suite",
    "bgai train --config configs/tdgammon.yaml": "the hours-long run behind the shipped model",
    "RAY_ADDRESS=": "needs a running Ray cluster (the Ray backend is tested in tests/test_ray.py)",
}

SCALE = [
    (r"--games \d+", "--games 40"),
    (r"--matches \d+", "--matches 4"),
    (r"--trials \d+", "--trials 72"),
    (r"--shards \d+", "--shards 1"),
    (r"--positions \d+", "--positions 2"),
    (r"--seconds \d+", "--seconds 1"),
]


def readme_commands() -> list[tuple[int, str]]:
    """``(line number, command)`` of every command shown in the README."""
    out = []
    lang = None
    for n, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^```(\w*)", line)
        if fence:
            lang = None if lang is not None else (fence.group(1) or "text")
            continue
        if lang is None:
            continue
        cmd = line.strip() if lang == "bash" else line[2:].strip() if line.startswith("$ ") else ""
        if cmd and not cmd.startswith("#"):
            out.append((n, cmd))
    return out


def _strip_comment(cmd: str) -> tuple[str, str]:
    """``(command, comment)``: the comment starts at the first `` #`` outside quotes."""
    quote = None
    for i, ch in enumerate(cmd):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i > 0 and cmd[i - 1].isspace():
            return cmd[:i].rstrip(), cmd[i + 1 :].strip()
    return cmd, ""


def _not_run(cmd: str) -> str | None:
    for prefix, why in NOT_RUN.items():
        if cmd.startswith(prefix):
            return why
    return None


COMMANDS = readme_commands()


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    bindir = Path(sys.executable).parent
    e = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    e["PATH"] = f"{bindir}{os.pathsep}{e.get('PATH', '')}{os.pathsep}/usr/games"
    e["BGAI_DATA_DIR"] = str(tmp_path_factory.mktemp("bgai-data"))
    e["OPENBLAS_NUM_THREADS"] = "1"
    return e


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder that reads like the repository's root (links to its folders) while every file a command writes
    lands in the folder itself."""
    w = tmp_path_factory.mktemp("readme")
    for name in ("checkpoints", "configs", "scripts", "tests", "docs", "examples", "bgai"):
        (w / name).symlink_to(ROOT / name)
    (w / "data").mkdir()
    (w / "data" / "labels").symlink_to(ROOT / "data" / "labels")
    return w


def _prepare(cmd: str) -> str:
    for pat, rep in SCALE:
        cmd = re.sub(pat, rep, cmd)
    if cmd.startswith("bgai train"):
        if "--resume" in cmd:
            cmd += " --set run.games=2048"
        elif "distill" in cmd or "supervised" in cmd:
            cmd += " --set supervised.epochs=1 --set run.eval_every=0"
        else:
            cmd += " --set run.games=1024 --set run.eval_every=0 --set run.checkpoint_every=1024"
    return cmd


def _run_one(line: int, cmd: str, env: dict, cwd: Path) -> str | None:
    """Run one README command; None when it behaves, else what went wrong."""
    cmd, comment = _strip_comment(cmd)
    if _not_run(cmd):
        return None
    expect_error = comment.startswith("error")
    run = _prepare(cmd)
    if run.startswith(("bgai serve", "bgai play")):
        return _check_interactive(run, env, line, cwd)
    shell = "|" in run or "<" in run
    args = run if shell else shlex.split(run)
    if not shell and args[0] == "python":
        args[0] = sys.executable
    try:
        r = subprocess.run(args, shell=shell, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return f"README line {line}: {run!r} ran over 300 s"
    if expect_error:
        if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1:
            return f"README line {line}: {run!r} should fail with one line, status 2: {r.returncode} {r.stderr[-500:]}"
        return None
    if r.returncode != 0 or "Traceback" in r.stderr:
        return f"README line {line}: {run!r} exited {r.returncode}:\n{r.stdout[-1500:]}\n{r.stderr[-2500:]}"
    return None


def _check_interactive(cmd: str, env: dict, line: int, cwd: Path) -> str | None:
    args = shlex.split(cmd)
    if args[:3] in (["bgai", "serve", "http"], ["bgai", "serve", "external"]):
        if "--port" in args:
            args[args.index("--port") + 1] = "0"
        else:
            args += ["--port", "0"]
    p = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        if args[:2] == ["bgai", "play"]:
            out, _ = p.communicate("quit\n", timeout=120)
            ok = p.returncode == 0 and "Traceback" not in out
            return None if ok else f"README line {line}: {cmd!r} exited {p.returncode}: {out[-1500:]}"
        if args[:3] == ["bgai", "serve", "ubgi"]:
            out, _ = p.communicate("ubgi\nquit\n", timeout=120)
            ok = p.returncode == 0 and "readyok" in out
            return None if ok else f"README line {line}: {cmd!r}: {out[-1500:]}"
        seen = ""
        for _ in range(200):
            text = p.stdout.readline()
            if not text:
                break
            seen += text
            if re.search(r"listening|running on|startup complete", text, re.I):
                return None
        return f"README line {line}: {cmd!r} did not start: {seen[-1500:]}"
    finally:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_readme_has_commands_and_runs_most():
    shown = [_strip_comment(c)[0] for _, c in COMMANDS]
    assert len(shown) >= 25
    assert sum(1 for c in shown if _not_run(c)) < len(shown) / 3


def test_readme_commands_run(env, workdir):
    """Every README command in order (later ones may read what earlier ones wrote, as a user's would)."""
    failures = [f for f in (_run_one(n, c, env, workdir) for n, c in COMMANDS) if f]
    assert failures == []


def test_every_file_the_readme_names_exists():
    text = README.read_text(encoding="utf-8")
    names = set(re.findall(r"(?:scripts|configs|checkpoints|docs|tests|examples)/[\w./-]+\.(?:py|sh|yaml|pt|json|png|txt)",
                           text))
    missing = sorted(p for p in names if not (ROOT / p).exists())
    assert missing == []


def test_bgai_is_on_path_after_install():
    assert shutil.which("bgai", path=str(Path(sys.executable).parent)) is not None
