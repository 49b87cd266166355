"""The steps every subject of a call goes through: deny, ask, protected, unanalysable,
allow, read-only, the workspace boundary, the mode (:mod:`toolrun.permissions.resolver`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolrun.permissions.decision import BoundaryCheck, TargetVerdict
from toolrun.permissions.modes import Effect, Step, apply_mode
from toolrun.permissions.paths import ResolvedPath
from toolrun.permissions.readonly import ReadOnly
from toolrun.permissions.rules import CompiledRule, RuleSet, Subject
from toolrun.permissions.verdict import NEUTRAL, Verdict, decided_by, quote
from toolrun.permissions.wordpaths import glob_directory, glob_matches, word_path
from toolrun.permissions.words import Word

if TYPE_CHECKING:
    from toolrun.permissions.resolver import PermissionEngine


class CallSteps:
    """The working state of one decision (not shared, not kept), and the steps that
    decide each of its subjects (the deciders of each kind of call build on these)."""

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
                return NEUTRAL
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
            return quote(s.label)
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

    def _check_boundary(self, what: str, path: ResolvedPath) -> bool:
        inside, root = self.engine.boundary.placed(path)
        self.boundary.append(
            BoundaryCheck(
                what, path.link, path.target if path.via_symlink else None, inside, root
            )
        )
        return inside

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
            decided_by=None if neutral else decided_by(verdict),
            reason=verdict.reason or "no deny or ask rule and no protection applies",
            resolved=path.target if path is not None and path.via_symlink else None,
            inside=inside,
        )
