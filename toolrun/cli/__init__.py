"""The ``toolrun`` command group.

Only click and the standard library are imported here and in every
``toolrun.cli.*`` module at import time: pydantic, anyio, yaml, tabulate and
tree-sitter load inside command bodies, so ``--help`` and TAB completion stay
fast. Subcommands are loaded lazily by name.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import sys
from typing import Any

import click

from toolrun import __version__
from toolrun.errors import ExitCode, ToolrunError

# At exit the interpreter collects garbage over every object still alive, several times
# while it tears the modules down: ~40 ms of CPU, a fifth of a one-call `toolrun exec`.
# What is alive then is the modules and what they hold; frozen, the collector skips it
# all (whatever is still referenced is freed as the modules are cleared, as before). The
# handler runs after every handler registered later (atexit runs them in reverse order).
atexit.register(gc.freeze)

#: Set by a command whose process has nothing left to finish once its output is out
#: (``check``, ``exec``): its entry point (``toolrun.__main__.run``, not CliRunner nor the
#: Python API) then ends the process at once, rather than have the interpreter free every
#: record first.
exit_at_once = False
#: What such a command leaves for the end of the process to free, rather than free it
#: as it returns (a check's report: 60 ms for 100,000 calls). One command's at a time.
kept: list[object] = []

# name -> "module:attribute"; each module imports only click at the top.
COMMANDS: dict[str, str] = {
    "check": "toolrun.cli.check:check",
    "completions": "toolrun.cli.completions:completions",
    "exec": "toolrun.cli.exec:exec_",
    "explain-permission": "toolrun.cli.explain:explain_permission",
    "hook": "toolrun.cli.hook:hook",
    "lint": "toolrun.cli.lint:lint",
    "runs": "toolrun.cli.runs:runs",
    "schema": "toolrun.cli.schema:schema",
    "show": "toolrun.cli.runs:show",
    "tools": "toolrun.cli.tools:tools",
    "validate": "toolrun.cli.validate:validate",
}


# name -> the first paragraph of the command's help, so `toolrun --help` and TAB
# completion list the commands without importing them (a test keeps these in step).
SUMMARIES: dict[str, str] = {
    "check": "Decide every call of plans and agent transcripts; execute nothing.",
    "completions": "Print the completion script for SHELL.",
    "exec": "Run plans: validate, decide every call, execute what is allowed.",
    "explain-permission": "Explain how one call is decided: allow, ask or deny, and why.",
    "hook": "Answer an agent's PreToolUse (or PermissionRequest) hook with toolrun's decision.",
    "lint": "Find permission rules that never decide anything or are easy to evade.",
    "runs": "List past runs of the workspace, newest first (by start time).",
    "schema": "Print the JSON Schema of a plan file or a config file.",
    "show": "Show a past run (RUN: its id, a prefix, or `last`), or one call's full output.",
    "tools": "List the registered tools: kind, concurrency- and retry-safety, source.",
    "validate": "Check plan files (and the config) without running anything.",
}


class LazyGroup(click.Group):
    """Imports a subcommand's module only when it is used (not when listed in help).

    It is also the one place where toolrun errors become exit codes.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        from toolrun.cli.streams import open_closed_streams

        open_closed_streams()  # before anything opens a file (see toolrun.cli.streams)
        return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def _listed(self, ctx: click.Context, name: str) -> click.Command | None:
        """The command as a listing shows it: the real one once imported, else a
        stand-in carrying its summary (click shortens both the same way)."""
        if COMMANDS[name].split(":")[0] in sys.modules or name not in SUMMARIES:
            return self.get_command(ctx, name)
        return click.Command(name, help=SUMMARIES[name])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        listed = [(name, self._listed(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, cmd) for name, cmd in listed if cmd is not None and not cmd.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        items: list[Any] = []
        for name in self.list_commands(ctx):
            cmd = self._listed(ctx, name) if name.startswith(incomplete) else None
            if cmd is not None and not cmd.hidden:
                items.append(CompletionItem(name, help=cmd.get_short_help_str()))
        return items + click.Command.shell_complete(self, ctx, incomplete)

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
            from toolrun.cli.logs import annotating, annotation

            problems = getattr(exc, "problems", ())
            if problems and annotating() is not None:  # in CI: on the file and line
                for problem in problems:
                    click.echo(annotation("error", problem), err=True)
            elif message := str(exc):
                click.echo(message, err=True)
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt as exc:  # (SIGTERM and SIGHUP too, where a command says)
            click.echo("interrupted", err=True)
            ctx.exit(int(getattr(exc, "exit_code", ExitCode.INTERRUPTED)))
        except BrokenPipeError:
            # stdout closed (`toolrun check ... | head`): an interrupt, as exec counts it
            _stdout_to_devnull()
            click.echo("toolrun: output failed: Broken pipe; the rest was not printed", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        # Commands are plain functions returning an exit code.
        if isinstance(rv, int) and rv != 0:
            ctx.exit(rv)
        return rv


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered does not fail again (and print "Exception ignored") at exit."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (a test runner's): nothing to flush
        pass


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
