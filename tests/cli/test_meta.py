"""Guards that keep the CLI fast, documented and importable."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

import toolrun
from toolrun.cli import COMMANDS, main
from toolrun.cli.options import MODES
from toolrun.config.models import PERMISSION_MODES

HEAVY = (
    "pydantic", "anyio", "yaml", "tabulate", "tree_sitter",
    # issue 15: the MCP SDK and the converters stay out of start-up too
    "mcp", "httpx2", "pathspec", "markdownify", "html2text", "bs4",
)


def all_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(toolrun.__path__, prefix="toolrun.")) + [
        "toolrun"
    ]


def test_importing_the_cli_loads_no_heavy_library() -> None:
    code = f"import sys, toolrun.cli\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


def test_every_cli_module_is_light_too() -> None:
    cli_modules = sorted({target.split(":")[0] for target in COMMANDS.values()})
    code = (
        "import sys, importlib\n"
        f"for m in {cli_modules!r}: importlib.import_module(m)\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


@pytest.mark.parametrize("module", all_modules())
def test_every_module_imports_on_its_own(module: str) -> None:
    subprocess.run(
        [sys.executable, "-W", "error", "-c", f"import {module}"], check=True, capture_output=True
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(runner: CliRunner, name: str) -> None:
    result = runner.invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    command = main.get_command(click.Context(main), name)
    assert command is not None and command.help, f"{name} has no help text"
    assert f"Usage: main {name}" in result.stdout or f"Usage: toolrun {name}" in result.stdout


def test_group_help_lists_every_command(runner: CliRunner) -> None:
    result = runner.invoke(main, ["--help"], prog_name="toolrun")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.stdout


def test_version(runner: CliRunner) -> None:
    result = runner.invoke(main, ["--version"], prog_name="toolrun")
    assert result.stdout == f"toolrun, version {toolrun.__version__}\n"


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "toolrun", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stdout == f"toolrun, version {toolrun.__version__}\n"


def test_cli_mode_choices_match_the_config_model() -> None:
    assert MODES == PERMISSION_MODES


def test_unknown_command_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(main, ["frobnicate"])
    assert result.exit_code == 2
    assert "No such command 'frobnicate'" in result.stderr


def test_every_module_is_importable_in_process() -> None:
    for module in all_modules():
        importlib.import_module(module)
