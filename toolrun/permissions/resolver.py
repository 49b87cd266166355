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

This module holds the engine (rules compiled once, decisions remembered) and the final
step of a call (combine, sandbox, where it runs). The steps live in ``call_steps``; the
subjects of each kind of call in ``tool_subjects`` and ``bash_subjects`` (with
``tree_reads``: copies and recursive reads, and ``critical_ops``: ``rm`` of the
workspace, ``find -delete``); ``verdict`` is what one step gives.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.config.models import Config, PermissionRule
from toolrun.errors import ConfigError, Location, Problem
from toolrun.permissions.decision import Decision, RuleTrace, SubcommandVerdict, TargetVerdict
from toolrun.permissions.domains import DomainPattern, exact_host
from toolrun.permissions.enforce import (
    RunsIn,
    bypass_runs_in,
    configured_place,
    judge,
    lazy_probe,
    runs_in,
)
from toolrun.permissions.grammar import RuleSyntaxError, parse_rule
from toolrun.permissions.modes import MODES, apply_mode
from toolrun.permissions.observe import Observation, opaque, start, stop, unchanged
from toolrun.permissions.paths import Boundary, absolute, normalise, resolve, variants
from toolrun.permissions.rules import (
    CompiledRule,
    RuleSet,
    Subject,
    compile_rule,
    match,
    tool_name_matches,
)

if TYPE_CHECKING:
    from toolrun.sandbox.policy import SandboxPolicy
    from toolrun.tools.base import Tool
    from toolrun.tools.registry import ToolRegistry

from toolrun.permissions.bash_subjects import BashSubjects, PartVerdict
from toolrun.permissions.critical_ops import ACCEPT_EDITS_COMMANDS as ACCEPT_EDITS_COMMANDS  # noqa: PLC0414
from toolrun.permissions.tool_subjects import ToolSubjects
from toolrun.permissions.tree_reads import TreeGuard
from toolrun.permissions.verdict import Verdict, decided_by

#: How many read vetoes one engine remembers (keyed by path *and* symlink target).
READ_VETO_CACHE = 4096
#: How many decisions one engine remembers (with what each read from the system).
DECISION_CACHE = 4096
#: Inputs longer than this (about, as JSON) are decided afresh every time.
MAX_KEY = 2048


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
        self._managed_patterns: tuple[DomainPattern, ...] | None = None
        self._decisions: dict[
            tuple[str, str, str | None, str | None], tuple[tuple[Observation, ...], Decision]
        ] = {}
        self._seen: set[int] = set()  # hashes of keys seen once
        self._cwds: dict[str, str] = {}  # (see _cwd)
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
        #: The verdicts of parts of Bash calls (bash_subjects), with what each read; None
        #: when a Bash ``param:value`` rule exists (a part's verdict then depends on the
        #: whole call's input, not on the part alone).
        self.parts: dict[tuple[Any, ...], PartVerdict] | None = (
            None
            if any(r.parsed.kind == "param" and tool_name_matches(r.parsed, "Bash")
                   for r in self.rules.rules)
            else {}
        )
        #: The ids of parts seen once (an id reused by a new part only stores it early)
        self.parts_seen: set[int] = set()
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
        cwd_s = self._cwd(str(cwd)) if cwd else self.workspace
        call = _Call(self, tool, input, cwd_s, mode_name)
        return call.decision(mode_source)

    def _cwd(self, given: str) -> str:
        """``given`` made absolute from the workspace; remembered only where that is a
        function of the string alone (no ``..``: nothing on the disk can change it)."""
        if ".." in given:
            return absolute(given, self.workspace, self.home)
        cwds = self._cwds
        found = cwds.get(given)
        if found is None:
            if len(cwds) >= 256:
                cwds.clear()
            found = cwds[given] = absolute(given, self.workspace, self.home)
        return found

    def registered(self, tool: str) -> Tool[Any] | None:
        """The registry's tool of that name (None: not registered, or no registry)."""
        return self.registry.get(tool) if self.registry is not None else None

    def managed_domain(self, host: str | None) -> bool:
        """Whether managed settings' ``sandbox.network.allowedDomains`` cover ``host``
        (under ``allowManagedDomainsOnly`` those and managed WebFetch allow rules are the
        only domains a WebFetch may reach)."""
        if host is None:
            return False
        patterns = self._managed_patterns
        if patterns is None:
            from toolrun.permissions.domains import compile_domain

            patterns = self._managed_patterns = tuple(
                compile_domain(d.split(":", 1)[0]) for d in self.config.managed_domains
            )
        name = host.lower().rstrip(".")
        return any(p.matches(name) for p in patterns)

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


class _Call(BashSubjects, ToolSubjects):
    """One decision: its subjects (Bash or another tool), combined, and where it runs."""

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
        by = decided_by(overall)
        reason = self._summary(overall, subcommands)
        if sandbox is not None and overall.kind != "sandbox":
            reason += f" [sandbox: {sandbox}]"
        subjects = tuple(self.subjects)
        rules = self.engine.rules.rules
        return Decision(
            decision=overall.decision,
            reason=reason,
            decided_by=by,
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
            bash=self.analysis,
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
        if overall.kind == "sandbox":
            # what autoAllowBashIfSandboxed allows is the user's own choice
            return overall, None, RunsIn(configured_place(sandboxed), "allowed by "
                                         "sandbox.autoAllowBashIfSandboxed: runs as configured",
                                         configured_place(sandboxed))
        if self.mode == "bypassPermissions":
            # the mode is the user's own choice; the rules' masks still hold (#25)
            masks, placed = bypass_runs_in(judge(self.subjects), sandboxed=sandboxed,
                                           enforce=enforce)
            return overall, masks, placed
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


def _jail_probe(bwrap_path: str | None) -> Any:
    # (the jail is made with bubblewrap, as the sandbox is: one probe serves both)
    from toolrun.sandbox.availability import probe

    return probe(bwrap_path)


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

