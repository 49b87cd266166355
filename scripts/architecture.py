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
    """The layers, top down, each package with its modules (counted, so the picture changes
    with the layout, not with every edit), and the comment the layer table gives it."""
    test = layer_test()
    layers: dict[str, int] = test.LAYERS
    modules: Counter[str] = Counter(package_of(name) for name in test.modules())
    by_layer: dict[int, list[str]] = defaultdict(list)
    for package, layer in layers.items():
        if modules[package]:
            by_layer[layer].append(package)
    width = max(len(_cell(p, modules[p])) for ps in by_layer.values() for p in ps)
    out = ["```", "layer"]
    levels = sorted(by_layer, reverse=True)
    for i, level in enumerate(levels):
        cells = [
            _cell(p, modules[p]) for p in sorted(by_layer[level], key=lambda p: (-modules[p], p))
        ]
        rows = [cells[j : j + 3] for j in range(0, len(cells), 3)]
        for k, row in enumerate(rows):
            lead = f"{level:>4} │ " if k == 0 else "     │ "
            out.append(lead + "  ".join(c.ljust(width) for c in row).rstrip())
        if i + 1 < len(levels):
            out.append("     ▼")
    out.append("```")
    return "\n".join(out) + "\n"


def _cell(package: str, count: int) -> str:
    return f"{package} ({count})"


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
