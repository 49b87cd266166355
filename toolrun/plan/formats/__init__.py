"""The inputs toolrun reads besides its own plans: one module per format, all listed here.

Detection walks :data:`REGISTRY` in order. A JSON Lines file is read as the format of the
first record a format recognises (each module's ``recognise`` looks at one record); a JSON
or YAML document as the first format whose ``recognise`` takes the whole document, a
toolrun plan when none does. Each module's ``load`` builds the calls
(:class:`toolrun.plan.importers._Builder`); ``--from NAME`` skips detection.

A format module is imported only when a file may be of it: detection of a toolrun plan
(``turns`` or ``calls``) imports none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, Literal


@dataclass(frozen=True, slots=True)
class Format:
    """One input format: its ``--from`` name, its module, what it reads and an example."""

    name: str
    module: str  # under toolrun.plan.formats
    shape: Literal["lines", "document", "plan"]
    title: str  # for ``check --help``
    example: str

    def load_module(self) -> ModuleType:
        return importlib.import_module(f"toolrun.plan.formats.{self.module}")


#: Every format, in the order detection tries them (a call stream's "tool" key first; the
#: shapes that name themselves before the looser ones).
REGISTRY: Final = (
    Format("toolrun", "", "plan", "a toolrun plan, YAML or JSON", "toolrun check 'plans/**/*.yaml'"),
    Format(
        "jsonl", "call_stream", "lines", 'a call stream, {"tool": ..., "input": ...} a line',
        "toolrun check calls.jsonl",
    ),
    Format(
        "codex", "codex_rollout", "lines", "a Codex CLI rollout (JSONL; also the older shape)",
        "toolrun check ~/.codex/sessions/2025/10/29/rollout-*.jsonl",
    ),
    Format(
        "codex-exec", "codex_exec", "lines", "`codex exec --json` output (JSONL events)",
        "codex exec --json 'fix it' > run.jsonl; toolrun check run.jsonl",
    ),
    Format(
        "claude-stream", "claude_stream", "lines",
        "`claude -p --output-format stream-json` output (JSONL)",
        "claude -p --output-format stream-json --verbose 'fix it' > run.jsonl",
    ),
    Format(
        "claude-code", "claude_code", "lines",
        "a Claude Code session (JSONL; its subagents/ logs are read too)",
        "toolrun check ~/.claude/projects/-home-dev-proj/SESSION.jsonl",
    ),
    Format(
        "chat-jsonl", "chat_lines", "lines",
        "one chat message a line (JSONL: ccusage's chat.jsonl, exported conversations)",
        "toolrun check --from chat-jsonl chat.jsonl",
    ),
    Format(
        "gemini", "gemini", "document", "a Gemini CLI session (JSON; it records no cwd)",
        "toolrun check --transcript-cwd ~/proj ~/.gemini/tmp/HASH/chats/session-*.json",
    ),
    Format(
        "openai-responses", "openai_responses", "document",
        "an OpenAI Responses API response or input list (JSON)",
        "toolrun check --from openai-responses response.json",
    ),
    Format(
        "anthropic", "anthropic_api", "document",
        "an Anthropic Messages API conversation (JSON; the API's bash, text editor, web tools)",
        "toolrun check --from anthropic conversation.json",
    ),
    Format(
        "openai", "openai_chat", "document", "an OpenAI Chat Completions conversation (JSON)",
        "toolrun check --from openai chat.json",
    ),
)
BY_NAME: Final = {f.name: f for f in REGISTRY}
FORMATS: Final = tuple(f.name for f in REGISTRY)
LINE_FORMATS: Final = tuple(f.name for f in REGISTRY if f.shape == "lines")


def record_format(obj: Mapping[str, Any]) -> Format | None:
    """The line format one JSONL record belongs to, or None when no format knows it."""
    for fmt in REGISTRY:
        if fmt.shape == "lines" and fmt.load_module().recognise(obj):
            return fmt
    return None


def document_format(data: Any) -> Format | None:
    """The document format of a parsed JSON/YAML value, or None when none knows it (a
    mapping that is one record of a line format: that format)."""
    if isinstance(data, dict):
        found = record_format(data)
        if found is not None:
            return found
    for fmt in REGISTRY:
        if fmt.shape == "document" and fmt.load_module().recognise(data):
            return fmt
    return None
