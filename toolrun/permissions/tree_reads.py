"""What a Bash command carries or reads whole: copies, moves and links to a new name, and
recursive reads of a tree that holds guarded paths.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.call_steps import CallSteps
from toolrun.permissions.copies import Carried, linked_trees
from toolrun.permissions.decision import TargetVerdict
from toolrun.permissions.modes import Step, apply_mode
from toolrun.permissions.observe import observe
from toolrun.permissions.paths import EXEMPT_WRITE_TARGETS, ResolvedPath, protected_reason, resolve
from toolrun.permissions.rules import CompiledRule, Subject
from toolrun.permissions.shellpaths import PathArgument
from toolrun.permissions.verdict import Verdict
from toolrun.permissions.wordpaths import word_path

if TYPE_CHECKING:
    from toolrun.permissions.resolver import PermissionEngine

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


class TreeReads(CallSteps):
    """Copies and tree reads of a Bash call."""

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
