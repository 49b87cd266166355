"""The narrowest allow rule that would approve a call that asks.

``explain-permission`` prints it and "always" at the exec prompt adds exactly it for the
rest of the run, so an answer never approves more than the call that was asked about:
the exact command (``Bash(touch src/a)``), the exact file (``Edit(./src/a.py)``), the
exact host (``WebFetch(domain:example.com)``), or — for a tool with no content form —
the tool by name.

A suggestion is only made when it provably works: the engine, with the rules added,
must decide the very call ``allow``. Deny and ask rules, protected and critical paths,
the workspace boundary and "cannot be analysed" all come before allow rules, so what
they stop no suggestion can approve, now or for a later call. A call that touches
anything outside the workspace gets no suggestion at all (a session rule must never
carry an approval past the boundary).
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.config.models import PermissionRule, SettingSource, SourceKind
from toolrun.errors import ToolrunError
from toolrun.permissions.decision import Decision
from toolrun.permissions.grammar import EDIT_FAMILY, READ_FAMILY

if TYPE_CHECKING:
    from toolrun.permissions.analysis import SimpleCommand
    from toolrun.permissions.resolver import PermissionEngine

#: Where rules added by "always" say they come from.
SESSION_FLAG = "this run ('always' at the prompt)"
#: At most this many rules for one call (Claude Code saves at most 5 per compound command).
MAX_RULES = 5
#: Characters that are pattern syntax in a path rule: a path holding one gets no rule.
_PATH_META = frozenset("*?[]{}\\!#")
#: Programs whose effect comes from their input, not their words: code on stdin (shells,
#: interpreters), commands or files named on stdin (xargs, parallel), edits and archives
#: read from stdin (patch, git apply, tar). A rule naming their words would approve a later
#: `echo ANYTHING | prog` just the same, so "always" is never offered for them.
RUNS_ITS_INPUT = frozenset(
    {
        # shells and interpreters: code on stdin
        *("sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "fish", "csh", "tcsh"),
        *("busybox", "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby"),
        *("node", "nodejs", "deno", "bun", "php", "lua", "luajit", "Rscript", "tclsh"),
        *("wish", "osascript", "eval", "source", ".", "exec", "env", "sudo", "doas", "su"),
        # commands, files, edits or archives named on stdin
        *("xargs", "parallel", "ssh", "patch", "tar", "cpio", "sqlite3", "psql", "mysql"),
        *("crontab", "at", "batch", "socat", "nc", "ncat", "git"),
    }
)


@dataclass(frozen=True, slots=True)
class Suggestion:
    """``rules`` (rule texts) would allow the call; empty with ``why`` saying why none can."""

    rules: tuple[str, ...] = ()
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"rules": list(self.rules), "why": self.why or None}


def session_source(workspace: Path) -> SettingSource:
    return SettingSource(SourceKind.CLI, None, 0, workspace, flag=SESSION_FLAG)


def with_allow_rules(engine: PermissionEngine, rules: Sequence[str]) -> PermissionEngine:
    """A new engine: the same configuration plus ``rules`` as allow rules of this run."""
    from toolrun.permissions.resolver import PermissionEngine

    config = engine.config
    source = session_source(Path(engine.workspace))
    extra = tuple(PermissionRule("allow", text, source) for text in rules)
    return PermissionEngine(
        dataclasses.replace(config, rules=config.rules + extra), engine.registry,
        memo=engine.memo,
    )


def suggest(
    engine: PermissionEngine,
    decision: Decision,
    *,
    cwd: Path | None = None,
) -> Suggestion:
    """The narrowest allow rule(s) for ``decision``'s call, checked against the engine."""
    if decision.decision != "ask":
        done = {"allow": "allowed", "deny": "denied"}[decision.decision]
        return Suggestion(why=f"the call is {done}; nothing to approve")
    if decision.protected:
        return Suggestion(why=f"{decision.protected[0]}: only a person can approve it, once")
    if any(check.inside is False for check in decision.boundary):
        outside = next(c.path for c in decision.boundary if c.inside is False)
        return Suggestion(why=f"{outside} is outside the workspace: approve it once, if at all")
    try:
        rules = _candidates(engine, decision)
    except _NoRule as exc:
        return Suggestion(why=str(exc))
    if not rules:
        return Suggestion(why="no rule form names this call")
    if len(rules) > MAX_RULES:
        return Suggestion(why=f"it would take {len(rules)} rules (at most {MAX_RULES})")
    try:
        checked = _decide_with(engine, rules, decision, cwd)
        if checked.decision != "allow":
            why = checked.reason.removeprefix("needs approval: ")
            return Suggestion(why=f"no allow rule can approve it: {why}")
        # Drop what the call does not need (a read-only command whose redirect asked).
        for rule in list(rules):
            fewer = [r for r in rules if r != rule]
            if fewer and _decide_with(engine, fewer, decision, cwd).decision == "allow":
                rules = fewer
    except (ValueError, ToolrunError) as exc:  # a rule that does not load
        return Suggestion(why=f"no rule can name it exactly ({exc})")
    return Suggestion(tuple(rules))


def _decide_with(
    engine: PermissionEngine, rules: Sequence[str], decision: Decision, cwd: Path | None
) -> Decision:
    return with_allow_rules(engine, rules).decide(
        decision.tool, decision.input, cwd=cwd, mode=decision.mode
    )


class _NoRule(Exception):
    """Why no rule can name one part of the call."""


def _candidates(engine: PermissionEngine, decision: Decision) -> list[str]:
    tool = decision.tool
    if tool == "Bash":
        return _bash_rules(engine, decision)
    if tool in READ_FAMILY or tool in EDIT_FAMILY:
        return _path_rules(engine, decision)
    if tool == "WebFetch":
        return [_domain_rule(decision.targets)]
    if decision.targets and any(t.what != "tool" for t in decision.targets):
        raise _NoRule(f"{tool} touches files; only its own call can be approved")
    return [tool]


def _bash_rules(engine: PermissionEngine, decision: Decision) -> list[str]:
    from toolrun.permissions.bash import analyse

    command = decision.input.get("command")
    if not isinstance(command, str) or decision.problems:
        raise _NoRule("the command cannot be analysed; no rule can allow it")
    commands = analyse(command).commands
    out: list[str] = []
    for sub in decision.subcommands:
        if sub.decision == "allow":
            continue
        cmd = commands[sub.index]
        program = runs_its_input(cmd)
        if program is not None:
            raise _NoRule(
                f"what {program} does comes from its input, which a rule cannot name: "
                "approve it once"
            )
        rule = bash_rule(cmd)
        if rule is None:
            raise _NoRule(f"`{sub.command}` cannot be allowed by any rule")
        # a redirect writing a file needs an Edit rule for that file
        needed = [rule] + [
            _path_rule(engine, "Edit", t.target)
            for t in sub.targets
            if t.decision == "ask" and t.access == "write"
        ]
        out.extend(r for r in needed if r not in out)
    return out


def bash_rule(cmd: SimpleCommand) -> str | None:
    """``Bash(<exact command>)`` for one analysed command, or None when none can match it."""
    form = cmd.allow_form
    if form is None or not cmd.analysable:
        return None
    if runs_its_input(cmd):
        return None
    # A literal ``*`` is ``\\*`` in a Bash pattern; then the rule grammar's own escapes.
    pattern = form.replace("*", "\\*")
    return "Bash(" + escape_content(pattern) + ")"


def runs_its_input(cmd: SimpleCommand) -> str | None:
    """The program, when what ``cmd`` does comes from its input (see RUNS_ITS_INPUT)."""
    programs = {posixpath.basename(w.text) for w in (*cmd.words[:1], *cmd.effective[:1])}
    found = sorted(programs & RUNS_ITS_INPUT)
    if not found or _git_without_input(cmd):
        return None
    return found[0]


def _git_without_input(cmd: SimpleCommand) -> bool:
    """git, except the sub-commands that take patches or mail from stdin (apply, am)."""
    words = [w.text for w in cmd.effective]
    if (
        not words
        or posixpath.basename(words[0]) != "git"
        or posixpath.basename(cmd.words[0].text) != "git"
    ):
        return False
    sub = next((w for w in words[1:] if not w.startswith("-")), "")
    return sub not in ("apply", "am", "fast-import", "hash-object", "update-index", "-")


def escape_content(content: str) -> str:
    """Rule content with ``\\``, ``(`` and ``)`` escaped for the ``Tool(content)`` grammar."""
    return content.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _path_rules(engine: PermissionEngine, decision: Decision) -> list[str]:
    family = "Read" if decision.tool in READ_FAMILY else "Edit"
    out: list[str] = []
    for target in decision.targets:
        if target.decision == "allow":
            continue
        rule = _path_rule(engine, family, target.target)
        if rule not in out:
            out.append(rule)
    return out


def _path_rule(engine: PermissionEngine, family: str, path: str) -> str:
    """``Edit(./rel/path)``: exactly one file of the workspace (no pattern characters)."""
    workspace = engine.workspace.rstrip("/")
    if not path.startswith(workspace + "/"):
        raise _NoRule(f"{path} is outside the workspace")
    relative = path[len(workspace) + 1 :]
    if any(c in _PATH_META for c in relative) or any(c.isspace() for c in relative):
        raise _NoRule(f"{path} holds pattern characters; no rule names exactly this file")
    return f"{family}(./{escape_content(relative)})"


def _domain_rule(targets: Sequence[Any]) -> str:
    from toolrun.permissions.domains import url_host

    for target in targets:
        host = url_host(target.target).name
        if host:
            return f"WebFetch(domain:{host})"
    raise _NoRule("the URL has no host a rule can name")


def suggestion_for(
    engine: PermissionEngine, tool: str, input: Mapping[str, Any], *, cwd: Path | None = None
) -> tuple[Decision, Suggestion]:
    """Decide a call and, when it asks, its suggestion (explain-permission's one call)."""
    decision = engine.decide(tool, input, cwd=cwd)
    return decision, suggest(engine, decision, cwd=cwd)
