"""Regenerate the committed completion scripts and JSON Schemas.

Run after changing commands, options, tools or file formats:
    .venv/bin/python scripts/regenerate.py
Tests fail while the committed files differ from what this writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolrun.cli.completions import SHELLS, completion_script
from toolrun.commands.schema import config_schema, plan_schema

ROOT = Path(__file__).resolve().parent.parent
COMPLETION_FILES = {"bash": "toolrun.bash", "zsh": "_toolrun", "fish": "toolrun.fish"}


def main() -> None:
    for shell in SHELLS:
        (ROOT / "completions" / COMPLETION_FILES[shell]).write_text(completion_script(shell))
    for name, schema in (("plan", plan_schema()), ("config", config_schema())):
        (ROOT / "schemas" / f"{name}.schema.json").write_text(json.dumps(schema, indent=2) + "\n")


if __name__ == "__main__":
    main()
