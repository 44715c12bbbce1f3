"""The layers: imports between the package's units point one way (DESIGN sections 2 and 8).

Every module of ``llm_rx`` is parsed (not imported): ``import`` and ``from ... import``
statements anywhere in it (inside functions and under ``TYPE_CHECKING`` too, relative ones
resolved), and the ``_LAZY`` / ``_WHERE`` tables a package's ``__getattr__`` imports from.
A unit is a module at the package root (``errors``, ``cli``) or a subpackage (``fold``,
``wire``, ``speed``). The root ``__init__`` is the public
table: it names every layer and imports none of them when the package is imported, so it
is left out; a name imported from it counts as an import of the module its ``_LAZY`` table
names.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import llm_rx

PACKAGE = Path(llm_rx.__file__).resolve().parent

#: The units from the bottom up: a unit imports only units before it. Read from the code:
#: the encoders above ``native`` (they write the Responses object ``to_native`` writes, and
#: ``to_message`` uses both); the operators above the encoders (``encode()``).
ORDER = [
    # helpers that import nothing of the package
    "_lazy",
    "_links",
    "_extras",
    "data",
    # the algebra
    "errors",
    "response",
    "events",
    # pure: events -> Response, the plain wire formats, the speculation over them
    "fold",
    "wire",
    "speed",
    # I/O in
    "sources",
    # writing a reply: non-stream bodies, then streams (and request turns)
    "native",
    "encoders",
    # Rx
    "operators",
    # I/O out
    "sinks",
    # the blocking and async facades
    "read",
    # the emulator, the command, the test helpers
    "serve",
    "_cli_io",
    "cli",
    "_console",
    "__main__",
    "_pytest_plugin",
    "testing",
]

#: What the wire formats may never import.
ABOVE_WIRE = ("sources", "operators", "sinks", "encoders", "serve", "read", "speed")


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        found[".".join(parts)] = (path, package)
    return found


def _absolute(base: str, level: int, name: str) -> str:
    """``name`` (``level`` dots before it) imported from a module of package ``base``."""
    parts = base.split(".")
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def _imports(name: str, path: Path, package: bool, modules: dict[str, tuple[Path, bool]],
             lazy: dict[str, str]) -> list[tuple[str, int]]:
    """The package's modules ``name`` imports, each with the line that does."""
    base = name if package else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = (_absolute(base, node.level, node.module or "") if node.level
                      else node.module or "")
            for alias in node.names:
                child = f"{module}.{alias.name}"
                if child in modules:
                    found.append((child, node.lineno))
                elif module == "llm_rx" and alias.name in lazy:
                    found.append((lazy[alias.name], node.lineno))
                else:
                    found.append((module, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
            node.value, ast.Dict
        ) and any(
            isinstance(target, ast.Name) and target.id in ("_LAZY", "_WHERE")
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        ):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    where = value.value
                    if where.startswith("."):
                        dots = len(where) - len(where.lstrip("."))
                        where = _absolute(base, dots, where[dots:])
                    elif not where.startswith("llm_rx."):
                        where = f"{base}.{where}"
                    found.append((where, value.lineno))
    return [(module, line) for module, line in found if module.split(".")[0] == "llm_rx"]


def _root_lazy() -> dict[str, str]:
    """The root package's ``_LAZY``: public name -> the module it lives in."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and (
            node.target.id == "_LAZY"
        ) and isinstance(node.value, ast.Dict):
            return {
                key.value: "llm_rx" + value.value
                for key, value in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant)
            }
    raise AssertionError("llm_rx/__init__.py has no _LAZY table")


def unit(module: str) -> str:
    """The unit a module belongs to (``llm_rx`` for the root ``__init__``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "llm_rx"


def edges() -> dict[tuple[str, str], set[str]]:
    """(importer, imported) unit -> where (``module:line -> module``)."""
    modules = _modules()
    lazy = _root_lazy()
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name, (path, package) in modules.items():
        if name == "llm_rx":
            continue
        for module, line in _imports(name, path, package, modules, lazy):
            pair = (unit(name), unit(module))
            if pair[1] != "llm_rx" and pair[0] != pair[1]:
                found[pair].add(f"{name}:{line} -> {module}")
    return found


def cycles(graph: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one unit (Tarjan's algorithm)."""
    following: dict[str, set[str]] = defaultdict(set)
    for importer, imported in graph:
        following[importer].add(imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(following[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted({u for pair in graph for u in pair}):
        if node not in index:
            visit(node)
    return groups


def test_every_unit_has_a_place_in_the_order() -> None:
    units = {unit(name) for name in _modules()} - {"llm_rx"}
    assert units - set(ORDER) == set()
    assert len(ORDER) == len(set(ORDER))


def test_every_folder_of_modules_is_a_package() -> None:
    """A folder without ``__init__.py`` imports (a namespace package) but is no package to
    the site's reference or to some packaging tools."""
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    assert sorted(str(f.relative_to(PACKAGE)) for f in folders
                  if not (f / "__init__.py").exists()) == []


def test_no_cycle_between_units() -> None:
    assert cycles(edges()) == []


def test_imports_point_down_the_order() -> None:
    rank = {name: place for place, name in enumerate(ORDER)}
    upward = {
        f"{importer} -> {imported}": sorted(where)
        for (importer, imported), where in edges().items()
        if rank.get(imported, -1) > rank.get(importer, -1)
    }
    assert upward == {}


def test_the_wire_formats_import_nothing_above_them() -> None:
    above = {
        imported: sorted(where)
        for (importer, imported), where in edges().items()
        if importer == "wire" and imported in ABOVE_WIRE
    }
    assert above == {}


def test_only_the_sources_import_the_speculation() -> None:
    # (the switch is read where a decoder is made, once a stream: DESIGN section 8)
    importers = {
        importer: sorted(where)
        for (importer, imported), where in edges().items()
        if imported == "speed" and importer not in ("sources", "speed")
    }
    assert importers == {}


def test_the_analysis_sees_each_kind_of_import() -> None:
    """The parser resolves what the checks rely on: relative imports at each depth, imports
    inside functions, under ``TYPE_CHECKING``, and from a lazy table."""
    modules = _modules()
    lazy = _root_lazy()
    assert lazy["ResponseBuilder"] == "llm_rx.fold.builder"
    source = PACKAGE / "testing.py"
    found = {module for module, _ in _imports("llm_rx.testing", source, False, modules, lazy)}
    assert "llm_rx._pytest_plugin" in found  # (a plain relative import)
    assert "llm_rx.serve._verdict" in found  # (under TYPE_CHECKING, and in the lazy table)
    plugin = PACKAGE / "_pytest_plugin.py"
    found = {module for module, _ in
             _imports("llm_rx._pytest_plugin", plugin, False, modules, lazy)}
    assert "llm_rx.serve._server" in found  # (inside a function)
    assert cycles({("a", "b"): set(), ("b", "c"): set(), ("c", "a"): set(),
                   ("c", "d"): set()}) == [
        ["a", "b", "c"]]


def test_no_module_is_over_400_lines() -> None:
    # (small modules: one that grows past this is split by what it does)
    long = {str(path.relative_to(PACKAGE)): lines for path in PACKAGE.rglob("*.py")
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}
