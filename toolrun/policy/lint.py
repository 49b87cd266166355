"""``toolrun lint``: permission rules that do not do what they seem to (pure).

Each finding names the rule, where it was written and why, like Claude Code's
``/doctor`` and its shadowed-rule detector:

- ``shadowed``: an allow (or ask) rule an earlier-deciding deny or ask rule covers whole:
  it can never decide anything;
- ``duplicate``: the same rule written again (in the same source or another);
- ``never-matches``: a rule Claude Code skips (a path rule on Write or Glob, a domain
  rule on Bash, ...);
- ``argument-deny``: a Bash deny (or ask) rule that constrains arguments, which is easy
  to evade (``rm -rf x`` vs ``rm -r -f x``): the command-level rule is suggested;
- ``outside-workspace``: an allow rule for paths beyond the workspace (``//``, ``~``,
  ``..``);
- ``unused``: with a corpus of plans, a rule no call was decided by.

The checks are conservative: a finding is reported only when it certainly holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolrun.permissions.grammar import ParsedRule, RuleSyntaxError, parse_rule
from toolrun.permissions.rules import bash_pattern_regex

if TYPE_CHECKING:
    from toolrun.config.models import Config, PermissionRule

Kind = Literal[
    "shadowed",
    "duplicate",
    "never-matches",
    "argument-deny",
    "outside-workspace",
    "unused",
    "warning",
]
#: the tools whose path rules cover a family of tools (Read: Read, Glob, Grep; Edit: ...)
_PATH_FAMILIES = frozenset({"Read", "Edit"})
_PRECEDENCE = {"deny": 0, "ask": 1, "allow": 2}
# a Bash rule's first word: what "the command" is, for the command-level suggestion
_FIRST_WORD = re.compile(r"[A-Za-z0-9_./+-]+")
#: A word that can be a sub-command (``push``, ``run``, ``test:*``): no option, path or URL.
_SUB_COMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_-]*(?::\*|\*)?")


@dataclass(frozen=True, slots=True)
class Finding:
    kind: Kind
    rule: str
    behavior: str
    source: str  # file:line
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.kind}: {self.behavior} {self.rule}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        file, _, line = self.source.rpartition(":")
        return {
            "kind": self.kind,
            "rule": self.rule,
            "behavior": self.behavior,
            "source": self.source,
            "file": file or self.source,
            "line": int(line) if line.isdigit() else None,
            "message": self.message,
        }


def _parsed(rule: PermissionRule) -> ParsedRule | None:
    try:
        return parse_rule(rule.text, behavior=rule.behavior)
    except RuleSyntaxError:  # the loader already refused these
        return None


def _covers(wide: ParsedRule, narrow: ParsedRule) -> bool:
    """Whether every call ``narrow`` matches is also matched by ``wide`` (certainly)."""
    if wide.tool_glob:
        pattern = re.escape(wide.tool).replace(r"\*", ".*")
        return wide.is_tool_wide and re.fullmatch(pattern, narrow.tool) is not None
    if wide.tool != narrow.tool:
        return False
    if wide.is_tool_wide:
        return True
    if narrow.is_tool_wide or wide.kind != narrow.kind:
        return False
    if wide.content == narrow.content:
        return True
    if wide.kind == "bash" and wide.content is not None and narrow.content is not None:
        regex, _ = bash_pattern_regex(wide.content)
        literal = narrow.content[:-2] + " *" if narrow.content.endswith(":*") else narrow.content
        return re.fullmatch(regex, literal) is not None
    return False


def lint_rules(config: Config) -> list[Finding]:
    """Every finding about the config's rules, in the order the rules were written."""
    rules = [(r, p) for r in config.rules if (p := _parsed(r)) is not None]
    findings: list[Finding] = []
    seen: dict[tuple[str, str], PermissionRule] = {}

    def add(kind: Kind, rule: PermissionRule, message: str) -> None:
        findings.append(Finding(kind, rule.text, rule.behavior, str(rule.source), message))

    for rule, parsed in rules:
        key = (rule.behavior, parsed.text)
        first = seen.setdefault(key, rule)
        if first is not rule:
            add("duplicate", rule, f"the same rule is already at {first.source}")
            continue
        never = _never(rule, parsed)
        if never:
            add("never-matches", rule, never)
            continue
        if parsed.warning:
            add("warning", rule, parsed.warning)
        if rule.behavior != "deny":
            cover = next(
                (
                    (other, o)
                    for other, o in rules
                    if _PRECEDENCE[other.behavior] < _PRECEDENCE[rule.behavior]
                    and _covers(o, parsed)
                ),
                None,
            )
            if cover is not None:
                other, _ = cover
                add(
                    "shadowed",
                    rule,
                    f"never decides: the {other.behavior} rule {other.text} ({other.source}) "
                    "covers every call it matches and is checked first",
                )
                continue
        if rule.behavior in ("deny", "ask") and parsed.kind == "bash":
            suggestion = _command_level(parsed.content or "")
            if suggestion is not None:
                add(
                    "argument-deny",
                    rule,
                    "constrains arguments, which other spellings evade (options reordered or "
                    f"split, paths written differently); {rule.behavior} the command: "
                    f"Bash({suggestion})",
                )
        if rule.behavior == "allow" and parsed.kind == "path":
            where = _outside(parsed.content or "")
            if where:
                add("outside-workspace", rule, f"allows paths outside the workspace ({where})")
    return findings


def _never(rule: PermissionRule, parsed: ParsedRule) -> str:
    """Why a rule can never match anything, or an empty string."""
    if parsed.ignored:
        return parsed.warning or "Claude Code never matches this rule"
    if rule.behavior == "allow" and parsed.kind == "path" and parsed.tool not in _PATH_FAMILIES:
        family = "Read" if parsed.tool in ("Glob", "Grep", "LS") else "Edit"
        return f"{parsed.tool}(path) allow rules never match; use {family}(...)"
    if parsed.kind == "bash" and (parsed.content or "").startswith("domain:"):
        return (
            "a domain rule on Bash matches only a command named like it; use WebFetch(domain:...)"
        )
    return ""


def _command_level(content: str) -> str | None:
    """The rule on the command (and its sub-commands) alone, when the content says more.

    ``rm *`` for ``rm -rf *`` and ``git push *`` for ``git push --force *``: the leading plain
    words name the command and its sub-command, and are kept, since dropping them would
    widen the rule over commands it never meant (``git *`` would make ``git diff`` ask).
    Only an option or an operand beyond them (``-rf``, a path, a URL) is what other spellings
    evade; a rule of plain words alone (``git push *``, ``npm run test:*``) is already
    command-level.
    """
    words = content.split()
    if len(words) < 2 or not _FIRST_WORD.fullmatch(words[0]):
        return None
    kept = [words[0]]
    for word in words[1:]:
        if not _SUB_COMMAND.fullmatch(word):
            break
        kept.append(word)
    rest = words[len(kept) :]
    if not rest or rest in (["*"], [":*"]):
        return None  # the command, its sub-commands and any arguments: already command-level
    return " ".join([*kept, "*"])


def _outside(content: str) -> str:
    if content.startswith("//"):
        return "an absolute path"
    if content == "~" or content.startswith("~"):
        return "the home directory"
    if content == ".." or content.startswith("../") or "/../" in content:
        return "a parent of the workspace"
    return ""


def unused_rules(config: Config, hits: Iterable[tuple[str | None, str | None]]) -> list[Finding]:
    """Rules no call of the corpus was decided by (``hits``: (rule, source) per call)."""
    used = {(rule, source) for rule, source in hits if rule}
    return [
        Finding("unused", r.text, r.behavior, str(r.source), "no call in the plans hit it")
        for r in config.rules
        if (r.text, str(r.source)) not in used
    ]


def text_lines(findings: list[Finding]) -> Iterator[str]:
    for finding in findings:
        yield str(finding)
    n = len(findings)
    yield f"{n} finding{'s' if n != 1 else ''}" if n else "no findings"


def json_text(findings: list[Finding]) -> str:
    return json.dumps(
        {"findings": [f.to_json() for f in findings], "count": len(findings)},
        indent=2,
        ensure_ascii=False,
    )
