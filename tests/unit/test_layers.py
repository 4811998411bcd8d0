"""The layout shows the flow: every import points down the layer list, none hides in a
function, there are no cycles, ``kit/`` keeps few top-level modules, and the pure layers
(plan, analysis, report) import no process, socket or concurrency code, not even through
a kit module they import.

Layers, bottom to top (a module may import its own layer and the ones below it)::

    kit, kit.errors, kit._proto,     the version, the one exception tree, generated code,
    kit.quantile                     the one percentile rule
    kit.plan                         units, frozen configs, the plan builder, schedules
    kit.results                      typed, versioned records and their JSON
    kit.protocol                     the process protocol, spoken by every process below
    kit.analysis                     pure statistics, cells, verdicts, knee, checks
    kit.capture                      the passive HTTP/2 decoder -> typed summaries
    kit.delayline                    pure schedule + asyncio relay + timer
    kit.clients, servers             the processes at both ends of the link
    kit.topology                     starts, measures through and stops those processes
    kit.campaign                     rounds over a topology, appending records
    kit.report                       pure rendering of analysed records
    kit.tools                        bench and soak harnesses
    kit.cli                          the commands; the only place that prints
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = (
    ("kit", "kit.errors", "kit._proto", "kit.quantile"),
    ("kit.plan",),
    ("kit.results",),
    ("kit.protocol",),
    ("kit.analysis",),
    ("kit.capture",),
    ("kit.delayline",),
    ("kit.clients", "servers"),
    ("kit.topology",),
    ("kit.campaign",),
    ("kit.report",),
    ("kit.tools",),
    ("kit.cli",),
)
MAX_TOP_LEVEL_MODULES = 8
PURE = ("kit.plan", "kit.analysis", "kit.report")
# What pure code must not import (at any level of a file, or through the kit modules it
# imports): processes, sockets, event loops, signals, threads. The internals of third-party
# libraries are theirs (tabulate reaches socket through importlib.metadata, rich's Console
# holds a threading lock): they do no IO when imported.
IMPURE = frozenset(
    {
        "asyncio",
        "concurrent",
        "grpc",
        "multiprocessing",
        "psutil",
        "select",
        "selectors",
        "signal",
        "socket",
        "socketserver",
        "subprocess",
        "threading",
        "_thread",
    }
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    files = [*(REPO / "kit").rglob("*.py"), *(REPO / "servers").rglob("*.py")]
    return {_module_name(p): p for p in files if "_proto" not in p.parts}


def _layer(module: str) -> int:
    best, depth = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and prefix.count(".") > depth and not (prefix == "kit" and module != "kit"):
                best, depth = index, prefix.count(".")
    assert best >= 0, f"{module} is in no layer"
    return best


def _ours(name: str) -> bool:
    return name == "kit" or name.startswith(("kit.", "servers"))


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported kit module, at module level?) for every import statement in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, id(node) in top) for a in node.names if _ours(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and _ours(node.module):
            found.append((node.module, id(node) in top))
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for target, _ in _imports(path):
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def test_every_import_points_down_the_layers() -> None:
    upward = [
        f"{name} (layer {_layer(name)}) imports {target} (layer {_layer(target)})"
        for name, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(name)
    ]
    assert upward == []


def test_no_kit_import_hides_inside_a_function() -> None:
    hidden = [
        f"{name}: {target}"
        for name, path in _modules().items()
        for target, at_top in _imports(path)
        if not at_top
    ]
    assert hidden == []


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    # A package importing its own submodules at the top is not a cycle worth reporting
    # unless a submodule imports the package back.
    assert cycles == []


def test_kit_has_few_top_level_modules() -> None:
    top = sorted(p.name for p in (REPO / "kit").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


# --- purity: no process code below the topology, directly or through kit modules ----------


@functools.cache
def _all_imports(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(other modules, kit modules) a file imports anywhere in it: ``from kit.x import y``
    names both ``kit.x`` and ``kit.x.y`` (one of them is a module)."""
    others: set[str] = set()
    ours: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if _ours(node.module):
                names += [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            (ours if _ours(name) else others).add(name)
    return frozenset(others), frozenset(ours)


def _with_packages(name: str, modules: dict[str, Path]) -> set[str]:
    """The modules importing ``name`` runs: it (if it is one) and every package above it."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(modules)


def impure_imports(modules: dict[str, Path], pure: tuple[str, ...] = PURE) -> list[str]:
    """Every pure module that imports an ``IMPURE`` one, and through which kit modules."""
    found = []
    for start in sorted(m for m in modules if m.startswith(tuple(p + "." for p in pure))):
        via: dict[str, str] = {start: ""}
        queue = [start]
        while queue:
            current = queue.pop(0)
            others, ours = _all_imports(modules[current])
            bad = sorted(n for n in others if n.split(".")[0] in IMPURE)
            if bad:
                found.append(f"{start} imports {', '.join(bad)}{_chain(via, current)}")
            for name in sorted(ours):
                for target in sorted(_with_packages(name, modules) - set(via)):
                    via[target] = current
                    queue.append(target)
    return found


def _chain(via: dict[str, str], module: str) -> str:
    path = []
    while via[module]:
        path.append(module)
        module = via[module]
    return f" (via {' -> '.join(reversed(path))})" if path else ""


def test_pure_layers_import_no_process_socket_or_thread_code() -> None:
    assert impure_imports(_modules()) == []


def test_the_purity_check_catches_direct_hidden_and_indirect_imports(tmp_path: Path) -> None:
    files = {
        "kit.plan.direct": "import subprocess\n",
        "kit.analysis.hidden": "def f() -> None:\n    from asyncio import sleep\n",
        "kit.report.indirect": "from kit.results import store\n",
        "kit.results": "",
        "kit.results.store": "import os\nfrom kit import errors\n",
        "kit.errors": "import signal\n",
        "kit.report.clean": "import math\nfrom kit.plan import units\n",
        "kit.plan.units": "import re\n",
    }
    modules = {}
    for name, text in files.items():
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        modules[name] = path
    assert impure_imports(modules) == [
        "kit.analysis.hidden imports asyncio",
        "kit.plan.direct imports subprocess",
        "kit.report.indirect imports signal (via kit.results.store -> kit.errors)",
    ]
