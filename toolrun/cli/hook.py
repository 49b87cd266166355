"""``toolrun hook``: toolrun's engine as an agent's PreToolUse / BeforeTool hook.

Only click and the standard library at import time: this runs on every tool call of a
session (the engine loads in :mod:`toolrun.live.hook`, or stays warm in a server).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from toolrun.cli.options import config_file_option, settings_option


class _HookCommand(click.Command):
    """A bad option is exit 1 (a non-blocking hook error), never click's 2: an agent
    reads exit 2 as "block this call", which a typo in settings.json must not mean."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            from toolrun.errors import HookInputError

            raise HookInputError(f"toolrun hook: {exc.format_message()}") from None


@click.command(name="hook", cls=_HookCommand)
@click.option(
    "--format",
    "protocol",
    type=click.Choice(["claude", "gemini"]),
    default=None,
    help="The agent's hook protocol [default: from the payload: Gemini CLI for "
    "hook_event_name BeforeTool, else Claude Code].",
)
@click.option(
    "--fail",
    type=click.Choice(["open", "closed"]),
    default="open",
    show_default=True,
    help="When toolrun itself fails (bad payload, invalid config): open exits 1 (the agent "
    "goes on), closed answers deny.",
)
@click.option(
    "--allow-read-only",
    is_flag=True,
    help="Also answer allow for toolrun's read-only set (read-only Bash, reads inside the "
    "workspace); by default only an allow rule's allow is answered.",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The workspace [default: $CLAUDE_PROJECT_DIR / $GEMINI_PROJECT_DIR, else the "
    "payload's cwd].",
)
@config_file_option("toolrun.yaml to use instead of searching the workspace [env: TOOLRUN_CONFIG].")
@settings_option("Extra settings file in Claude Code's JSON shape; repeatable.")
@click.option("--no-journal", is_flag=True, help="Do not journal the decision.")
def hook(
    protocol: str | None,
    fail: str,
    allow_read_only: bool,
    workspace: Path | None,
    config_file: Path | None,
    settings_files: tuple[Path, ...],
    no_journal: bool,
) -> int:
    """Answer an agent's PreToolUse (or PermissionRequest) hook with toolrun's decision.

    \b
    Reads Claude Code's hook JSON on stdin (or Gemini CLI's BeforeTool), decides
    the call with the workspace's rules, the session's mode, protected paths and
    toolrun's Bash analysis, and prints the agent's JSON: deny and ask always,
    allow when an allow rule allowed it (--allow-read-only: also the read-only
    set); otherwise nothing, and the agent decides. Each decision is journalled
    in the run `session-<session_id>` (`toolrun runs`, `toolrun show`); under
    SessionEnd it ends that run. Exit 0 with an answer; 1 (with a message) when
    toolrun cannot decide, or a deny with --fail closed. Never 2.

    \b
    .claude/settings.json:
      {"hooks": {
        "PreToolUse": [{"matcher": "*",
          "hooks": [{"type": "command", "command": "toolrun hook"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "toolrun hook"}]}]}}
    """
    from toolrun.live.client import answer
    from toolrun.live.hook import HookOptions

    options = HookOptions(
        protocol=protocol,  # type: ignore[arg-type]
        fail=fail,  # type: ignore[arg-type]
        allow_read_only=allow_read_only,
        workspace=workspace,
        config_file=config_file,
        settings_files=settings_files,
        journal=not no_journal,
    )
    from toolrun.live.client import MAX_PAYLOAD_BYTES

    raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    if len(raw) > MAX_PAYLOAD_BYTES:
        from toolrun.live.hook import failure

        message = f"toolrun hook: the payload is over {MAX_PAYLOAD_BYTES} bytes"
        event = "BeforeTool" if protocol == "gemini" else "PreToolUse"
        reply = failure(message, options, protocol or "claude", event)
    else:
        reply = answer(raw, options)
    if reply.stdout:
        sys.stdout.write(reply.stdout)
        sys.stdout.flush()
    if reply.stderr:
        sys.stderr.write(reply.stderr)
    return reply.exit_code

