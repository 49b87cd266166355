"""The ``toolrun`` command group.

Only click and the standard library are imported here and in every
``toolrun.cli.*`` module at import time: pydantic, anyio, yaml, tabulate and
tree-sitter load inside command bodies, so ``--help`` and TAB completion stay
fast. Subcommands are loaded lazily by name.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from toolrun import __version__
from toolrun.errors import ExitCode, ToolrunError

# name -> "module:attribute"; each module imports only click at the top.
COMMANDS: dict[str, str] = {
    "check": "toolrun.cli.check:check",
    "completions": "toolrun.cli.completions:completions",
    "exec": "toolrun.cli.exec:exec_",
    "explain-permission": "toolrun.cli.explain:explain_permission",
    "lint": "toolrun.cli.lint:lint",
    "runs": "toolrun.cli.runs:runs",
    "schema": "toolrun.cli.schema:schema",
    "show": "toolrun.cli.runs:show",
    "tools": "toolrun.cli.tools:tools",
    "validate": "toolrun.cli.validate:validate",
}


class LazyGroup(click.Group):
    """Imports a subcommand's module only when it is used (or listed in help).

    It is also the one place where toolrun errors become exit codes.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        from toolrun.cli.logs import warnings_to_stderr

        with warnings_to_stderr():
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            rv = super().invoke(ctx)
        except ToolrunError as exc:
            message = str(exc)
            if message:
                click.echo(message, err=True)
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        # Commands are plain functions returning an exit code.
        if isinstance(rv, int) and rv != 0:
            ctx.exit(rv)
        return rv


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="toolrun")
def main() -> None:
    """Run, check and explain plans of AI-agent tool calls.

    A plan is a YAML or JSON file of tool calls (Bash, Read, Edit, ...).
    toolrun validates it, decides every call with Claude Code-compatible
    permission rules, hooks and a permission mode, and runs what is allowed.
    """
    # Text that is not valid UTF-8 (a directory's name, a program's output) is printed
    # as `\udcXX` escapes rather than failing the output midway.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
