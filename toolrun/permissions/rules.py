"""Compiled rules, the things they are matched against, and the one matching function.

A call is broken into :class:`Subject`\\ s: each Bash sub-command, each file a
tool or a redirect writes, each URL. :func:`match` says whether one rule
applies to one subject and why (or why not); both the decision and the
explain trace use it, so they cannot disagree. :class:`RuleSet` only adds
indexes (combined regexes used as "can anything match?" pre-filters) so that a
decision does not loop over every rule.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolrun.config.models import PermissionRule
from toolrun.dataclass_init import fast_init
from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.domains import compile_domain
from toolrun.permissions.grammar import EDIT_FAMILY, READ_FAMILY, ParsedRule
from toolrun.permissions.paths import ResolvedPath, compile_path_pattern, variants

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")
SubjectKind = Literal["command", "path", "domain", "tool", "problem"]
Effect = Literal["read", "write", "execute", "network"]
Family = Literal["read", "edit"]

#: Commands that wildcard allow rules never pre-approve (they run other commands).
NOT_PREFIX_APPROVABLE = frozenset({"watch", "setsid", "ionice", "flock"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete"})
_ESCAPED_OPERATOR = re.compile(r"\\[;&|]")


# --------------------------------------------------------------------------- subjects


@fast_init
@dataclass(frozen=True, slots=True)
class Subject:
    """One thing a call does that rules are checked against."""

    kind: SubjectKind
    tool: str
    label: str
    effect: Effect
    command: SimpleCommand | None = None
    path: ResolvedPath | None = None
    family: Family | None = None
    constraint: bool = False
    redirect: bool = False
    host: str | None = None
    params: Mapping[str, Any] | None = None
    what: str = ""


# --------------------------------------------------------------------------- patterns


def bash_pattern_regex(pattern: str) -> tuple[str, bool]:
    """(regex for fullmatch, has a wildcard) for the content of a ``Bash(...)`` rule."""
    if pattern.endswith(":*"):
        return _translate(pattern[:-2]) + "(?: .*)?", True
    stars = _unescaped_stars(pattern)
    if stars == [len(pattern) - 1] and pattern.endswith(" *") and len(pattern) > 2:
        return _translate(pattern[:-2]) + "(?: .*)?", True
    return _translate(pattern), bool(stars)


def _unescaped_stars(pattern: str) -> list[int]:
    out: list[int] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "*":
            out.append(i)
        i += 1
    return out


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] == "*":
            out.append(re.escape("*"))
            i += 2
            continue
        if c == "*":
            if not out or out[-1] != ".*":
                out.append(".*")
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


# --------------------------------------------------------------------------- rules


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A rule ready to match: its position in precedence order, source, compiled pattern."""

    index: int
    rule: PermissionRule
    parsed: ParsedRule
    source: str  # the rule's file:line (or flag), for messages
    regex: re.Pattern[str] | None = None
    wildcard: bool = False
    family: Family | None = None

    @property
    def behavior(self) -> Behavior:
        return self.rule.behavior

    @property
    def text(self) -> str:
        return self.rule.text

    def describe(self) -> str:
        return f"{self.behavior} rule {self.text} ({self.source})"


def compile_rule(
    index: int,
    rule: PermissionRule,
    parsed: ParsedRule,
    *,
    workspace: tuple[str, ...],
    home: tuple[str, ...],
) -> CompiledRule:
    """Compile one parsed rule; raises ValueError for a pattern that cannot be used."""
    source = str(rule.source)
    content = parsed.content
    if content is None:
        return CompiledRule(index, rule, parsed, source)
    if parsed.kind == "bash":
        regex, wildcard = bash_pattern_regex(content)
        return CompiledRule(index, rule, parsed, source, re.compile(regex, re.DOTALL), wildcard)
    if parsed.kind == "path":
        pattern = compile_path_pattern(
            content,
            behavior=rule.behavior,
            workspace=workspace,
            source_root=variants(str(rule.source.root)),
            home=home,
        )
        family: Family | None = (
            "read" if parsed.tool == "Read" else "edit" if parsed.tool == "Edit" else None
        )
        return CompiledRule(index, rule, parsed, source, pattern.regex, False, family)
    if parsed.kind == "domain":
        domain = compile_domain(content[len("domain:") :])
        return CompiledRule(index, rule, parsed, source, domain.regex)
    return CompiledRule(index, rule, parsed, source)


# --------------------------------------------------------------------------- matching


@fast_init
@dataclass(frozen=True, slots=True)
class RuleMatch:
    """``relevant`` is False when the rule is about something else entirely (another
    tool, files instead of commands): the explanation then prefers other reasons."""

    matched: bool
    why: str
    relevant: bool = True


def _yes(why: str) -> RuleMatch:
    return RuleMatch(True, why)


def _no(why: str) -> RuleMatch:
    return RuleMatch(False, why)


def _other(why: str) -> RuleMatch:
    return RuleMatch(False, why, relevant=False)


def tool_name_matches(parsed: ParsedRule, tool: str) -> bool:
    if parsed.tool_glob:
        return fnmatch.fnmatchcase(tool, parsed.tool)
    if parsed.tool == tool:
        return True
    name = parsed.tool
    return name.startswith("mcp__") and "__" not in name[5:] and tool.startswith(name + "__")


def _match_tool_wide(rule: CompiledRule, s: Subject) -> RuleMatch:
    parsed = rule.parsed
    if s.constraint:
        return _other("tool-wide rules do not apply to the files a Bash command names")
    if s.redirect:
        if tool_name_matches(parsed, "Edit"):
            return _yes("Edit rules cover files that Bash redirects write")
        return _other(f"the redirect target is a file write; {parsed.tool} rules do not cover it")
    if tool_name_matches(parsed, s.tool):
        if parsed.tool_glob:
            return _yes(f"the tool-name glob {parsed.tool} matches {s.tool}")
        return _yes(f"matches every {s.tool} call")
    if parsed.tool == "Read" and s.tool in READ_FAMILY:
        return _yes(f"Read rules cover {s.tool}")
    if parsed.tool == "Edit" and s.tool in EDIT_FAMILY:
        return _yes(f"Edit rules cover {s.tool}")
    return _other(f"is for {parsed.tool}, not {s.tool}")


def _match_bash(rule: CompiledRule, s: Subject) -> RuleMatch:
    command = s.command
    if s.kind != "command" or command is None:
        return _other("Bash rules match commands, not files")
    assert rule.regex is not None
    if rule.behavior == "allow":
        form = command.allow_form
        if form is None:
            return _no(f"{command.text!r} cannot be allowed by any rule (not analysable)")
        if rule.wildcard:
            if _ESCAPED_OPERATOR.search(form):
                return _no(f"{form!r} contains an escaped shell operator: wildcards never allow it")
            name = command.name
            if name in NOT_PREFIX_APPROVABLE:
                return _no(f"{name} runs another command: wildcard rules never allow it")
            if name == "find" and any(w.text in _FIND_RUNS for w in command.effective):
                return _no("find -exec/-delete: wildcard rules never allow it")
        if rule.regex.fullmatch(form):
            return _yes(f"matches {form!r}")
        return _no(f"does not match {form!r}")
    for form in command.deny_forms:
        if rule.regex.fullmatch(form):
            return _yes(f"matches {form!r}")
    return _no(f"does not match {command.deny_forms[0]!r}" if command.deny_forms else "no command")


def _match_path(rule: CompiledRule, s: Subject) -> RuleMatch:
    path = s.path
    if s.kind != "path" or path is None:
        return _other(f"{rule.parsed.tool} rules match files")
    parsed = rule.parsed
    family = rule.family
    if family is None:
        # Write(...), Glob(...), ...: Claude Code never matches these; toolrun lets
        # deny and ask rules of this form apply to that one tool (stricter, never looser).
        if rule.behavior == "allow":
            return _no(f"{parsed.tool}(path) allow rules never match; use Edit(...) or Read(...)")
        if s.tool != parsed.tool or s.redirect or s.constraint:
            return _other(f"is for {parsed.tool}, not {s.label}")
    elif family != s.family and not (
        family == "read" and s.family == "edit" and rule.behavior == "deny"
    ):
        return _other(f"{parsed.tool} rules cover {family}s, and this is a {s.family or s.effect}")
    if (
        rule.behavior == "allow"
        and not (s.redirect or s.constraint)
        and s.tool not in READ_FAMILY | EDIT_FAMILY
    ):
        return _no(f"path allow rules cover built-in file tools; allow {s.tool} by name")
    assert rule.regex is not None
    link_ok = rule.regex.fullmatch(path.link) is not None
    if not path.via_symlink:
        return _yes(f"matches {path.link}") if link_ok else _no(f"does not match {path.link}")
    target_ok = rule.regex.fullmatch(path.target) is not None
    if rule.behavior == "allow":
        if link_ok and target_ok:
            return _yes(f"matches {path.link} and its target {path.target}")
        missing = path.target if link_ok else path.link
        return _no(f"an allow rule must match the link and its target; not {missing}")
    if link_ok or target_ok:
        which = f"the link {path.link}" if link_ok else f"the symlink target {path.target}"
        return _yes(f"matches {which}")
    return _no(f"matches neither {path.link} nor its target {path.target}")


def _match_domain(rule: CompiledRule, s: Subject) -> RuleMatch:
    if s.kind != "domain":
        return _other("WebFetch domain rules match URLs")
    if s.host is None:
        return _no("the URL has no host a rule can match")
    assert rule.regex is not None
    if rule.regex.fullmatch(s.host):
        return _yes(f"matches host {s.host}")
    return _no(f"does not match host {s.host}")


def _match_param(rule: CompiledRule, s: Subject) -> RuleMatch:
    parsed = rule.parsed
    assert parsed.content is not None
    name, _, pattern = parsed.content.partition(":")
    if s.params is None or not tool_name_matches(parsed, s.tool) or s.constraint or s.redirect:
        return _other(f"is for {parsed.tool}, not {s.label}")
    if name not in s.params:
        return _no(f"the input has no {name}")
    value = s.params[name]
    if value is None or isinstance(value, (dict, list)):
        return _no(f"{name} is not a scalar")
    if isinstance(value, bool):
        text = str(value).lower()  # the JSON spelling: true / false
    else:
        text = value if isinstance(value, str) else str(value)
    if param_value_regex(pattern).fullmatch(text):
        return _yes(f"{name} = {text!r}")
    return _no(f"{name} = {text!r} does not match {pattern!r}")


@functools.lru_cache(maxsize=1024)
def param_value_regex(pattern: str) -> re.Pattern[str]:
    """``*`` matches any characters (newlines too); everything else is literal."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def match(rule: CompiledRule, s: Subject) -> RuleMatch:
    """Whether ``rule`` applies to ``s`` — the only place rule matching is decided."""
    parsed = rule.parsed
    if parsed.ignored:
        return _no(f"ignored: {parsed.warning}")
    if parsed.content is None:
        return _match_tool_wide(rule, s)
    if parsed.kind == "bash":
        return _match_bash(rule, s) if s.tool == "Bash" else _other(f"is for Bash, not {s.tool}")
    if parsed.kind == "path":
        return _match_path(rule, s)
    if parsed.kind == "domain":
        if s.tool != "WebFetch":
            return _other(f"is for WebFetch, not {s.tool}")
        return _match_domain(rule, s)
    if parsed.kind == "param":
        return _match_param(rule, s)
    if tool_name_matches(parsed, s.tool):
        return _no(f"toolrun has no matcher for {parsed.tool}(...) content; it never matches")
    return _other(f"is for {parsed.tool}, not {s.tool}")


# --------------------------------------------------------------------------- index


@dataclass(frozen=True, slots=True)
class _Group:
    """Rules of one behaviour and one kind, in precedence order, with one combined regex.

    The combined regex is an alternation with one named group per rule, so a single
    ``fullmatch`` finds the first rule whose pattern matches a string; :func:`match`
    then confirms it (symlink targets, guards), scanning on only if it does not.
    """

    rules: tuple[CompiledRule, ...]
    regex: re.Pattern[str] | None
    #: Strings one of which every form the regex matches contains (None: not known, or
    #: not worth looking for): a form without any cannot match, and is not tried.
    needed: tuple[str, ...] | None = None

    @classmethod
    def of(cls, rules: Sequence[CompiledRule]) -> _Group:
        with_regex = [r for r in rules if r.regex is not None]
        if not with_regex or len(with_regex) != len(rules):
            return cls(tuple(rules), None)
        alternatives = "|".join(
            f"(?P<r{k}>{r.regex.pattern})" for k, r in enumerate(with_regex) if r.regex
        )
        patterns = [r.regex.pattern for r in with_regex if r.regex]
        return cls(tuple(rules), re.compile(alternatives, re.DOTALL), _needed(patterns))

    def first(self, forms: Sequence[str], s: Subject) -> CompiledRule | None:
        start = 0
        if self.regex is not None:
            best: int | None = None
            needed = self.needed
            for form in forms:
                if needed is not None and not _contains_one(form, needed):
                    continue  # (the regex cannot match it: see _needed)
                found = self.regex.fullmatch(form)
                if found is not None and found.lastgroup is not None:
                    k = int(found.lastgroup[1:])
                    best = k if best is None else min(best, k)
            if best is None:
                return None  # no rule's pattern matches any form: none can apply
            start = best
        for rule in self.rules[start:]:
            if match(rule, s).matched:
                return rule
        return None


_EMPTY = _Group((), None)


def _contains_one(form: str, needed: tuple[str, ...]) -> bool:
    for text in needed:  # (a loop: cheaper than any() over a generator)
        if text in form:
            return True
    return False


def _needed(patterns: Sequence[str]) -> tuple[str, ...] | None:
    """For each pattern, a string every string it fully matches contains: its longest run
    of fixed characters outside any optional or repeated part. Only where the combined
    regex is slow to fail (a pattern that starts with a repeat, ``(?:/.*)?/x`` of
    ``**/x``, scans every position) and every pattern has one; else None."""
    import importlib

    try:
        parser: Any = importlib.import_module("re._parser")
        parsed = [parser.parse(p, re.DOTALL) for p in patterns]
        literal = parser.LITERAL
    except (ImportError, AttributeError, re.error):
        return None
    if not any(p and p[0][0] is not literal for p in parsed):
        return None  # (every pattern starts with a fixed character: fails at once)
    out: list[str] = []
    for p in parsed:
        if p.state.flags & (re.IGNORECASE | re.LOCALE):
            return None
        best, run = "", ""
        for op, arg in p:  # (the top level: each node must match, in order)
            if op is literal:
                run += chr(arg)
                best = max(best, run, key=len)
            else:
                run = ""
        if not best:
            return None
        out.append(best)
    return tuple(dict.fromkeys(out))


def _forms(behavior: Behavior, s: Subject) -> Sequence[str]:
    """The strings a subject's rule patterns are matched against (as in ``_lookups``)."""
    if s.command is not None and s.kind == "command":
        if behavior != "allow":
            return s.command.deny_forms
        allow = s.command.allow_form
        return (allow,) if allow is not None else ()
    if s.path is not None and s.kind == "path":
        return s.path.forms
    if s.host is not None and s.kind == "domain":
        return (s.host,)
    return ()


@dataclass(frozen=True, slots=True)
class RuleSet:
    """All rules in precedence order, plus indexes for fast first-match lookups.

    The indexes only narrow down which rules to try; whether a rule applies is
    always decided by :func:`match`.
    """

    rules: tuple[CompiledRule, ...]
    _groups: Mapping[tuple[str, str], _Group] = field(default_factory=dict)
    _tool_wide: Mapping[str, tuple[CompiledRule, ...]] = field(default_factory=dict)
    _tool_wide_cache: dict[tuple[str, str, bool, bool], CompiledRule | None] = field(
        default_factory=dict
    )
    _plans: dict[tuple[Any, ...], tuple[CompiledRule | None, tuple[tuple[_Group, bool], ...]]] = (
        field(default_factory=dict)
    )

    @classmethod
    def build(cls, rules: Sequence[CompiledRule]) -> RuleSet:
        groups: dict[tuple[str, str], list[CompiledRule]] = {}
        tool_wide: dict[str, tuple[CompiledRule, ...]] = {}
        for behavior in BEHAVIORS:
            mine = [r for r in rules if r.behavior == behavior and not r.parsed.ignored]
            tool_wide[behavior] = tuple(r for r in mine if r.parsed.content is None)
            for rule in mine:
                kind = rule.parsed.kind
                if kind == "path":
                    key = rule.family or f"tool:{rule.parsed.tool}"
                elif kind in ("bash", "domain", "param"):
                    key = kind
                else:
                    continue  # tool-wide (indexed above) or content toolrun never matches
                groups.setdefault((behavior, key), []).append(rule)
        return cls(
            tuple(rules),
            {key: _Group.of(members) for key, members in groups.items()},
            tool_wide,
        )

    def first_match(self, behavior: Behavior, s: Subject) -> CompiledRule | None:
        """The first rule of ``behavior`` (in precedence order) that applies to ``s``."""
        # Which groups can hold a match, and the first tool-wide rule, depend only on
        # the subject's shape: worked out once per shape.
        kind = s.kind
        present = (
            s.command if kind == "command" else s.path if kind == "path"
            else s.host if kind == "domain" else None
        ) is not None
        shape = (behavior, kind, present, s.tool, s.family, s.constraint, s.redirect,
                 s.params is not None)
        plan = self._plans.get(shape)
        if plan is None:
            plan = self._plans[shape] = self._plan(behavior, s)
        best, groups = plan
        if not groups:
            return best
        forms = _forms(behavior, s)
        for group, params in groups:
            if not (params or forms):
                continue  # (an allow rule for a command that cannot be allowed)
            found = group.first(() if params else forms, s)
            if found is not None and (best is None or found.index < best.index):
                best = found
        return best

    def _plan(
        self, behavior: Behavior, s: Subject
    ) -> tuple[CompiledRule | None, tuple[tuple[_Group, bool], ...]]:
        groups = tuple(
            (group, key == "param")
            for key, _forms in self._lookups(behavior, s)
            if (group := self._groups.get((behavior, key), _EMPTY)).rules
        )
        return self._first_tool_wide(behavior, s), groups

    def _first_tool_wide(self, behavior: Behavior, s: Subject) -> CompiledRule | None:
        # A tool-wide rule's match depends only on these four things.
        key = (behavior, s.tool, s.constraint, s.redirect)
        try:
            return self._tool_wide_cache[key]
        except KeyError:
            pass
        found = next((r for r in self._tool_wide[behavior] if match(r, s).matched), None)
        self._tool_wide_cache[key] = found
        return found

    @staticmethod
    def _lookups(behavior: Behavior, s: Subject) -> list[tuple[str, Sequence[str]]]:
        out: list[tuple[str, Sequence[str]]] = []
        if s.kind == "command" and s.command is not None:
            allow = s.command.allow_form
            forms = s.command.deny_forms if behavior != "allow" else (
                (allow,) if allow is not None else ()
            )
            if forms:
                out.append(("bash", forms))
        elif s.kind == "path" and s.path is not None:
            forms = s.path.forms
            if s.family is not None:
                out.append((s.family, forms))
            if s.family == "edit" and behavior == "deny":
                out.append(("read", forms))
            out.append((f"tool:{s.tool}", forms))
        elif s.kind == "domain" and s.host is not None:
            out.append(("domain", (s.host,)))
        if s.params is not None and behavior != "allow":
            out.append(("param", ()))
        return out
