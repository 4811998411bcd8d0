"""The layout shows the flow: every import points down the layer list, none hides in a
function, there are no cycles, and ``kit/`` keeps few top-level modules.

Layers, bottom to top (a module may import its own layer and the ones below it)::

    kit, kit.errors, kit._proto      the version, the one exception tree, generated code
    kit.plan                         units, frozen configs, the plan builder, schedules
    kit.results                      typed, versioned records and their JSON
    kit.topology.protocol            the process protocol, spoken by every process below
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = (
    ("kit", "kit.errors", "kit._proto"),
    ("kit.plan",),
    ("kit.results",),
    ("kit.topology.protocol",),
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
