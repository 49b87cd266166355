"""Which configured hooks run for one event and one tool call (pure).

Matcher rules (Claude Code's): ``""`` or ``"*"`` matches every tool; a string
made only of letters, digits, ``_``, ``-``, spaces, ``,`` and ``|`` is an exact
name or a list of exact names (``Edit|Write``, ``Edit, Write``); anything else
is an unanchored regular expression (``re.search``). An invalid regex never
matches and is reported by :func:`matcher_problems`.

PostToolBatch concerns a whole batch, not one tool: its matcher and ``if`` are
ignored (every PostToolBatch hook runs), as Claude Code does for events
without a tool name.

An identical command configured several times (in one source or several) runs
once per event per call: the first occurrence in config order is kept.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolrun.config.models import Config, HookCommand, HookMatcher
from toolrun.hooks.models import HookEvent, SkippedHook

_EXACT = re.compile(r"[A-Za-z0-9_ ,|-]*")

MatcherKind = Literal["all", "names", "regex", "invalid"]


@dataclass(frozen=True, slots=True)
class CompiledMatcher:
    text: str
    kind: MatcherKind
    names: frozenset[str] = frozenset()
    pattern: re.Pattern[str] | None = None
    error: str | None = None

    def matches(self, tool: str) -> bool:
        if self.kind == "all":
            return True
        if self.kind == "names":
            return tool in self.names
        if self.pattern is not None:
            return self.pattern.search(tool) is not None
        return False


@functools.lru_cache(maxsize=1024)
def compile_matcher(text: str) -> CompiledMatcher:
    """Classify and compile one matcher string (cached)."""
    if text.strip() in ("", "*"):
        return CompiledMatcher(text, "all")
    if _EXACT.fullmatch(text):
        names = frozenset(n.strip() for n in re.split(r"[|,]", text) if n.strip())
        if not names:
            return CompiledMatcher(text, "all")
        return CompiledMatcher(text, "names", names=names)
    try:
        return CompiledMatcher(text, "regex", pattern=re.compile(text))
    except re.error as exc:
        return CompiledMatcher(text, "invalid", error=str(exc))


def matcher_matches(matcher: str, tool: str) -> bool:
    """Does ``matcher`` select ``tool``? (An invalid regex never does.)"""
    return compile_matcher(matcher).matches(tool)


def _group_problem(group: HookMatcher) -> str | None:
    compiled = compile_matcher(group.matcher)
    if compiled.error is None:
        return None
    return (
        f"{group.source}: hooks.{group.event} matcher {group.matcher!r} is not a valid "
        f"regular expression ({compiled.error}); it never matches"
    )


def matcher_problems(config: Config) -> tuple[str, ...]:
    """One message per configured matcher that is an invalid regex."""
    return tuple(p for g in config.hooks if (p := _group_problem(g)) is not None)


@dataclass(frozen=True, slots=True)
class IfVerdict:
    """Whether a hook's ``if`` lets it run for this call, and why."""

    run: bool
    why: str


#: ``check(rule, tool, tool_input, cwd)``: does the one permission rule ``rule`` match the call?
IfCheck = Callable[[str, str, Mapping[str, Any], "Path | None"], IfVerdict]


@dataclass(frozen=True, slots=True)
class SelectedHook:
    """A hook that will run, with its place in the config.

    ``group`` is the index of its matcher group among the event's groups (the
    unit a ``sequential: true`` group runs as); ``position`` orders every
    selected hook in config order.
    """

    hook: HookCommand
    matcher: str
    group: int
    sequential: bool
    position: int

    @property
    def source(self) -> str:
        return str(self.hook.source)


@dataclass(frozen=True, slots=True)
class Selection:
    """The hooks to run for one event and call (config order), the ones skipped, problems."""

    event: HookEvent
    hooks: tuple[SelectedHook, ...] = ()
    skipped: tuple[SkippedHook, ...] = ()
    problems: tuple[str, ...] = ()


def select_hooks(
    config: Config,
    event: HookEvent,
    tool: str | None,
    tool_input: Mapping[str, Any] | None = None,
    *,
    cwd: Path | None = None,
    if_check: IfCheck | None = None,
) -> Selection:
    """The hooks of ``event`` that run for a call of ``tool`` with ``tool_input``.

    ``tool`` is None for PostToolBatch (matchers and ``if`` ignored). Without
    ``if_check`` every ``if`` is treated as matching.
    """
    selected: list[SelectedHook] = []
    skipped: list[SkippedHook] = []
    problems: list[str] = []
    first_seen: dict[str, str] = {}
    groups = [g for g in config.hooks if g.event == event]
    for group_index, group in enumerate(groups):
        if tool is not None:
            problem = _group_problem(group)
            if problem is not None:
                problems.append(problem)
                continue
            if not compile_matcher(group.matcher).matches(tool):
                continue
        for hook in group.hooks:
            source = str(hook.source)
            if hook.if_rule is not None and tool is not None and if_check is not None:
                verdict = if_check(hook.if_rule, tool, tool_input or {}, cwd)
                if not verdict.run:
                    skipped.append(SkippedHook(event, hook.command, source, verdict.why))
                    continue
            earlier = first_seen.get(hook.command)
            if earlier is not None:
                skipped.append(
                    SkippedHook(
                        event, hook.command, source, f"the same command already runs from {earlier}"
                    )
                )
                continue
            first_seen[hook.command] = source
            selected.append(
                SelectedHook(
                    hook=hook,
                    matcher=group.matcher,
                    group=group_index,
                    sequential=group.sequential,
                    position=len(selected),
                )
            )
    return Selection(event, tuple(selected), tuple(skipped), tuple(problems))
