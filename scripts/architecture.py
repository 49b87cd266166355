"""Draw the package's layers from its code, for docs/architecture.md (or check the drawing).

The layers are those ``tests/test_layers.py`` enforces (its ``LAYERS`` table: a module may
import its own layer and those below); the modules, their lines and the imports between
the layers are counted from the source, every ``import`` at module and function level.
``python scripts/architecture.py`` rewrites the block between ``<!-- layers -->`` and
``<!-- /layers -->`` in docs/architecture.md; ``--check`` only compares (a test does too).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
START, END = "<!-- layers -->\n", "<!-- /layers -->"


def layer_test() -> ModuleType:
    """tests/test_layers.py, for its LAYERS table and its import reader."""
    spec = importlib.util.spec_from_file_location("test_layers", ROOT / "tests" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["test_layers"] = module
    spec.loader.exec_module(module)
    return module


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "toolrun"


def picture() -> str:
    """The layers, top down: each package with its modules and lines, and how many imports
    each layer makes of the layers below it."""
    test = layer_test()
    layers: dict[str, int] = test.LAYERS
    found = test.modules()
    graph = test.graph(typing=True)
    modules: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    for name, path in found.items():
        package = package_of(name)
        modules[package] += 1
        lines[package] += len(path.read_text(encoding="utf-8").splitlines())
    down: Counter[tuple[int, int]] = Counter()
    for name, targets in graph.items():
        for target in targets:
            a, b = layers.get(package_of(name)), layers.get(package_of(target))
            if a is not None and b is not None and a != b:
                down[(a, b)] += 1
    by_layer: dict[int, list[str]] = defaultdict(list)
    for package, layer in layers.items():
        if modules[package]:
            by_layer[layer].append(package)
    out = ["```"]
    levels = sorted(by_layer, reverse=True)
    for i, level in enumerate(levels):
        cells = [
            f"{p} ({modules[p]} {'module' if modules[p] == 1 else 'modules'}, {lines[p]:,} lines)"
            for p in sorted(by_layer[level], key=lambda p: (-lines[p], p))
        ]
        out.append(f"{level:>2} │ " + cells[0])
        out.extend(f"   │ {cell}" for cell in cells[1:])
        if i + 1 < len(levels):
            below = sum(n for (a, b), n in down.items() if a == level and b < level)
            out.append(f"   ▼ {below} imports of the layers below")
    out.append("```")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a drift")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = head + START + picture() + END + tail
    if args.check:
        if new != text:
            sys.stderr.write("docs/architecture.md: the layer picture differs from the code\n")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
