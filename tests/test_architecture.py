"""The package's structure: layers without import cycles, no private names across modules, module-level
imports, and a core that loads no other layer and not torch.

The layers, bottom to top (a module may import from its own layer and the layers below it only):
``errors``/``util`` -> ``core`` -> ``formats`` -> ``model`` -> ``agents`` -> ``game`` ->
``analysis``/``evaluate``/``train`` -> ``cli``/``serve``/``tui``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "bgai"

#: Layer rank of each top-level part of the package; imports may only go to an equal or lower rank.
LAYERS = {
    "errors": 0, "util": 0, "__init__": 0, "__main__": 9,
    "core": 1,
    "formats": 2,
    "model": 3,
    "agents": 4,
    "game": 5,
    "analysis": 6, "evaluate": 6, "train": 6,
    "cli": 8, "serve": 7, "tui": 7,
}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(mod: str, node: ast.ImportFrom) -> str:
    if node.level:
        base = mod.split(".")
        pkg_path = MODULES[mod]
        if pkg_path.name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def imports_of(mod: str):
    """Yield (target module, imported name or None, line, at module level) for every intra-bgai import."""
    tree = ast.parse(MODULES[mod].read_text())
    top = set(id(n) for n in tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("bgai"):
                    yield a.name, None, node.lineno, id(node) in top
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(mod, node)
            if not target.startswith("bgai"):
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in MODULES:
                    yield sub, None, node.lineno, id(node) in top
                else:
                    yield target, a.name, node.lineno, id(node) in top


def graph() -> dict[str, set[str]]:
    g: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _name, _line, _top in imports_of(m):
            if target in MODULES and target != m:
                g[m].add(target)
    return g


def _sccs(g: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in g:
        if v not in index:
            visit(v)
    return out


def _layer(mod: str) -> int:
    parts = mod.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else "__init__"]


def test_no_import_cycles():
    # Package __init__ modules are faces: an edge into a package means its __init__ runs, which we count.
    cycles = [sorted(c) for c in _sccs(graph()) if len(c) > 1]
    assert cycles == []


def test_layers_point_down():
    upward = []
    for m in MODULES:
        for target, _name, line, _top in imports_of(m):
            if target in MODULES and _layer(target) > _layer(m):
                upward.append(f"{m}:{line} -> {target}")
    assert upward == []


def test_no_private_names_across_modules():
    bad = []
    for m in MODULES:
        for target, name, line, _top in imports_of(m):
            if name and name.startswith("_") and not name.startswith("__") and target != m:
                bad.append(f"{m}:{line} imports {target}.{name}")
    assert bad == []


#: Third-party packages that come with an optional extra (``pip install bgai[train]`` ...), not with the core.
OPTIONAL = {"torch", "tensorboard", "fastapi", "uvicorn", "starlette", "pydantic", "onnx", "onnxruntime",
            "gnubg_nn", "matplotlib", "tqdm", "yaml", "ray"}


def needs_extra() -> set[str]:
    """Modules that import an optional package at module level, directly or through another bgai module."""
    direct: dict[str, set[str]] = {}
    heavy = set()
    for m, path in MODULES.items():
        tree = ast.parse(path.read_text())
        for n in tree.body:
            names = [a.name for a in n.names] if isinstance(n, ast.Import) else (
                [n.module] if isinstance(n, ast.ImportFrom) and n.module and not n.level else [])
            if any(x.split(".")[0] in OPTIONAL for x in names):
                heavy.add(m)
        direct[m] = {t for t, _n, _l, top in imports_of(m) if top and t in MODULES}
    changed = True
    while changed:
        changed = False
        for m, targets in direct.items():
            if m not in heavy and targets & heavy:
                heavy.add(m)
                changed = True
    return heavy


def test_intra_bgai_imports_at_module_level():
    """Function-level imports of bgai modules are allowed only across an optional-dependency boundary: a module
    usable without an extra may load a module that needs one (torch, the web framework ...) when it is used."""
    heavy = needs_extra()
    inner = []
    for m in MODULES:
        for target, _name, line, top in imports_of(m):
            if top or m.startswith("bgai.cli"):
                continue
            if target in heavy and m not in heavy:
                continue
            inner.append(f"{m}:{line} -> {target}")
    # The command line registers its subcommands by name (importlib), so its function-level imports are allowed.
    assert inner == []


def test_graph_sees_real_imports():
    # the checker itself must see edges: core.movegen imports core.board
    g = graph()
    assert "bgai.core.board" in g["bgai.core.movegen"]
    assert "bgai.core.position_id" in g["bgai.core.position"]


CORE_PROBE = """
import json, sys
import bgai.core.board, bgai.core.movegen, bgai.core.notation, bgai.core.position, bgai.core.position_id
import bgai.core.equity
print(json.dumps(sorted(m for m in sys.modules if m.startswith('bgai') or m == 'torch' or m.startswith('torch.'))))
"""


def test_core_loads_no_other_layer_and_not_torch():
    out = subprocess.run([sys.executable, "-c", CORE_PROBE], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = json.loads(out.stdout)
    assert "bgai.core.movegen" in loaded
    others = [m for m in loaded if not (m in ("bgai", "bgai.errors", "bgai.util") or m.startswith(("bgai.core", "bgai.util.")))]
    assert others == []


@pytest.mark.parametrize("layer", ["formats", "agents", "game"])
def test_numpy_layers_do_not_load_torch(layer):
    probe = (
        "import sys, pkgutil, importlib, bgai.%s as p\n"
        "skip={'bgai.agents.neural','bgai.agents.registry','bgai.agents.gnubg'}\n"
        "for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.'):\n"
        "    if m.name not in skip: importlib.import_module(m.name)\n"
        "print('torch' in sys.modules)\n" % layer
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
