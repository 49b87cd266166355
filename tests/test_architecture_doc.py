"""docs/architecture.md's picture of the layers is the code's (scripts/architecture.py)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.scripts import load_script

ROOT = Path(__file__).parents[1]


def script() -> ModuleType:
    return load_script("architecture")


def test_the_layer_picture_is_drawn_from_the_current_code() -> None:
    drawn = script().picture()
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert drawn in doc, "the layers changed: run python scripts/architecture.py"


def test_the_picture_names_every_package_in_its_layer() -> None:
    arch = script()
    shown: dict[str, int] = {}
    level = -1
    for line in arch.picture().splitlines():
        lead, bar, cells = line.partition("│")
        if not bar:
            continue
        if lead.strip():
            level = int(lead)
        for cell in cells.split(")"):
            if "(" in cell:
                shown[cell.split("(")[0].strip()] = level
    assert shown == arch.layer_test().LAYERS


def test_the_readme_links_the_architecture_page() -> None:
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text()
