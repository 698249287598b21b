"""The house's floors: no module imports from a higher layer (read from the source, imports at any depth)."""

from __future__ import annotations

import ast
from pathlib import Path

import lit3r

PACKAGE = Path(lit3r.__file__).parent
LAYERS: dict[str, int] = {
    # 0 ground: the domain models, the one Settings (with the settings of every package nested in it), text helpers
    "models": 0,
    "settings": 0,
    "textutil": 0,
    # 1 papers in; 2 chunks and indexes out
    "corpus": 1,
    "index": 2,
    # 3 the model door and the words sent through it; 4 search machinery
    "llm": 3,
    "prompts": 3,
    "retrieval": 4,
    # 5 answer text, markers and claim checks; 6 the readers and the six tools the planner calls
    "answers": 5,
    "grounding": 5,
    "reading": 6,
    "tools": 6,
    # 7 state, context, planner, nodes; 8 the wiring; 9 the session every surface calls
    "agent": 7,
    "graphs": 8,
    "app": 9,
    # 10 surfaces and measurements, each calling app; 11 the command line, which may start any surface
    "evals": 10,
    "server": 10,
    "serve": 10,
    "web": 10,
    "ui": 10,
    "mcp": 10,
    "platform": 10,
    "cli": 11,
    "demo": 11,
}
"""Each top-level part of lit3r and its floor; a module may import its own floor and the floors below."""


def part_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "lit3r" and len(parts) > 1 else None


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every absolute ``lit3r`` module a file imports (functions and ``TYPE_CHECKING`` blocks included)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)] + [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return [(line, name) for line, name in found if name.startswith("lit3r.")]


def module_name(path: Path) -> str:
    return "lit3r." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")


def upward_imports() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = part_of(module_name(path))
        if own is None:  # lit3r/__init__.py
            continue
        for line, name in imports_of(path):
            other = part_of(name)
            if other not in LAYERS or own not in LAYERS:
                continue
            if LAYERS[other] > LAYERS[own]:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({own}) imports {name} ({other})")
    return problems


def test_every_part_of_the_package_has_a_floor() -> None:
    parts = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir() if not p.name.startswith(("_", "."))}
    parts = {p for p in parts if (PACKAGE / p).is_dir() or (PACKAGE / f"{p}.py").is_file()}
    data_folders = {"presets"}
    assert parts - data_folders <= set(LAYERS), "place a new top-level part of lit3r in LAYERS"


def test_no_module_imports_from_a_higher_layer() -> None:
    assert upward_imports() == []


def test_the_check_finds_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from lit3r.graphs.agent import build_graph\n", encoding="utf-8")
    assert imports_of(module) == [(2, "lit3r.graphs.agent"), (2, "lit3r.graphs.agent.build_graph")]
    assert LAYERS[part_of("lit3r.graphs.agent")] > LAYERS["agent"]
