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


def test_help_lists_the_commands_without_importing_them() -> None:
    """--help and TAB completion of command names list them from their summaries."""
    code = (
        "import sys\nfrom toolrun.cli import main, COMMANDS\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "import click\nctx = click.Context(main, info_name='toolrun')\n"
        "print([i.value for i in main.shell_complete(ctx, 'ex')])\n"
        "mods = {t.split(':')[0] for t in COMMANDS.values()}\n"
        "print(' '.join(sorted(m for m in mods if m in sys.modules)), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr.strip() == ""
    assert "explain-permission  Explain how one call is decided" in proc.stdout
    assert "['exec', 'explain-permission']" in proc.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_the_first_paragraph_of_the_commands_help(name: str) -> None:
    from toolrun.cli import SUMMARIES

    command = main.get_command(click.Context(main), name)
    assert command is not None and command.help is not None
    first = " ".join(command.help.partition("\n\n")[0].split())
    assert SUMMARIES[name] == first
    for limit in (20, 45, 80):
        stand_in = click.Command(name, help=SUMMARIES[name])
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_help_and_completion_read_as_clicks_own() -> None:
    """The listing from summaries is byte for byte what click prints from the commands."""
    ours = CliRunner().invoke(main, ["--help"], terminal_width=100).stdout
    ctx = click.Context(main, info_name="toolrun", terminal_width=100)
    formatter = ctx.make_formatter()
    click.Group.format_commands(main, ctx, formatter)  # imports every command
    assert formatter.getvalue() in ours
    ours_items = [(i.value, i.help) for i in main.shell_complete(ctx, "ex")]
    clicks = [(i.value, i.help) for i in click.Group.shell_complete(main, ctx, "ex")]
    assert ours_items == clicks and [v for v, _ in ours_items][:2] == ["exec", "explain-permission"]
