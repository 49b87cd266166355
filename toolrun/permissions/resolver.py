"""The permission engine: one call in, one :class:`Decision` out.

``PermissionEngine(config, registry).decide(tool, input)`` is the only decision
path in toolrun: ``exec``, ``check``, hooks' ``updatedInput`` re-checks and
``explain-permission`` all call it.

For each call the engine lists its subjects (each Bash sub-command, each file
written by a redirect or named by a file command, each file a tool reads or
writes, each URL) and decides every subject with the same steps:

1. deny rules, 2. ask rules, 3. protected paths and critical ``rm``,
4. "cannot be analysed" (never allowed by a rule), 5. allow rules,
6. the read-only Bash set, 7. the workspace boundary, 8. the mode.

The call is denied if any subject is denied, allowed only if every subject is
allowed, and asks otherwise.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.config.models import Config, PermissionRule
from toolrun.errors import ConfigError, Location, Problem, ToolError
from toolrun.permissions import programs
from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.bash import analyse
from toolrun.permissions.claude_tools import PATH_FIELDS as CLAUDE_PATH_FIELDS
from toolrun.permissions.claude_tools import claude_tool
from toolrun.permissions.claude_tools import subject as claude_subject
from toolrun.permissions.copies import Carried, carried, is_copier, linked_trees
from toolrun.permissions.decision import (
    BoundaryCheck,
    DecidedBy,
    Decision,
    RuleTrace,
    SubcommandVerdict,
    TargetVerdict,
)
from toolrun.permissions.domains import exact_host, url_host
from toolrun.permissions.enforce import RunsIn, configured_place, judge, lazy_probe, runs_in
from toolrun.permissions.frozen import fast_init
from toolrun.permissions.grammar import RuleSyntaxError, parse_rule
from toolrun.permissions.modes import MODES, Behavior, DecidedKind, Effect, Step, apply_mode
from toolrun.permissions.observe import Observation, observe, opaque, start, stop, unchanged
from toolrun.permissions.paths import (
    EXEMPT_WRITE_TARGETS,
    Boundary,
    PathInputError,
    ResolvedPath,
    absolute,
    critical_reason,
    glob_base,
    normalise,
    protected_reason,
    resolve,
    resolve_tool_path,
    unsettled,
    variants,
)
from toolrun.permissions.readonly import ReadOnly, bash_verdicts, option_words
from toolrun.permissions.rules import (
    CompiledRule,
    Family,
    RuleSet,
    Subject,
    compile_rule,
    match,
    tool_name_matches,
)
from toolrun.permissions.shellpaths import PathArgument, cd_destinations, path_arguments
from toolrun.permissions.wordpaths import glob_directory, glob_matches, word_path, word_text
from toolrun.permissions.words import Word
from toolrun.permissions.wrapped import wrapped_arguments, wrapped_option_files

if TYPE_CHECKING:
    from toolrun.sandbox.policy import SandboxPolicy
    from toolrun.tools.base import Tool
    from toolrun.tools.registry import ToolRegistry

#: Where each built-in tool keeps the path it touches (Claude Code field names).
PATH_FIELDS: dict[str, tuple[str, Family, bool]] = {
    # tool: (field, family, required)
    "Read": ("file_path", "read", True),
    "Write": ("file_path", "edit", True),
    "Edit": ("file_path", "edit", True),
    "MultiEdit": ("file_path", "edit", True),
    "NotebookEdit": ("notebook_path", "edit", True),
    "Glob": ("path", "read", False),
    "Grep": ("path", "read", False),
    "LS": ("path", "read", False),
    **CLAUDE_PATH_FIELDS,
}
BUILTIN_TOOLS = ("Bash", *PATH_FIELDS, "WebFetch", "ApplyPatch")
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp", "rm", "rmdir"})
_RM = frozenset({"rm", "rmdir"})
_EFFECTS: dict[str, Effect] = {"read": "read", "write": "write", "network": "network"}
#: How many read vetoes one engine remembers (keyed by path *and* symlink target).
READ_VETO_CACHE = 4096
#: How many decisions one engine remembers (with what each read from the system).
DECISION_CACHE = 4096
#: Inputs longer than this (about, as JSON) are decided afresh every time.
MAX_KEY = 2048


@fast_init
@dataclass(frozen=True, slots=True)
class Verdict:
    """How one subject was decided."""

    decision: Behavior
    kind: DecidedKind
    step: Step | None
    reason: str
    rule: CompiledRule | None = None


_NEUTRAL = Verdict("allow", "default", None, "")


@dataclass(frozen=True, slots=True)
class _Unknown:
    """A path input that cannot be known (the patch does not parse, ...), and why."""

    problem: str


def _memo_key(
    tool: str, input: Mapping[str, Any], cwd: Path | None, mode: str | None
) -> tuple[str, str, str | None, str | None] | None:
    """What a remembered decision is found by; None for an input that cannot be keyed
    exactly (only JSON data is: two such inputs are equal exactly when their reprs are)
    or is too large to be worth keeping (a Write of a big file)."""
    if type(input) is not dict:
        return None
    size = 0
    for k, v in input.items():  # (the usual input: a few strings)
        if type(v) is not str or type(k) is not str:
            if _size(input, MAX_KEY) < 0:
                return None
            break
        size += len(k) + len(v)
    else:
        if size > MAX_KEY:
            return None
    return (tool, repr(input), None if cwd is None else str(cwd), mode)


def _size(value: object, budget: int, depth: int = 0) -> int:
    """``budget`` less about the length of ``value``'s repr; -1 when that is over budget,
    too deep, or ``value`` is not JSON data (str keys; str, int, float, bool, None)."""
    if type(value) is str:
        budget -= len(value) + 2
    elif type(value) is int or type(value) is bool or type(value) is float or value is None:
        budget -= 8
    elif type(value) is dict and depth < 16:
        for k, v in value.items():
            if type(k) is not str:
                return -1
            budget = _size(v, budget - len(k) - 4, depth + 1)
            if budget < 0:
                return -1
    elif type(value) is list and depth < 16:
        for v in value:
            budget = _size(v, budget - 2, depth + 1)
            if budget < 0:
                return -1
    else:
        return -1
    return budget if budget >= 0 else -1


def _decided_by(verdict: Verdict) -> DecidedBy:
    rule = verdict.rule
    if rule is not None and verdict.kind == "rule":
        return DecidedBy("rule", rule.text, rule.source)
    if verdict.kind == "sandbox":
        allowed = verdict.decision == "allow"
        key = "autoAllowBashIfSandboxed" if allowed else "allowUnsandboxedCommands"
        return DecidedBy("sandbox", f"sandbox.{key}")
    return DecidedBy(verdict.kind)


def _quote(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return f"`{text if len(text) <= limit else text[: limit - 1] + '…'}`"


def _combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Deny if any part is denied, allow only if every part is allowed, else ask.

    For an allow, the part named is the one with the widest reason: a mode that let a
    part through, else a rule, else the first part (read-only, inside the workspace).
    """
    active = [v for v in verdicts if v.step is not None]
    for wanted in ("deny", "ask"):
        for verdict in active:
            if verdict.decision == wanted:
                return verdict
    for kind in ("mode", "rule"):
        for verdict in active:
            if verdict.kind == kind:
                return verdict
    return active[0] if active else _NEUTRAL


class PermissionEngine:
    """Rules compiled once; :meth:`decide` is pure apart from reading symlinks.

    Decisions are remembered with what they read from the system (:mod:`observe`): the
    same call again is answered from memory once those reads give the same results
    (``memo=False`` decides every call afresh).
    """

    def __init__(
        self, config: Config, registry: ToolRegistry | None = None, *, memo: bool = True
    ) -> None:
        self.config = config
        self.memo = memo
        self._decisions: dict[
            tuple[str, str, str | None, str | None], tuple[tuple[Observation, ...], Decision]
        ] = {}
        self._seen: set[int] = set()  # hashes of keys seen once
        self.registry = registry
        self.home = normalise(os.path.expanduser("~"))
        self.workspace = normalise(os.path.abspath(config.workspace))
        roots = [self.workspace] + [
            absolute(str(d), self.workspace, self.home) for d in config.additional_directories
        ]
        self.boundary = Boundary.of(roots)
        self.anchors = variants(self.workspace)
        self.rules = RuleSet.build(self._compile(config.rules))
        #: Trees recursive readers went through: (directory mtimes, guarded path found).
        self.tree_cache: dict[str, tuple[tuple[tuple[str, int], ...], TreeGuard]] = {}
        #: Paths (a tuple git gave) and those of them a Read deny or ask rule covers.
        self.guarded_paths: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        #: A Read deny or ask rule exists: recursive readers are checked file by file.
        self.read_guarded = any(
            r.behavior in ("deny", "ask")
            and (r.family == "read" or (r.parsed.content is None and tool_name_matches(
                r.parsed, "Read")))
            for r in self.rules.rules
        )
        #: A deny or ask rule exists that a Bash command could run into (a Bash rule, or a
        #: file or web rule: a command can read, write or fetch anything). Under
        #: bypassPermissions what cannot be analysed then asks: the rule cannot be checked.
        self.bash_guarded = any(
            r.behavior in ("deny", "ask")
            and (r.parsed.tool_glob or not r.parsed.tool.startswith("mcp__"))
            for r in self.rules.rules
        )
        self._vetoes: OrderedDict[tuple[str, str], str | None] = OrderedDict()
        self._vetoes_lock = threading.Lock()
        self.sandbox: SandboxPolicy | None = None
        if config.sandbox.enabled:
            from toolrun.sandbox.policy import SandboxPolicy

            self.sandbox = SandboxPolicy.of(config)
        #: Why no jail can be made here (None: one can); probed on the first judged call.
        self.jail_unavailable: Callable[[], str | None] = lazy_probe(
            lambda: _jail_probe(config.sandbox.bwrap_path)
        )

    # ------------------------------------------------------------------ compile

    def _compile(self, rules: Sequence[PermissionRule]) -> list[CompiledRule]:
        compiled: list[CompiledRule] = []
        problems: list[Problem] = []
        counters: dict[tuple[str, str, str], int] = {}
        ws = variants(self.workspace)
        home = variants(self.home)
        for index, rule in enumerate(rules):
            key = (str(rule.source.file), str(rule.source.flag), rule.behavior)
            position = counters.get(key, 0)
            counters[key] = position + 1
            try:
                parsed = parse_rule(rule.text, behavior=rule.behavior)
                compiled.append(compile_rule(index, rule, parsed, workspace=ws, home=home))
            except RuleSyntaxError as exc:
                problems.append(self._problem(rule, position, str(exc)))
            except (ValueError, re.error) as exc:
                problems.append(self._problem(rule, position, f"{rule.text!r}: {exc}"))
        if problems:
            raise ConfigError(problems)
        return compiled

    @staticmethod
    def _problem(rule: PermissionRule, position: int, message: str) -> Problem:
        source = rule.source
        location = Location(str(source.file), source.line, 1) if source.file is not None else None
        where = f"permissions.{rule.behavior}[{position}]"
        if source.file is None:
            where = f"{source} {where}"
        return Problem(location, where, message)

    # ------------------------------------------------------------------ decide

    def decide(
        self,
        tool: str,
        input: Mapping[str, Any],
        *,
        cwd: Path | None = None,
        mode: str | None = None,
    ) -> Decision:
        """Allow, ask or deny for one call (``cwd``: the Bash working directory)."""
        if mode is not None and mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; expected one of {MODES}")
        key = _memo_key(tool, input, cwd, mode) if self.memo else None
        if key is None:
            return self._decide(tool, input, cwd, mode)
        hit = self._decisions.get(key)
        if hit is not None and unchanged(hit[0]):
            return hit[1]
        if hit is None and (seen := hash(key)) not in self._seen:
            # Remembered from its second time on: a decision holds many objects, and
            # keeping every one of a stream of new calls only feeds the garbage collector.
            if len(self._seen) >= DECISION_CACHE * 4:
                self._seen.clear()
            self._seen.add(seen)
            return self._decide(tool, input, cwd, mode)
        recording, outer = start()
        try:
            decision = self._decide(tool, input, cwd, mode)
        finally:
            stop(outer)
        if not recording.opaque:
            if len(self._decisions) >= DECISION_CACHE:
                self._decisions.clear()
            self._decisions[key] = (tuple(recording.log), decision)
        return decision

    def _decide(
        self, tool: str, input: Mapping[str, Any], cwd: Path | None, mode: str | None
    ) -> Decision:
        mode_name = mode or self.config.default_mode
        if mode is not None:
            mode_source = "the caller"
        elif self.config.mode_source is not None:
            mode_source = str(self.config.mode_source)
        else:
            mode_source = "built-in default"
        cwd_s = absolute(str(cwd), self.workspace, self.home) if cwd else self.workspace
        call = _Call(self, tool, input, cwd_s, mode_name)
        return call.decision(mode_source)

    def registered(self, tool: str) -> Tool[Any] | None:
        """The registry's tool of that name (None: not registered, or no registry)."""
        return self.registry.get(tool) if self.registry is not None else None

    def private_hosts(self) -> frozenset[str]:
        """Hosts a ``WebFetch(domain:...)`` allow rule names exactly (no wildcard): WebFetch
        may reach these even on a loopback, private or link-local address."""
        hosts: set[str] = set()
        for rule in self.rules.rules:
            parsed = rule.parsed
            if rule.behavior == "allow" and parsed.kind == "domain" and parsed.content:
                host = exact_host(parsed.content[len("domain:") :])
                if host is not None:
                    hosts.add(host)
        return frozenset(hosts)

    def read_veto(self, path: Path) -> str | None:
        """Why the rules keep ``path`` (absolute) out of Grep/Glob/LS results; None if not.

        A veto is a ``Read`` of the path that is denied, or that asks because of an ask
        rule or a protected path. A plain ask for a path outside the workspace is no veto:
        the call's own check of its search root already covers the boundary. Symlinks are
        resolved as :meth:`decide` resolves them (a deny rule matching the link or its
        target vetoes). Thread-safe; remembered per (path, symlink target), so a path that
        becomes a symlink is decided again.
        """
        resolved = resolve(str(path), self.workspace, self.home)
        key = (resolved.link, resolved.target)
        with self._vetoes_lock:
            if key in self._vetoes:
                self._vetoes.move_to_end(key)
                return self._vetoes[key]
        decision = self.decide("Read", {"file_path": resolved.link})
        veto: str | None = None
        if decision.decision == "deny" or (
            decision.decision == "ask" and decision.decided_by.kind in ("rule", "protected")
        ):
            veto = decision.reason
        # Remember it under what the decision actually saw (the link may have changed since).
        seen = next((t.resolved or t.target for t in decision.targets), None)
        if seen == resolved.target:
            with self._vetoes_lock:
                self._vetoes[key] = veto
                while len(self._vetoes) > READ_VETO_CACHE:
                    self._vetoes.popitem(last=False)
        return veto


class _Call:
    """The working state of one decision (not shared, not kept)."""

    def __init__(
        self, engine: PermissionEngine, tool: str, input: Mapping[str, Any], cwd: str, mode: str
    ) -> None:
        self.engine = engine
        self.tool = tool
        self.input = input
        self.cwd = cwd
        self.mode = mode
        self.subjects: list[tuple[Subject, Verdict]] = []
        self.boundary: list[BoundaryCheck] = []
        self.protected: list[str] = []

    # ------------------------------------------------------------------ the steps

    def verdict(
        self,
        s: Subject,
        *,
        protected: str | None = None,
        analysable: bool = True,
        problem: str = "",
        readonly: ReadOnly | None = None,
        inside: bool | None = None,
        edit_ok: bool = False,
    ) -> Verdict:
        """Decide one subject: deny, ask, protected, unanalysable, allow, read-only, boundary,
        mode — the first step that applies decides."""
        if protected is not None and protected not in self.protected:
            self.protected.append(protected)
        rules = self.engine.rules
        verdict = self._decide(
            s, rules, protected, analysable, problem, readonly, inside, edit_ok
        )
        self.subjects.append((s, verdict))
        return verdict

    def _decide(
        self,
        s: Subject,
        rules: RuleSet,
        protected: str | None,
        analysable: bool,
        problem: str,
        readonly: ReadOnly | None,
        inside: bool | None,
        edit_ok: bool,
    ) -> Verdict:
        rule = rules.first_match("deny", s)
        if rule is not None:
            return self._ruled("deny_rule", s, rule)
        rule = rules.first_match("ask", s)
        if rule is not None:
            return self._ruled("ask_rule", s, rule)
        if protected is not None:
            return self._stepped("protected", s, f"{self._what(s)}: {protected}")
        if s.constraint:
            # A file a Bash command names: rules never approve the command through it,
            # but outside the workspace it asks unless a Read/Edit allow rule covers it.
            if inside is not False:
                return _NEUTRAL
            rule = rules.first_match("allow", s)
            if rule is not None:
                return self._ruled("allow_rule", s, rule)
            return self._stepped("outside", s, f"{self._what(s)} is outside the workspace")
        # (what the subject is called: worked out only where a step says it)
        what = self._what(s)
        if not analysable:
            guarded = s.tool == "Bash" and self.engine.bash_guarded
            if guarded:
                # "A deny anywhere wins": a deny or ask rule cannot be checked against what
                # toolrun cannot read, so neither bypass, nor --ask allow, nor a hook's allow
                # waves it through.
                self.protected.append(f"{what} cannot be analysed while deny/ask rules exist")
            return self._stepped("unanalysable", s, f"{what} cannot be analysed ({problem}); "
                                 "no rule can allow it", guarded=guarded)
        rule = rules.first_match("allow", s)
        read_only = readonly is not None and readonly.read_only
        if rule is not None:
            verdict = self._ruled("allow_rule", s, rule)
            if verdict.decision == "allow" or not read_only:
                return verdict
            # plan mode refuses what an allow rule approves, but never a read-only command.
        if readonly is not None and read_only:
            return self._stepped("readonly", s, f"{what}: {readonly.reason}")
        if inside is False:
            return self._stepped("outside", s, f"{what} is outside the workspace")
        if inside is True and s.effect == "read":
            return self._stepped("workspace_read", s, f"{what} is inside the workspace")
        if edit_ok or (inside is True and s.effect == "write"):
            return self._stepped("workspace_write", s, f"{what} changes files in the workspace")
        why = f" ({readonly.reason})" if readonly is not None else ""
        return self._stepped("undecided", s, f"no rule allows {what}{why}")

    def _what(self, s: Subject) -> str:
        if s.kind == "command":
            return _quote(s.label)
        return f"{s.what} {s.label}".strip()

    def _ruled(self, step: Step, s: Subject, rule: CompiledRule) -> Verdict:
        outcome = apply_mode(step, s.effect, self.mode)
        reason = f"{rule.describe()} matches {self._what(s)}"
        if outcome.note:
            reason += f"; {outcome.note}"
        return Verdict(outcome.decision, outcome.kind, step, reason, rule)

    def _stepped(self, step: Step, s: Subject, reason: str, *, guarded: bool = False) -> Verdict:
        outcome = apply_mode(step, s.effect, self.mode, guarded=guarded)
        if outcome.note:
            reason += f"; {outcome.note}"
        return Verdict(outcome.decision, outcome.kind, step, reason)

    # ------------------------------------------------------------------ subjects

    def decision(self, mode_source: str) -> Decision:
        sandbox: str | None = None
        jail: str | None = None
        where: RunsIn | None = None
        if self.tool == "Bash":
            subcommands, problems, overall = self._bash()
            targets: tuple[TargetVerdict, ...] = ()
            sandboxed = False
            if self.engine.sandbox is not None:
                overall, sandbox, sandboxed = self._sandboxed(overall)
            overall, jail, where = self._enforced(overall, sandboxed)
        else:
            subcommands, problems = (), ()
            targets, overall = self._tool()
        decided_by = _decided_by(overall)
        reason = self._summary(overall, subcommands)
        if sandbox is not None and overall.kind != "sandbox":
            reason += f" [sandbox: {sandbox}]"
        subjects = tuple(self.subjects)
        rules = self.engine.rules.rules
        return Decision(
            decision=overall.decision,
            reason=reason,
            decided_by=decided_by,
            tool=self.tool,
            input=dict(self.input),
            mode=self.mode,
            mode_source=mode_source,
            workspace=self.engine.workspace,
            cwd=self.cwd,
            subcommands=subcommands,
            targets=targets,
            boundary=tuple(self.boundary),
            problems=problems,
            sandbox=sandbox,
            jail=jail,
            runs_in=where,
            protected=tuple(self.protected),
            trace=lambda: _trace(rules, subjects),
        )

    def _enforced(
        self, overall: Verdict, sandboxed: bool
    ) -> tuple[Verdict, str | None, RunsIn | None]:
        """The jail an allow on toolrun's own judgement runs in, and where the call runs.

        Under ``toolrun.enforce: required`` a judged allow that no jail can hold (none can
        be made here, or a rule-allowed part must run as configured) asks instead.
        """
        if overall.decision == "deny":
            return overall, None, None
        engine = self.engine
        enforce = engine.config.toolrun.enforce
        if overall.decision == "ask":
            return overall, None, RunsIn(configured_place(sandboxed),
                                         "if approved: runs as configured",
                                         configured_place(sandboxed))
        if self.mode == "bypassPermissions" or overall.kind == "sandbox":
            # what the mode or autoAllowBashIfSandboxed allows is the user's own choice
            who = "bypassPermissions" if overall.kind != "sandbox" else \
                "sandbox.autoAllowBashIfSandboxed"
            return overall, None, RunsIn(configured_place(sandboxed),
                                         f"allowed by {who}: runs as configured",
                                         configured_place(sandboxed))
        judgement = judge(self.subjects)
        jail: str | None = None
        if judgement.jail is not None and judgement.ruled is None and enforce != "off":
            jail = judgement.jail
        # (probed only where the answer changes the decision: a bubblewrap start costs a
        # check tens of ms; under auto the executor says once per run where none exists)
        unavailable = (
            engine.jail_unavailable() if jail is not None and enforce == "required" else None
        )
        if enforce == "required" and (judgement.mixed or (unavailable and judgement.needed)):
            why = (f"{judgement.ruled} is allowed by a rule, so no jail can hold the rest"
                   if judgement.mixed else f"no jail can be made here: {unavailable}")
            outcome = apply_mode("undecided", "execute", self.mode)
            reason = (f"toolrun.enforce: required and the call is allowed on toolrun's "
                      f"judgement, but {why}")
            if outcome.decision == "deny":
                reason += f"; {outcome.note}"
            if outcome.decision == "deny":
                return Verdict("deny", "default", "undecided", reason), None, None
            return Verdict("ask", "default", "undecided", reason), None, RunsIn(
                configured_place(sandboxed), "if approved: runs as configured",
                configured_place(sandboxed))
        decided = "a rule" if judgement.ruled is not None else "toolrun's judgement"
        where = runs_in(jail=jail, judgement=judgement, sandboxed=sandboxed, enforce=enforce,
                        unavailable=unavailable, decided=decided)
        return overall, jail, where

    def _sandboxed(self, overall: Verdict) -> tuple[Verdict, str, bool]:
        """``autoAllowBashIfSandboxed`` and ``allowUnsandboxedCommands`` (Claude Code's sandbox).

        A sandboxed call that would ask (or that dontAsk turned into deny) is allowed, unless
        an explicit ask or deny rule, a protected or critical path, a part that cannot be
        analysed or plan mode decided it. A call that would leave the sandbox is denied when
        ``allowUnsandboxedCommands`` is false.
        """
        policy = self.engine.sandbox
        assert policy is not None
        opaque()  # the sandbox's availability probe
        placement = policy.placement(self.input)
        sandboxed = placement.sandboxed
        if placement.leaves_on_request and not policy.settings.allow_unsandboxed:
            if overall.decision == "deny":  # a deny rule says it first
                return overall, placement.reason, sandboxed
            return Verdict("deny", "sandbox", None, placement.reason), placement.reason, sandboxed
        if (
            overall.decision == "allow"
            or not placement.sandboxed
            or not policy.settings.auto_allow_bash
            or self.mode == "plan"
        ):
            return overall, placement.reason, sandboxed
        for _, verdict in self.subjects:
            if verdict.decision == "allow":
                continue
            if verdict.step in ("deny_rule", "ask_rule", "protected", "unanalysable"):
                return overall, placement.reason, sandboxed
        reason = (
            f"the call runs sandboxed (bubblewrap) and sandbox.autoAllowBashIfSandboxed is on; "
            f"without the sandbox: {overall.reason}"
        )
        return Verdict("allow", "sandbox", None, reason), placement.reason, sandboxed

    def _summary(self, overall: Verdict, subcommands: Sequence[SubcommandVerdict]) -> str:
        word = {"allow": "allowed", "ask": "needs approval", "deny": "denied"}[overall.decision]
        if overall.decision == "allow" and len(subcommands) > 1:
            return f"{word}: every sub-command is allowed; {overall.reason}"
        return f"{word}: {overall.reason}"

    def _check_boundary(self, what: str, path: ResolvedPath) -> bool:
        inside, root = self.engine.boundary.placed(path)
        self.boundary.append(
            BoundaryCheck(
                what, path.link, path.target if path.via_symlink else None, inside, root
            )
        )
        return inside

    # ------------------------------------------------------------------ non-Bash tools

    def _tool(self) -> tuple[tuple[TargetVerdict, ...], Verdict]:
        tool = self.tool
        targets: list[TargetVerdict] = []
        verdicts: list[Verdict] = []

        def add(s: Subject, verdict: Verdict, resolved: ResolvedPath | None = None,
                inside: bool | None = None) -> None:
            verdicts.append(verdict)
            targets.append(
                TargetVerdict(
                    what=s.what or s.kind,
                    target=s.label,
                    access=s.effect,
                    decision=verdict.decision,
                    decided_by=_decided_by(verdict),
                    reason=verdict.reason,
                    resolved=resolved.target if resolved and resolved.via_symlink else None,
                    inside=inside,
                )
            )

        if tool in PATH_FIELDS or tool == "ApplyPatch":
            for field_name, family, raw in self._tool_paths():
                effect: Effect = "read" if family == "read" else "write"
                if not isinstance(raw, str):
                    s = Subject(
                        "problem", tool, field_name, effect, what="input", params=self.input
                    )
                    problem = raw.problem if raw is not None else (
                        f"{field_name} is missing or not a non-empty string")
                    add(s, self.verdict(s, analysable=False, problem=problem))
                    continue
                try:
                    path = resolve_tool_path(raw, base=self.engine.workspace,
                                             home=self.engine.home, field=field_name)
                except PathInputError as exc:
                    s = Subject(
                        "problem", tool, field_name, effect, what="input", params=self.input
                    )
                    add(s, self.verdict(s, analysable=False, problem=str(exc)))
                    continue
                s = Subject("path", tool, path.link, effect, path=path, family=family,
                            what=field_name, params=self.input)
                inside = self._check_boundary(field_name, path)
                protected = (
                    protected_reason(path, self.engine.boundary) if effect == "write" else None
                )
                add(s, self.verdict(s, protected=protected, inside=inside), path, inside)
        elif tool == "WebFetch":
            url = self.input.get("url")
            text = url if isinstance(url, str) else ""
            host = url_host(text)
            s = Subject("domain", tool, text or "(no url)", "network", host=host.name,
                        what="url", params=self.input)
            add(s, self.verdict(s, analysable=host.name is not None,
                                problem=host.problem or ""))
        else:
            for s, kw in self._registry_subjects():
                where = kw.get("inside")
                add(s, self.verdict(s, **kw), s.path, where if isinstance(where, bool) else None)
        return tuple(targets), _combine(verdicts)

    def _tool_paths(self) -> list[tuple[str, Family, str | _Unknown | None]]:
        """Each path the call touches, as the tool will read it (the tool's own parsers)."""
        tool = self.tool
        if tool == "ApplyPatch":
            from toolrun.tools.builtins._patch import PatchSyntaxError, parse_patch

            patch = self.input.get("patch", self.input.get("input"))
            if not isinstance(patch, str):
                return [("patch", "edit", None)]
            try:
                files = list(dict.fromkeys(parse_patch(patch).paths()))
            except PatchSyntaxError as exc:
                return [("patch", "edit", _Unknown(str(exc)))]
            return [("patch file", "edit", f) for f in files]
        field_name, family, required = PATH_FIELDS[tool]
        value = self.input.get(field_name)
        out: list[tuple[str, Family, str | _Unknown | None]]
        if value is None and not required:
            out = [(field_name, family, self.engine.workspace)]
        elif isinstance(value, str) and value:
            out = [(field_name, family, value)]
        else:
            out = [(field_name, family, None)]
        if tool == "Glob":
            pattern = self.input.get("pattern")
            root = out[0][2]
            if isinstance(pattern, str) and isinstance(root, str):
                engine = self.engine
                try:
                    base = resolve_tool_path(root, base=engine.workspace, home=engine.home)
                    directory, _rest = glob_base(pattern, root=base.link, home=engine.home)
                except PathInputError as exc:
                    out.append(("pattern", family, _Unknown(str(exc))))
                else:
                    if directory != base.link:
                        out.append(("pattern", family, directory))
        return out

    def _registry_subjects(self) -> list[tuple[Subject, dict[str, Any]]]:
        tool = self.tool
        registered = observe(self.engine.registered, tool)
        own = claude_tool(tool) if registered is None else None
        if own is not None:  # Claude Code's own tools, as its docs decide them
            return [claude_subject(own, self.input)]
        if registered is None:
            effect: Effect = "execute"
            return [(Subject("tool", tool, tool, effect, what="tool", params=self.input), {})]
        opaque()  # the tool's own affected_paths may read anything
        kind = str(getattr(registered.kind, "value", registered.kind))
        effect = _EFFECTS.get(kind, "execute")
        try:
            from toolrun.tools.base import ToolContext

            validated = registered.input_model.model_validate(dict(self.input))
            context = ToolContext(workspace=Path(self.engine.workspace), cwd=Path(self.cwd))
            paths = tuple(registered.affected_paths(validated, context))
        except (ValueError, TypeError, KeyError, AttributeError, OSError, ToolError) as exc:
            s = Subject("problem", tool, tool, effect, what="input", params=self.input)
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            problem = f"the input does not validate: {message}"
            return [(s, {"analysable": False, "problem": problem})]
        if not paths:
            return [(Subject("tool", tool, tool, effect, what="tool", params=self.input), {})]
        family: Family = "read" if effect == "read" else "edit"
        path_effect: Effect = "read" if effect == "read" else "write"
        out: list[tuple[Subject, dict[str, Any]]] = []
        for p in paths:
            path = resolve(str(p), self.engine.workspace, self.engine.home)
            s = Subject("path", tool, path.link, path_effect, path=path, family=family,
                        what="path", params=self.input)
            inside = self._check_boundary("path", path)
            protected = (
                protected_reason(path, self.engine.boundary) if path_effect == "write" else None
            )
            out.append((s, {"inside": inside, "protected": protected}))
        return out

    # ------------------------------------------------------------------ Bash

    def _bash(self) -> tuple[tuple[SubcommandVerdict, ...], tuple[str, ...], Verdict]:
        command = self.input.get("command")
        if not isinstance(command, str):
            s = Subject("problem", "Bash", "command", "execute", what="input", params=self.input)
            verdict = self.verdict(
                s, analysable=False, problem="command is missing or not a string"
            )
            return (), ("command is missing or not a string",), verdict
        analysis = analyse(command)
        # (the same verdicts the grouping of calls into runs worked out, if it did)
        checked = bash_verdicts(command, self.cwd, self.engine.home, self.engine.boundary)
        settled = checked.settled
        subcommands: list[SubcommandVerdict] = []
        verdicts: list[Verdict] = []
        for index, (cmd, cwd, readonly) in enumerate(
            zip(checked.commands, checked.cwds, checked.verdicts, strict=True)
        ):
            sub = self._subcommand(index, cmd, cwd, readonly, settled)
            subcommands.append(sub[0])
            verdicts.append(sub[1])
        if analysis.problems:
            s = Subject("problem", "Bash", command, "execute", what="the command", params=self.input)
            problem = self.verdict(s, analysable=False, problem="; ".join(analysis.problems))
            verdicts.insert(0, problem)
        return tuple(subcommands), analysis.problems, _combine(verdicts)

    def _subcommand(
        self, index: int, cmd: SimpleCommand, cwd: str | None, checked: ReadOnly, settled: bool
    ) -> tuple[SubcommandVerdict, Verdict]:
        engine = self.engine
        home = engine.home
        s = Subject("command", "Bash", cmd.text, "execute", command=cmd, params=self.input)
        args = path_arguments(cmd)
        # -- a file command behind a deny-only wrapper opens its files all the same
        # (`env cat .env`, `exec cat .env`): Read and Edit rules see them (red team, #24)
        args = (*args, *wrapped_arguments(cmd))
        wrapped_reads, wrapped_writes = wrapped_option_files(cmd)
        # --
        option_files = (*programs.option_reads(cmd.effective), *wrapped_reads)
        readonly = checked
        if cmd.kind == "redirects" and cmd.analysable:
            readonly = ReadOnly(True, "only redirections, no command runs")
        if cmd.name in ("cd", "pushd") and cmd.analysable:
            for directory in cd_destinations(cmd, cwd, home) or ():
                self._check_boundary("cd", resolve(directory, "/", home))
        critical = self._critical(cmd, cwd)
        edit_ok = self.mode in ("acceptEdits", "bypassPermissions") and self._file_op_inside(
            cmd, args, cwd
        )
        analysable = cmd.analysable
        problem = f"found inside {cmd.context}" if cmd.context else "not analysable"
        read_only = readonly is not None and readonly.read_only
        if analysable and not read_only and programs.options_matter(cmd.name):
            # (a read-only verdict already checked every word where an option can stand)
            # `find . -{delete,print}`, `find . -del*`: bash makes the option; no rule
            # may trust a word that is not fixed where an option can stand.
            values = programs.value_options(cmd.name)
            refused, _notes = option_words(cmd.effective, cwd, home, values,
                                           expand_globs=settled)
            if refused is not None:
                analysable, problem = False, refused.reason
        verdict = self.verdict(
            s,
            protected=critical,
            analysable=analysable,
            problem=problem,
            readonly=readonly,
            edit_ok=edit_ok,
        )
        parts = [verdict]
        targets: list[TargetVerdict] = []
        for redirect in cmd.redirects:
            if not redirect.writes or redirect.target is None:
                continue
            word = redirect.target
            what = f"redirect {redirect.op}"
            if word.value in EXEMPT_WRITE_TARGETS:
                continue
            self._write(word, what, cwd, "the target is only known when the command runs",
                        parts, targets)
        # -- files a program writes by option or form, content it prints from history
        # (programs.git: `git log --output=F`, `git config K V`, `git show HEAD:.env`)
        if cmd.analysable and programs.has(cmd.name, "file_writes"):
            self._program_effects(cmd, cwd, parts, targets)
        # --
        # Writes hidden in options (`sort -o F`, `curl -o F`, `find -fprint F`, `uniq IN
        # OUT`): checked as redirect targets are, so Edit rules, the boundary and protected
        # paths hold in every mode, bypassPermissions included.
        written = (*programs.option_writes(cmd.effective), *wrapped_writes)
        for word in written if cmd.analysable else ():
            self._write(word, f"{cmd.name} writes", cwd,
                        "the file it writes is only known when it runs", parts, targets)
        # -- copies carry the rules of what they copy (issue 24, point 7) --------------
        if cmd.analysable and is_copier(cmd.name):
            copy = carried(cmd.effective)
            if copy is not None:
                parts.extend(self._carried(cmd, copy, args, cwd, targets))
        # -- (end of the copies block) ------------------------------------------------
        recursive = programs.recursive(cmd.effective)
        fed = _fed_by_xargs(cmd)
        if not (args or option_files or cmd.redirects or recursive or fed):
            return self._finish(index, cmd, parts, targets)  # (the usual `npm test`)
        reads = [(arg.word, arg.access, f"{cmd.name} argument") for arg in args]
        if fed:
            # `find . | xargs grep K`: the files (or `--file=` options) come from stdin,
            # so a Read deny or ask rule cannot be checked against them
            reads.append((Word("<words from standard input>", None), "read", "xargs argument"))
        reads += [(w, "read", f"{cmd.name} option") for w in option_files]
        for redirect in cmd.redirects:
            if redirect.target is None:
                continue
            if redirect.network:
                self._unanalysable_redirect(
                    redirect.target.raw, f"redirect {redirect.op}", "network",
                    "bash opens a network connection (/dev/tcp, /dev/udp)", parts, targets,
                )
            elif redirect.reads:
                reads.append((redirect.target, "read", f"redirect {redirect.op}"))
        read_dirs: list[ResolvedPath] = []
        for word, access, what in reads:
            paths = self._word_paths(word, cwd)
            if paths is None:
                if what.startswith("redirect") or (access == "read" and engine.read_guarded):
                    # A Read deny or ask rule cannot be checked against `cat $HOME/...`.
                    self._unanalysable_redirect(
                        word.raw, what, "read", "the file read is only known when the command "
                        "runs", parts, targets,
                    )
                continue
            for path in paths:
                effect: Effect = "read" if access == "read" else "write"
                family: Family = "read" if access == "read" else "edit"
                cs = Subject("path", "Bash", path.link, effect, path=path, family=family,
                             constraint=True, what=what)
                protected = protected_reason(path, engine.boundary) if effect == "write" else None
                inside = self._check_boundary(what, path)
                cv = self.verdict(cs, protected=protected, inside=inside)
                if cv.step is not None:
                    parts.append(cv)
                targets.append(self._target(what, path.link, effect, cv, path, inside))
                if effect == "read" and not what.startswith("redirect"):
                    read_dirs.append(path)
        if (
            recursive and cmd.analysable and _combine(parts).decision == "allow"
        ):
            # (only an allowed part can be changed by the tree's ask: an ask or a deny
            # already decided it, and an appended ask never comes first)
            parts.extend(self._tree_reads(cmd, read_dirs, cwd))
        return self._finish(index, cmd, parts, targets)

    def _program_effects(
        self,
        cmd: SimpleCommand,
        cwd: str | None,
        parts: list[Verdict],
        targets: list[TargetVerdict],
    ) -> None:
        """Writes a program's options name are file writes, checked in every mode (Edit
        rules, protected paths, the boundary); content it prints out of history is a read
        of each Read-guarded path it could print (deny wins, ask asks)."""
        engine = self.engine
        ctx = programs.Context(cwd, engine.home, engine.boundary)
        argv = cmd.effective
        what = f"{cmd.name} writes"
        writes = programs.file_writes(argv, ctx)
        if writes is None:
            self._unanalysable_redirect(cmd.text, what, "write", "the file it writes is only "
                                        "known when it runs", parts, targets)
        for word in writes or ():
            self._write(word, what, cwd, "the file it writes is only known when it runs",
                        parts, targets)
        if not engine.read_guarded:
            return  # (no Read deny or ask rule: nothing printed can be refused)
        printed = programs.content_reads(argv, ctx, self._guarded)
        what = f"{cmd.name} prints the content of"
        if printed is None:
            self._unanalysable_redirect(cmd.text, what, "read", "toolrun cannot tell which "
                                        "files' content it prints, and Read deny/ask rules "
                                        "exist", parts, targets)
            return
        for p in printed:
            path = ResolvedPath(p, p, p)  # content out of git: no symlink is followed
            rs = Subject("path", "Bash", p, "read", path=path, family="read",
                         constraint=True, what=what)
            rv = self.verdict(rs)
            if rv.step is not None:
                parts.append(rv)
            targets.append(self._target(what, p, "read", rv, path, None))

    def _guarded(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """Of ``paths``, those a Read deny or ask rule covers (remembered per tuple: git
        gives the same one while its repository is unchanged)."""
        cache = self.engine.guarded_paths
        hit = cache.get(id(paths))
        if hit is not None and hit[0] is paths:
            return hit[1]
        rules = self.engine.rules
        found: list[str] = []
        for p in paths:
            s = Subject("path", "Read", p, "read", path=ResolvedPath(p, p, p), family="read")
            if rules.first_match("deny", s) or rules.first_match("ask", s):
                found.append(p)
        if len(cache) > 64:
            cache.clear()
        cache[id(paths)] = (paths, tuple(found))
        return tuple(found)

    @staticmethod
    def _finish(
        index: int, cmd: SimpleCommand, parts: list[Verdict], targets: list[TargetVerdict]
    ) -> tuple[SubcommandVerdict, Verdict]:
        combined = _combine(parts)
        return (
            SubcommandVerdict(
                index=index,
                command=cmd.text,
                context=cmd.context,
                decision=combined.decision,
                decided_by=_decided_by(combined),
                reason=combined.reason,
                targets=tuple(targets),
            ),
            combined,
        )

    def _write(
        self,
        word: Word,
        what: str,
        cwd: str | None,
        unknown: str,
        parts: list[Verdict],
        targets: list[TargetVerdict],
    ) -> None:
        """A file the command writes (a redirection, ``sort -o F``, ``git config K V``):
        the boundary, Edit rules and protected paths, in every mode."""
        path = word_path(word, cwd, self.engine.home)
        if path is None:
            self._unanalysable_redirect(word.raw, what, "write", unknown, parts, targets)
            return
        s = Subject("path", "Bash", path.link, "write", path=path, family="edit",
                    redirect=True, what=what)
        inside = self._check_boundary(what, path)
        verdict = self.verdict(s, protected=protected_reason(path, self.engine.boundary),
                               inside=inside)
        parts.append(verdict)
        targets.append(self._target(what, path.link, "write", verdict, path, inside))

    def _unanalysable_redirect(
        self,
        label: str,
        what: str,
        effect: Effect,
        problem: str,
        parts: list[Verdict],
        targets: list[TargetVerdict],
    ) -> None:
        """A redirection toolrun cannot check (dynamic target, network): no rule allows it."""
        s = Subject("problem", "Bash", label, effect, what=what, redirect=True)
        verdict = self.verdict(s, analysable=False, problem=problem)
        parts.append(verdict)
        targets.append(self._target(what, label, effect, verdict, None, None))

    def _word_paths(self, word: Word, cwd: str | None) -> tuple[ResolvedPath, ...] | None:
        """The paths a file word names: every current match of a glob (each is checked)."""
        home = self.engine.home
        if word.glob:
            matches = glob_matches(word, cwd, home)
            if matches is not None:
                return matches
            directory = glob_directory(word, cwd, home)
            return (directory,) if directory is not None else None
        path = word_path(word, cwd, home)
        return (path,) if path is not None else None

    def _carried(
        self,
        cmd: SimpleCommand,
        copy: Carried,
        args: Sequence[PathArgument],
        cwd: str | None,
        targets: list[TargetVerdict],
    ) -> list[Verdict]:
        """A copy, move, link or archive reads all it carries and writes where it lands.

        Each source is a read (a ``mv`` too: the content becomes readable elsewhere), and a
        source directory is a read of every guarded path below it, decided by the rule
        covering it: a Read deny denies the copy, a Read ask asks, in every mode. The
        destinations the file-command reader does not already check are writes.
        """
        engine = self.engine
        parts: list[Verdict] = []
        what = f"{copy.program} copies"
        if engine.read_guarded or copy.follows:
            if copy.problem is not None and engine.read_guarded:
                self._unanalysable_redirect(
                    cmd.text, "the copy", "read", f"what it copies cannot be told: {copy.problem}",
                    parts, targets,
                )
            already = {id(a.word) for a in args if a.access == "read"}
            for word in copy.sources:
                paths = self._word_paths(word, cwd)
                if paths is None:
                    if not engine.read_guarded:
                        continue
                    self._unanalysable_redirect(
                        word.raw, what, "read", "the files copied are only known when the "
                        "command runs", parts, targets,
                    )
                    continue
                for path in paths:
                    if id(word) not in already and engine.read_guarded:
                        s = Subject("path", "Bash", path.link, "read", path=path,
                                    family="read", constraint=True, what=what)
                        inside = self._check_boundary(what, path)
                        verdict = self.verdict(s, inside=inside)
                        if verdict.step is not None:
                            parts.append(verdict)
                        targets.append(self._target(what, path.link, "read", verdict, path,
                                                    inside))
                    if observe(os.path.isdir, path.target):
                        parts.extend(self._carried_tree(copy, path, targets))
        written = {id(a.word) for a in args if a.access == "write"}
        home = engine.home
        for word in copy.destinations:
            if id(word) in written or word.value in EXEMPT_WRITE_TARGETS:
                continue
            where = f"{copy.program} writes"
            dest = word_path(word, cwd, home)
            if dest is None:
                self._unanalysable_redirect(
                    word.raw, where, "write", "where it writes is only known when the "
                    "command runs", parts, targets,
                )
                continue
            s = Subject("path", "Bash", dest.link, "write", path=dest, family="edit",
                        constraint=True, what=where)
            inside = self._check_boundary(where, dest)
            verdict = self.verdict(s, protected=protected_reason(dest, engine.boundary),
                                   inside=inside)
            if verdict.step is not None:
                parts.append(verdict)
            targets.append(self._target(where, dest.link, "write", verdict, dest, inside))
        return parts

    def _carried_tree(
        self, copy: Carried, root: ResolvedPath, targets: list[TargetVerdict]
    ) -> list[Verdict]:
        """The guarded path a copied tree holds (through the links it follows), decided as
        a read of it by the rule that covers it (too large a tree asks); a followed link
        that leads out of the workspace is a read out there."""
        engine = self.engine
        guarded = engine.read_guarded
        found = observe(_guarded_below, engine, root) if guarded else None
        outside: list[Verdict] = []
        if copy.follows:
            linked = observe(linked_trees, root.target)
            if linked[-1:] == ("",):
                found = found or (f"the links below {root.link}", None)
            for tree in linked:
                if not tree:
                    continue
                path = resolve(tree, "/", engine.home)
                what = f"{copy.program} follows a link below {root.link} to"
                if not self._check_boundary(what, path):
                    s = Subject("path", "Bash", path.link, "read", path=path, family="read",
                                constraint=True, what=what)
                    verdict = self.verdict(s, inside=False)
                    if verdict.step is not None:
                        outside.append(verdict)
                if guarded and found is None:
                    found = observe(_guarded_below, engine, path)
        if found is None:
            return outside
        label, rule = found
        what = f"{copy.program} carries {root.link} (and what is in it)"
        carried_path = resolve(label, "/", engine.home)
        s = Subject("path", "Bash", label, "read", path=carried_path, family="read",
                    constraint=True, what=what)
        if rule is None:
            # Like an ask rule: bypassPermissions does not wave it through.
            outcome = apply_mode("ask_rule", "read", self.mode)
            verdict = Verdict(outcome.decision, "default", "ask_rule",
                              f"{what}: {label}, too much to check (Read deny/ask rules exist)")
        else:
            step: Step = "deny_rule" if rule.behavior == "deny" else "ask_rule"
            outcome = apply_mode(step, "read", self.mode)
            reason = f"{what}; {rule.describe()} covers {label}, which the copy carries"
            verdict = Verdict(outcome.decision, "rule", step, reason, rule)
        self.subjects.append((s, verdict))
        targets.append(self._target(what, label, "read", verdict, carried_path, None))
        return [verdict, *outside]

    def _tree_reads(
        self, cmd: SimpleCommand, paths: Sequence[ResolvedPath], cwd: str | None
    ) -> list[Verdict]:
        """A recursive reader (``grep -r``, ``rg``, ``find``, ``tree``) over a directory that
        holds a path a Read deny or ask rule covers asks (as Claude Code does)."""
        engine = self.engine
        if not engine.read_guarded:
            return []
        roots = [p for p in paths if observe(os.path.isdir, p.target)]
        if not paths:
            if cwd is None:
                return []
            roots = [resolve(cwd, "/", engine.home)]
        for root in roots:
            found = observe(_guarded_below, engine, root)
            if found is None:
                continue
            label, rule = found
            what = f"{cmd.name} reads {root.link} recursively"
            s = Subject("path", "Bash", label, "read", path=resolve(label, "/", engine.home),
                        family="read", constraint=True, what=what)
            # Like an ask rule: bypassPermissions does not wave it through.
            outcome = apply_mode("ask_rule", "read", self.mode)
            if rule is None:
                reason = f"{what}, which has {label} (Read deny/ask rules exist)"
                verdict = Verdict(outcome.decision, "default", "ask_rule", reason)
            else:
                reason = f"{what}, and {rule.describe()} covers {label} inside it"
                verdict = Verdict(outcome.decision, "rule", "ask_rule", reason, rule)
            self.subjects.append((s, verdict))
            return [verdict]
        return []

    @staticmethod
    def _target(
        what: str,
        target: str,
        access: str,
        verdict: Verdict,
        path: ResolvedPath | None,
        inside: bool | None,
    ) -> TargetVerdict:
        neutral = verdict.step is None
        return TargetVerdict(
            what=what,
            target=target,
            access=access,
            decision=None if neutral else verdict.decision,
            decided_by=None if neutral else _decided_by(verdict),
            reason=verdict.reason or "no deny or ask rule and no protection applies",
            resolved=path.target if path is not None and path.via_symlink else None,
            inside=inside,
        )

    def _critical(self, cmd: SimpleCommand, cwd: str | None) -> str | None:
        """Why this command removes a critical path (``/``, ~, the workspace or a parent)."""
        argvs = _rm_argvs(cmd)
        finds = _emptying_finds(cmd)
        if not argvs and not finds:
            return None
        home = self.engine.home
        anchors = [*self.engine.anchors, *(variants(cwd) if cwd else ())]
        for argv in finds:
            why = self._find_critical(argv, cwd, anchors)
            if why is not None:
                return why
        for argv in argvs:
            options_done = False
            for word in argv[1:]:
                text = word.text
                if not options_done and text.startswith("-") and text != "-":
                    options_done = text == "--"
                    continue
                if word.value is None:
                    return f"rm of {word.raw}, which is only known when the command runs"
                if word.glob:
                    directory = glob_directory(word, cwd, home)
                    last = word.value.rstrip("/").rsplit("/", 1)[-1]
                    if directory is None:
                        return f"rm of {word.raw} in a directory toolrun cannot determine"
                    if any(c in last for c in "*?["):
                        why = critical_reason(directory, home=home, anchors=anchors)
                        if why is not None:
                            return f"rm of {word.raw} empties {directory.link}: {why}"
                    # `rm -rf src/*/../ws`: a match is src/link/../ws, which may be anything.
                    matches = glob_matches(word, cwd, home)
                    if matches is None:
                        if ".." in word.value.split("/"):
                            return f"rm of {word.raw}, whose matches toolrun cannot list"
                        continue
                    for match in matches:
                        why = critical_reason(match, home=home, anchors=anchors)
                        if why is not None:
                            return f"rm of {word.raw} matches {match.link}: {why} (critical path)"
                    continue
                path = word_path(word, cwd, home)
                if path is None:
                    if word.tilde:  # ~- is $OLDPWD, ~N the directory stack: unknown here
                        return f"rm of {word.raw}, which is only known when the command runs"
                    # `(cd .. && rm -rf proj)`: relative to a directory toolrun could not
                    # follow, any name may be the workspace or a parent.
                    return f"rm of {text} in a directory toolrun cannot determine"
                why = critical_reason(path, home=home, anchors=anchors)
                if why is not None:
                    return f"rm of {path.link}: {why} (critical path)"
                missing = unsettled(word_text(word, cwd, home) or "")
                if missing is not None:
                    # `ln -s /T x && rm -rf x/../ws`: the `..` leaves whatever x becomes.
                    return (f"rm of {text}: its '..' follows {missing}, which does not exist "
                            "yet, so toolrun cannot tell where it leads")
        return None

    def _find_critical(
        self, argv: tuple[Word, ...], cwd: str | None, anchors: Sequence[str]
    ) -> str | None:
        """``find ROOT -delete`` (or ``-exec rm``) with no test that narrows it empties
        ROOT: a critical ROOT (``/``, ~, the workspace or a parent) is as ``rm -rf``."""
        home = self.engine.home
        roots = _find_roots(argv) or (Word(".", "."),)
        for word in roots:
            if word.value is None:
                return f"find {word.raw} -delete, a directory only known when the command runs"
            path = (glob_directory(word, cwd, home) if word.glob
                    else word_path(word, cwd, home))
            if path is None:
                return f"find {word.raw} -delete in a directory toolrun cannot determine"
            why = critical_reason(path, home=home, anchors=anchors)
            if why is not None:
                return f"find {word.raw} deletes everything under {path.link}: {why} " \
                       "(critical path)"
        return None

    def _file_op_inside(
        self, cmd: SimpleCommand, args: Sequence[Any], cwd: str | None
    ) -> bool:
        """acceptEdits: mkdir/touch/mv/cp/rm/rmdir whose files are all inside the workspace."""
        if cmd.name not in ACCEPT_EDITS_COMMANDS or not cmd.analysable or cmd.unsafe_env:
            return False
        if not args:
            return False
        home = self.engine.home
        for arg in args:
            word = arg.word
            paths = self._word_paths(word, cwd)
            if word.glob:  # its folder too: what `*` may match by the time it runs
                directory = glob_directory(word, cwd, home)
                paths = None if paths is None or directory is None else (*paths, directory)
            if paths is None or not all(self.engine.boundary.contains(p) for p in paths):
                return False
        for redirect in cmd.redirects:
            if redirect.writes:
                return False
        return True


def _jail_probe(bwrap_path: str | None) -> Any:
    # (the jail is made with bubblewrap, as the sandbox is: one probe serves both)
    from toolrun.sandbox.availability import probe

    return probe(bwrap_path)


#: A guarded path below a tree and the rule covering it (None: too large to check).
TreeGuard = tuple[str, "CompiledRule | None"] | None
#: How many entries a recursive read is checked over before it simply asks.
MAX_TREE_ENTRIES = 5000


def _guarded_below(engine: PermissionEngine, root: ResolvedPath) -> TreeGuard:
    """A path under ``root`` that a Read deny/ask rule covers (with the rule); a rule of
    None means the tree is too large to check. None when nothing is covered.

    Remembered per tree until a directory in it changes (names only matter, and adding,
    removing or renaming an entry changes its directory's mtime)."""
    cache = engine.tree_cache
    cached = cache.get(root.target)
    if cached is not None and _mtimes(cached[0]) == cached[0]:
        return cached[1]  # no directory of the tree changed since it was checked
    entries: list[str] = []
    directories: list[str] = []
    for directory, dirs, files in os.walk(root.target):
        directories.append(directory)
        entries.extend(posixpath.join(directory, name) for name in (*dirs, *files))
        if len(entries) > MAX_TREE_ENTRIES:
            return f"more than {MAX_TREE_ENTRIES} entries to check", None
    signature = _mtimes(tuple((d, 0) for d in directories))
    found: TreeGuard = None
    for full in entries:
        path = resolve(full, "/", engine.home)
        s = Subject("path", "Read", path.link, "read", path=path, family="read")
        rule = engine.rules.first_match("deny", s) or engine.rules.first_match("ask", s)
        if rule is not None:
            found = (path.link, rule)
            break
    if len(cache) > 256:
        cache.clear()
    cache[root.target] = (signature, found)
    return found


def _mtimes(signature: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for directory, _old in signature:
        try:
            out.append((directory, os.stat(directory).st_mtime_ns))
        except OSError:
            out.append((directory, -1))
    return tuple(out)


def _fed_by_xargs(cmd: SimpleCommand) -> bool:
    """``xargs PROGRAM``: the program is given words read from standard input."""
    stripped = len(cmd.words) - len(cmd.effective)
    return stripped > 0 and any(w.value == "xargs" for w in cmd.words[:stripped])


#: find(1) tests that narrow what -delete removes (with a pattern other than ``*``).
_FIND_NARROWING = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
     "-lname", "-ilname", "-empty", "-newer", "-anewer", "-cnewer", "-mtime", "-atime",
     "-ctime", "-mmin", "-amin", "-cmin", "-size", "-samefile", "-inum", "-links", "-perm",
     "-user", "-group", "-uid", "-gid", "-nouser", "-nogroup", "-used"}
)  # fmt: skip
#: Operators under which a narrowing test no longer guards the -delete.
_FIND_OPERATORS = frozenset({"-o", "-or", ",", "!", "-not"})
_FIND_START_OPTIONS = frozenset({"-H", "-L", "-P"})


def _emptying_finds(cmd: SimpleCommand) -> tuple[tuple[Word, ...], ...]:
    """The ``find`` argvs of ``cmd`` that delete (``-delete``, ``-exec rm``) everything
    under their roots: no narrowing test, or one an operator can step around."""
    out: list[tuple[Word, ...]] = []
    for argv in cmd.argvs:
        if not argv or argv[0].text.rpartition("/")[2] != "find":
            continue
        texts = [w.text for w in argv[1:]]
        deletes = "-delete" in texts or any(
            t in ("-exec", "-execdir", "-ok", "-okdir")
            and k + 1 < len(texts) and texts[k + 1].rpartition("/")[2] in _RM
            for k, t in enumerate(texts)
        )
        if not deletes:
            continue
        narrowed = any(
            t in _FIND_NARROWING and k + 1 < len(texts) and texts[k + 1] != "*"
            for k, t in enumerate(texts)
        ) or texts[-1:] == ["-empty"]
        if narrowed and not any(t in _FIND_OPERATORS for t in texts):
            continue
        out.append(argv)
    return tuple(out)


def _find_roots(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    """find's starting points: the words before its expression (after -H/-L/-P/-D/-O)."""
    roots: list[Word] = []
    i = 1
    while i < len(argv) and (argv[i].text in _FIND_START_OPTIONS
                             or argv[i].text.startswith("-O")):
        i += 1
    if i < len(argv) and argv[i].text == "-D":
        i += 2
    for word in argv[i:]:
        if word.text.startswith(("-", "(", "!", ",")) or word.text in (")",):
            break
        roots.append(word)
    return tuple(roots)


def _rm_argvs(cmd: SimpleCommand) -> tuple[tuple[Word, ...], ...]:
    """Every way ``cmd`` may be an ``rm``: the command itself, behind a wrapper, in -exec.

    (Not remembered: a look-up by identity cost more than this; the last part of the
    name is its ``posixpath.basename``.)"""
    return tuple(
        argv
        for argv in (*cmd.argvs, *cmd.nested_argvs)
        if argv and argv[0].text.rpartition("/")[2] in _RM
    )


# ---------------------------------------------------------------------- the trace


def _trace(
    rules: Sequence[CompiledRule], subjects: Sequence[tuple[Subject, Verdict]]
) -> tuple[RuleTrace, ...]:
    """Every rule, whether it matched any subject, why, and whether it was shadowed."""
    out: list[RuleTrace] = []
    for rule in rules:
        matched: list[tuple[Subject, Verdict, str]] = []
        missed: list[str] = []
        unrelated: list[str] = []
        for subject, verdict in subjects:
            result = match(rule, subject)
            if result.matched:
                matched.append((subject, verdict, result.why))
            else:
                (missed if result.relevant else unrelated).append(result.why)
        if not matched:
            whys = missed or unrelated[:1] or ["nothing to match"]
            why = "; ".join(dict.fromkeys(whys))
            out.append(RuleTrace(rule.text, rule.behavior, rule.source, False, _cap(why)))
            continue
        decisive = any(v.rule is rule for _s, v, _w in matched)
        notes: list[str] = []
        shadowed = False
        for subject, verdict, why in matched:
            if verdict.rule is rule:
                if verdict.kind != "rule":
                    notes.append(f"{why}; overridden: {verdict.reason}")
                else:
                    notes.append(why)
            elif subject.constraint and verdict.step is None:
                notes.append(why)
            else:
                shadowed = True
                if verdict.rule is not None:
                    by = verdict.rule.describe()
                    notes.append(f"{why}, but shadowed by {by}, which decides first")
                else:
                    notes.append(f"{why}, but overridden: {verdict.reason}")
        out.append(
            RuleTrace(
                rule.text,
                rule.behavior,
                rule.source,
                True,
                _cap("; ".join(dict.fromkeys(notes))),
                shadowed=shadowed and not decisive,
                decisive=decisive,
            )
        )
    return tuple(out)


def _cap(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
