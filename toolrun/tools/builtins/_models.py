"""The built-in tools' pydantic input models: the authority on their JSON schemas,
their messages and every input the fast validators of :mod:`toolrun.tools.inputs` leave
to them. Imported only when one of those is needed (pydantic costs a run's start-up
about 50 ms); each tool module names its own model too."""

from __future__ import annotations

from pydantic import AliasChoices, Field, StrictBool

from toolrun.tools.builtins._grep_core import OutputMode
from toolrun.tools.builtins.bash import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS
from toolrun.tools.builtins.read import DEFAULT_LIMIT
from toolrun.tools.input_model import ToolInput


class BashInput(ToolInput):
    command: str = Field(description="The command to run with `bash -c`.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=(
            f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS})."
        ),
    )
    description: str | None = Field(
        default=None, description="A few words on what the command does (shown to people)."
    )
    dangerouslyDisableSandbox: StrictBool = Field(
        default=False, description="Run outside the sandbox (when the settings allow it)."
    )


class ReadInput(ToolInput):
    file_path: str = Field(description="The file to read (absolute, or relative to the workspace).")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from (1-based; 0 means 1).",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"The number of lines to read (default {DEFAULT_LIMIT}).",
    )


class WriteInput(ToolInput):
    file_path: str = Field(
        description="The file to write (absolute, or relative to the workspace)."
    )
    content: str = Field(description="The complete new content of the file.")


class EditInput(ToolInput):
    file_path: str = Field(
        description="The file to change (absolute, or relative to the workspace)."
    )
    old_string: str = Field(
        description="The exact text to replace. Empty on a missing file creates the file."
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )


class EditSpec(ToolInput):
    old_string: str = Field(description="The exact text to replace.")
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )


class MultiEditInput(ToolInput):
    file_path: str = Field(
        description="The file to change (absolute, or relative to the workspace)."
    )
    edits: list[EditSpec] = Field(
        min_length=1,
        description=(
            "Replacements applied in order, each to the result of the previous one. "
            "If any fails, the file is left untouched."
        ),
    )


class GlobInput(ToolInput):
    pattern: str = Field(
        description="A glob such as '**/*.py' or 'src/*.ts'; '**' matches any number of folders."
    )
    path: str | None = Field(
        default=None,
        description="The folder to search in (default: the workspace).",
    )


class GrepInput(ToolInput):
    pattern: str = Field(description="The regular expression to search for.")
    path: str | None = Field(
        default=None, description="The file or folder to search (default: the workspace)."
    )
    glob: str | None = Field(
        default=None,
        description="Only files matching this glob, e.g. '*.py' or '*.{ts,tsx}' (rg --glob).",
    )
    type: str | None = Field(
        default=None, description="Only files of this type, e.g. 'py', 'js', 'rust' (rg --type)."
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description=(
            "'content': matching lines; 'files_with_matches': paths only; "
            "'count': matching lines per file."
        ),
    )
    case_insensitive: bool = Field(default=False, alias="-i", description="Ignore case.")
    line_numbers: bool = Field(
        default=True, alias="-n", description="Show line numbers (content mode)."
    )
    after: int | None = Field(
        default=None, ge=0, alias="-A", description="Lines of context after each match."
    )
    before: int | None = Field(
        default=None, ge=0, alias="-B", description="Lines of context before each match."
    )
    context: int | None = Field(
        default=None, ge=0, alias="-C", description="Lines of context before and after."
    )
    head_limit: int | None = Field(
        default=None, ge=0, description="Keep only the first N output lines (0: no limit)."
    )
    multiline: bool = Field(
        default=False,
        description="Let the pattern span lines ('.' also matches a newline).",
    )


class LSInput(ToolInput):
    path: str = Field(description="The directory to list (absolute, or relative to the workspace).")
    ignore: list[str] = Field(
        default_factory=list,
        description="Glob patterns of entry names to leave out, e.g. ['*.pyc', 'node_modules'].",
    )


class WebFetchInput(ToolInput):
    url: str = Field(description="The http(s) URL to fetch.")
    prompt: str | None = Field(
        default=None,
        description=(
            "What to extract from the page. Accepted for Claude Code compatibility; "
            "toolrun has no model and returns the page text."
        ),
    )


class ApplyPatchInput(ToolInput):
    patch: str = Field(
        validation_alias=AliasChoices("patch", "input"),
        description=(
            "The patch, from '*** Begin Patch' to '*** End Patch' (Codex format). "
            "Also accepted under Codex's field name 'input'."
        ),
    )

