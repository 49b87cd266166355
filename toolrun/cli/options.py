"""Options shared by several commands, spelled the same everywhere (pip-tools style)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from toolrun.config.models import Config

F = TypeVar("F", bound=Callable[..., Any])

# Kept in sync with toolrun.config.models.PERMISSION_MODES (a test checks it);
# repeated here so that the CLI does not import the config package at start-up.
MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
#: ``auto`` loads and is decided as ``default`` (toolrun runs no classifier; said once)
MODE_CHOICES = (*MODES, "auto")


def sources_line(sources: tuple[str, ...] | list[str]) -> str:
    """``sources: toolrun.yaml, .claude/settings.json``: what a deciding command read."""
    return "sources: " + (", ".join(sources) if sources else "none (built-in defaults)")


def config_file_option(
    help: str = "toolrun.yaml to use instead of searching the workspace and its parents "
    "[env: TOOLRUN_CONFIG].",
) -> Callable[[F], F]:
    """``--config FILE`` (``$TOOLRUN_CONFIG``): the toolrun.yaml, instead of searching for one."""
    return click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="TOOLRUN_CONFIG",
        help=help,
    )


def settings_option(
    help: str = "Extra settings file in Claude Code's JSON shape; repeatable, highest precedence.",
) -> Callable[[F], F]:
    """``--settings FILE``, repeatable: settings files in Claude Code's shape."""
    return click.option(
        "--settings",
        "settings_files",
        type=click.Path(dir_okay=False, path_type=Path),
        multiple=True,
        help=help,
    )


def config_options(f: F) -> F:
    """``--config``, ``--settings``, ``--workspace``, ``--mode``: where rules and hooks come from."""
    decorators = [
        config_file_option(),
        settings_option(),
        click.option(
            "--workspace",
            type=click.Path(file_okay=False, path_type=Path),
            default=".",
            show_default=True,
            help="The workspace: relative paths, the permission boundary and config discovery "
            "start here.",
        ),
        click.option(
            "--mode",
            type=click.Choice(MODE_CHOICES),
            default=None,
            help="Permission mode; overrides permissions.defaultMode.",
        ),
    ]
    for decorator in reversed(decorators):
        f = decorator(f)
    return f


# Kept in sync with toolrun.plan.formats.FORMATS (a test checks it); repeated here so that
# the CLI does not import the plan package at start-up.
INPUT_FORMATS = (
    "toolrun", "jsonl", "codex", "codex-exec", "claude-stream", "claude-code", "chat-jsonl",
    "gemini", "openai-responses", "anthropic", "openai",
)  # fmt: skip


def _absolute_dir(value: str | None) -> str | None:
    """--transcript-cwd names a directory of the machine the session ran on: absolute (a
    Windows path too, for a session recorded there)."""
    if value is None or value.startswith("/"):
        return value
    from toolrun.plan.rebase import windows_absolute

    if not windows_absolute(value):
        raise click.BadParameter(
            f"{value!r} is not an absolute path (the directory the session was recorded in)"
        )
    return value


def input_options(f: F) -> F:
    """``--from``, ``--transcript-cwd``, ``--allow-empty``: how every input is read, the same
    in exec, validate and check."""
    decorators = [
        click.option(
            "--from",
            "source_format",
            type=click.Choice(INPUT_FORMATS),
            default=None,
            help="Read every input as this format [default: detect each one from its content].",
        ),
        click.option(
            "--transcript-cwd",
            metavar="DIR",
            default=None,
            help="The directory the transcripts were recorded in: absolute paths under it are "
            "decided as the same paths under --workspace [default: the cwd a transcript "
            "records].",
            callback=lambda _ctx, _param, value: _absolute_dir(value),
        ),
        click.option(
            "--allow-empty",
            is_flag=True,
            help="Accept an input that yields no call (records without a call, an empty "
            "file, a format toolrun does not read) instead of failing it (exit 3).",
        ),
    ]
    for decorator in reversed(decorators):
        f = decorator(f)
    return f


def policy_options(f: F) -> F:
    """``--strict`` and ``--managed-settings``: how strictly the config is read, and the
    managed settings file that overrides every other source."""
    f = click.option(
        "--managed-settings",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="TOOLRUN_MANAGED_SETTINGS",
        default=None,
        help="Managed settings file (Claude Code's shape) above every other source: its "
        "disableBypassPermissionsMode, allowManagedPermissionRulesOnly and "
        "allowManagedHooksOnly are enforced [env: TOOLRUN_MANAGED_SETTINGS].",
    )(f)
    return click.option(
        "--strict",
        is_flag=True,
        help="Unknown config keys and other config warnings are errors (exit 3); "
        "also toolrun.strict: true. In check, a session log's unreadable records (not JSON "
        "objects, a torn last line, unknown record types) make it invalid too.",
    )(f)


def format_option(choices: tuple[str, ...]) -> Callable[[F], F]:
    """``--format``: the default is chosen at run time (a table only on a terminal)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=None,
        help="Output format [default: table on a terminal, text otherwise].",
    )


def text_or_json_option(help: str) -> Callable[[F], F]:
    """``--format text|json`` (default text) for the commands that answer with one report."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help=help,
    )


class JobsType(click.ParamType):  # type: ignore[type-arg]
    """A number of processes (1 or more), or ``auto`` (None): the command's own choice."""

    name = "N|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, int):
            return value
        if str(value).strip().lower() == "auto":
            return None
        try:
            jobs = int(value)
        except ValueError:
            jobs = 0
        if jobs < 1:
            self.fail(f"{value!r} is not a number of processes (1 or more) or 'auto'", param, ctx)
        return jobs


def jobs_option(help: str) -> Callable[[F], F]:
    return click.option(
        "--jobs", type=click.IntRange(min=1), default=1, show_default=True, help=help
    )


#: Kept in sync with toolrun.config.models.ENFORCE (a test checks it).
ENFORCE = ("auto", "required", "off")

enforce_option = click.option(
    "--enforce",
    type=click.Choice(ENFORCE),
    default=None,
    help="Where a Bash call allowed on toolrun's own judgement runs: auto (a read-only or "
    "workspace jail where one can be made), required (such a call asks when no jail can "
    "hold it), off (never jailed); overrides toolrun.enforce.",
)

problems_option = click.option(
    "--problems",
    is_flag=True,
    help="Show only the calls that are denied, ask or fail (text and table; the recap "
    "still counts every call).",
)

no_hooks_option = click.option(
    "--no-hooks", is_flag=True, help="Do not run hooks (PreToolUse, PostToolUse, ...)."
)


def load_config_from_options(
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    workspace: Path,
    mode: str | None,
    enforce: str | None = None,
) -> Config:
    from toolrun.config import load_config

    return load_config(
        workspace=workspace,
        config_file=config_file,
        settings_files=settings_files,
        mode=mode,
        enforce=enforce,
    )
