"""The package's layout holds: no import cycle, nothing imports the layers above it.

Read from the source, like pip-tools' "every module imports on its own" test (which is
``tests/cli/test_meta.py``): every ``import`` and ``from ... import`` of toolrun's
modules, at module level and inside functions (a function-level import is a dependency
too, only a later one), and the names a package exports lazily (``toolrun.lazy.exports``:
a string naming the module, loaded on first use). Imports under ``if TYPE_CHECKING:``
count for the layers (a type is a dependency of the design) but not for cycles (they
never run). The table below is the one docs/architecture.md draws.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import toolrun

PACKAGE = Path(toolrun.__file__).parent

#: Each package's (or top-level module's) layer: a module may import its own layer and
#: those below it. Within a layer only the cycle test applies: the engine's packages
#: (config, permissions, tools, sandbox, reaper, hooks) use each other's parts both ways,
#: module by module without a cycle.
LAYERS: dict[str, int] = {
    # the foundation: exceptions, paths, the YAML/JSON readers, the lazy-export helper,
    # the cache of the code dataclasses generate
    "errors": 0, "lazy": 0, "dataclass_code": 0, "dataclass_init": 0, "paths": 0, "builtin_fields": 0, "boundedjson": 0, "yamlfile": 0, "tempdirs": 0,
    # checking documents; verifier reports (parsers, file matching)
    "validation": 1, "verify": 1,
    # the engine: config, rules and the Bash analysis, tools, jail and sandbox, hooks
    "config": 2, "permissions": 2, "tools": 2, "sandbox": 2, "reaper": 2, "hooks": 2,
    "stored": 2,
    # inputs: plans and transcripts, read into calls of the tools
    "plan": 3,
    # running a plan: partition, decide, run, results, journal
    "execution": 4,
    # what a check decided (the report model), then what shows it
    "report": 5,
    "render": 6,
    "policy": 7,
    # the hook answering an agent live, then the commands as library functions
    "live": 8,
    "commands": 9,
    # the entry points: the Python API and the CLI
    "api": 10, "cli": 10,
    "__main__": 11,
}  # fmt: skip

#: The package root holds only the version at run time (its API names load lazily, from
#: ``toolrun.api``): any layer may import it for ``__version__``; its own imports are
#: checked apart (``test_the_package_root_imports_only_the_lazy_helper``).
ROOT = "toolrun"
ROOT_LAYER = max(LAYERS.values()) + 1


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, package): p for p in package.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:  # (an ``else:`` runs)
                inside.update(id(n) for n in ast.walk(child))
    return inside


def _lazy_exports(node: ast.Call, package: str) -> list[str]:
    """The modules ``exports(__name__, {"name": "module", ...})`` loads on first use."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "exports"):
        return []
    if len(node.args) < 2 or not isinstance(node.args[1], ast.Dict):
        return []
    return [
        f"{package}.{value.value}"
        for value in node.args[1].values
        if isinstance(value, ast.Constant) and isinstance(value.value, str)
    ]


def imports(
    name: str, path: Path, known: Mapping[str, Path], top: str = ROOT
) -> Iterator[tuple[str, bool]]:
    """(imported module of the package, under TYPE_CHECKING) for each import in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]  # fmt: skip
        elif isinstance(node, ast.Call):
            targets = _lazy_exports(node, name)
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith(top + ".") and target != name:
                yield target, id(node) in typing_only


@functools.cache
def graph(*, typing: bool, package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``typing``: TYPE_CHECKING ones too).
    The package root is never a target: at run time it holds only the version."""
    known = modules(package)
    top = package.name
    return {
        name: {t for t, only_types in imports(name, path, known, top) if typing or not only_types}
        for name, path in known.items()
    }


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def layer(module: str, layers: Mapping[str, int] = LAYERS) -> int:
    """The layer of a module (KeyError: a package the table does not place)."""
    parts = module.split(".")
    return layers[parts[1]] if len(parts) > 1 else ROOT_LAYER


def upward(edges: Mapping[str, set[str]], layers: Mapping[str, int] = LAYERS) -> list[str]:
    """Each import of a module of a higher layer, as ``a imports b``; the package root
    is left out as a target (it holds only the version at run time)."""
    return [
        f"{a} imports {b}"
        for a, targets in sorted(edges.items())
        for b in sorted(targets)
        if "." in b and layer(b, layers) > layer(a, layers)
    ]


# -- the package ----------------------------------------------------------------------------


def test_every_package_has_a_layer() -> None:
    packages = {m.split(".")[1] for m in modules() if "." in m}
    assert sorted(packages - LAYERS.keys()) == []
    assert sorted(LAYERS.keys() - packages) == []  # no stale entry


def test_no_import_cycles() -> None:
    assert cycles(graph(typing=False)) == []


def test_no_upward_imports() -> None:
    assert upward(graph(typing=True)) == []


def test_the_package_root_imports_only_the_lazy_helper() -> None:
    # what every layer pays for ``from toolrun import __version__``: nothing at import
    # (not even typing); toolrun.lazy and toolrun.api only on first use of check, decide, run
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    typing_only = _type_checking_nodes(tree)
    eager = [ast.unparse(n) for n in ast.walk(tree)
             if isinstance(n, ast.ImportFrom) and id(n) not in typing_only
             and n.module != "__future__"]  # fmt: skip
    assert eager == ["from toolrun.lazy import exports"]  # inside __getattr__
    assert not [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
                and n.module != "__future__"]  # fmt: skip
    assert graph(typing=False)[ROOT] == {"toolrun.lazy"}  # (api: by name, on first use)


# -- the checker itself, on made-up graphs and sources ----------------------------------------


def test_the_cycle_finder_finds_each_cycle_and_only_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "a"}}) == [["a", "b"], ["c", "d"]]
    # a diamond is no cycle; a target missing from the keys is a leaf
    assert cycles({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}}) == []
    # a long chain closing on its start: one component, however deep (iterative)
    chain = {f"m{i}": {f"m{i + 1}"} for i in range(5000)} | {"m5000": {"m0"}}
    assert [len(c) for c in cycles(chain)] == [5001]


def test_the_upward_finder_names_each_import_of_a_higher_layer() -> None:
    layers = {"low": 0, "mid": 1, "high": 2}
    edges = {
        "p.low.a": {"p.mid.b", "p.low.c", "p"},  # up one layer; its own; the root
        "p.mid.b": {"p.low.a"},
        "p.high.d": {"p.mid.b"},
        "p.mid.e": {"p.high.d"},  # up
    }
    assert upward(edges, layers) == ["p.low.a imports p.mid.b", "p.mid.e imports p.high.d"]
    with pytest.raises(KeyError):
        upward({"p.nowhere.x": {"p.low.a"}}, layers)


def _package(tmp_path: Path, files: Mapping[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_imports_in_functions_under_type_checking_and_lazy_exports_are_read(
    tmp_path: Path,
) -> None:
    root = _package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": (
            "from typing import TYPE_CHECKING\n"
            "from pkg.lazy import exports\n"
            "if TYPE_CHECKING:\n    from pkg.low.sub import thing\n"
            "__getattr__ = exports(__name__, {'thing': 'sub'})\n"
        ),
        "low/sub.py": "def f():\n    from ..high import top  # noqa\n",
        "lazy.py": "def exports(*a): ...\n",
        "high/__init__.py": "import pkg.low.sub\nfrom . import mod\n",
        "high/mod.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg.low import sub\n"
            "else:\n    import pkg.lazy\n"
            "class C:\n    def m(self):\n        import pkg.high\n"
        ),
    })  # fmt: skip
    runtime = graph(typing=False, package=root)
    assert runtime["pkg.low"] == {"pkg.lazy", "pkg.low.sub"}  # the lazy export, not the type
    assert runtime["pkg.low.sub"] == {"pkg.high"}  # inside a function, relative
    assert runtime["pkg.high"] == {"pkg.low.sub", "pkg.high.mod"}
    assert runtime["pkg.high.mod"] == {"pkg.lazy", "pkg.high"}  # the else: branch runs
    typed = graph(typing=True, package=root)
    assert typed["pkg.high.mod"] == {"pkg.low.sub", "pkg.lazy", "pkg.high"}
    # imports in a function and in a method close cycles; an upward one is named
    assert cycles(runtime) == [["pkg.high", "pkg.high.mod", "pkg.low.sub"]]
    layers = {"lazy": 0, "low": 0, "high": 1}
    assert upward(typed, layers) == ["pkg.low.sub imports pkg.high"]


#: A module longer than this says in its docstring why it is kept whole (issue 28).
MAX_LINES = 600


def test_a_long_module_says_why_it_is_kept_whole() -> None:
    unexplained = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_LINES:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if "Kept in one module" not in doc:
                unexplained.append(f"{name} ({len(text.splitlines())} lines)")
    assert unexplained == []


#: The Bash analyser and what stands on it: program knowledge never imports these.
ANALYSER = {
    "toolrun.permissions.bash", "toolrun.permissions.analysis", "toolrun.permissions.resolver",
    "toolrun.permissions.readonly", "toolrun.permissions.bash_subjects",
    "toolrun.permissions.shellpaths", "toolrun.permissions.treewords",
}  # fmt: skip


def test_program_knowledge_stands_on_the_word_layer_not_the_analyser() -> None:
    edges = graph(typing=True)
    back = sorted(
        f"{name} -> {target}"
        for name, targets in edges.items()
        if name.startswith("toolrun.permissions.programs")
        for target in targets & ANALYSER
    )
    assert back == []
