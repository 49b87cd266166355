"""The bridge from the permission engine (and PreToolUse hooks) to the executor.

One decision path: exec, exec --dry-run and check all decide through here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.execution.results import CallDecision, DecidedBy
from toolrun.plan.models import Call

if TYPE_CHECKING:
    from toolrun.hooks import PreToolUseResult
    from toolrun.permissions import Decision, PermissionEngine


def _configured(decision: Decision) -> str | None:
    """Where a call runs that no jail holds (the user's sandbox, or not sandboxed)."""
    return decision.runs_in.configured if decision.runs_in is not None else None


class EngineDecider:
    def __init__(self, engine: PermissionEngine) -> None:
        self.engine = engine

    def decide(
        self, call: Call, cwd: Path, hooks: PreToolUseResult | None = None
    ) -> CallDecision:
        decision = self.engine.decide(call.tool, call.input, cwd=cwd)
        # Where each file led when decided: a file tool writes there or nowhere.
        targets = decision.targets
        paths = (
            tuple([(t.target, t.resolved or t.target) for t in targets if t.target.startswith("/")])
            if targets and call.tool != "Bash"
            else ()
        )
        protected = decision.protected[0] if decision.protected else None
        if hooks is not None and hooks.decision is not None:
            from toolrun.hooks import merge_decision

            final = merge_decision(decision, hooks)
            fby = final.decided_by
            where = decision.runs_in
            placed = final.decision != "deny" and where is not None
            return CallDecision(
                final.decision,
                final.reason,
                DecidedBy(fby.kind, fby.rule, fby.source),
                paths=paths,
                protected=protected,
                # a hook decided: the call runs as configured, never in a jail
                runs_in=_configured(decision) if placed else None,
                runs_in_why="a PreToolUse hook decided it: runs as configured" if placed else None,
                analysis=decision.bash,
            )
        by = decision.decided_by
        where = decision.runs_in
        return CallDecision(
            decision.decision,
            decision.reason,
            DecidedBy(by.kind, by.rule, by.source),
            paths=paths,
            protected=protected,
            jail=decision.jail if decision.decision == "allow" else None,
            runs_in=where.place if where is not None else None,
            runs_in_why=where.why if where is not None else None,
            configured=where.configured if where is not None else None,
            analysis=decision.bash,
        )

    def suggest(self, call: Call, cwd: Path) -> tuple[tuple[str, ...], str]:
        """(the narrowest allow rules that approve the call, why none) for a call that asks."""
        from toolrun.permissions.suggest import suggest

        decision = self.engine.decide(call.tool, call.input, cwd=cwd)
        found = suggest(self.engine, decision, cwd=cwd)
        return found.rules, found.why

    def add_rules_for_run(self, behavior: str, rules: Sequence[str]) -> None:
        """Add ``rules`` for the rest of the run (a PermissionRequest hook's
        ``updatedPermissions``; the caller keeps allow rules to what "always" adds)."""
        if behavior == "allow":
            self.allow_for_run(rules)
            return
        import dataclasses

        from toolrun.config.models import PermissionRule
        from toolrun.permissions import PermissionEngine
        from toolrun.permissions.suggest import session_source

        engine = self.engine
        config = engine.config
        source = session_source(Path(engine.workspace))
        extra = tuple(PermissionRule(behavior, text, source) for text in rules)  # type: ignore[arg-type]
        self.engine = PermissionEngine(
            dataclasses.replace(config, rules=config.rules + extra), engine.registry,
            memo=engine.memo,
        )

    def allow_for_run(self, rules: Sequence[str]) -> None:
        """Add ``rules`` as allow rules for the rest of the run ("always" at the prompt)."""
        from toolrun.permissions.suggest import with_allow_rules

        self.engine = with_allow_rules(self.engine, rules)
