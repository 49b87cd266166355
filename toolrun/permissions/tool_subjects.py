"""The subjects of a call of a file, web or MCP tool: the paths and URL it touches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolrun.errors import ToolError
from toolrun.permissions.call_steps import CallSteps
from toolrun.permissions.claude_tools import PATH_FIELDS as CLAUDE_PATH_FIELDS
from toolrun.permissions.claude_tools import claude_tool
from toolrun.permissions.claude_tools import subject as claude_subject
from toolrun.permissions.decision import TargetVerdict
from toolrun.permissions.domains import url_host
from toolrun.permissions.modes import Effect
from toolrun.permissions.observe import observe, opaque
from toolrun.permissions.paths import (
    PathInputError,
    ResolvedPath,
    glob_base,
    protected_reason,
    resolve,
    resolve_tool_path,
)
from toolrun.permissions.rules import Family, Subject
from toolrun.permissions.verdict import Unknown, Verdict, combine, decided_by

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
_EFFECTS: dict[str, Effect] = {"read": "read", "write": "write", "network": "network"}


class ToolSubjects(CallSteps):
    """Subjects of the non-Bash tools."""

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
                    decided_by=decided_by(verdict),
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
        return tuple(targets), combine(verdicts)

    def _tool_paths(self) -> list[tuple[str, Family, str | Unknown | None]]:
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
                return [("patch", "edit", Unknown(str(exc)))]
            return [("patch file", "edit", f) for f in files]
        field_name, family, required = PATH_FIELDS[tool]
        value = self.input.get(field_name)
        out: list[tuple[str, Family, str | Unknown | None]]
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
                    out.append(("pattern", family, Unknown(str(exc))))
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
