"""The subjects of a Bash call: each simple command, the files it reads and writes, what
its programs do with their words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolrun.permissions import programs
from toolrun.permissions.analysis import SimpleCommand
from toolrun.permissions.call_steps import CallSteps
from toolrun.permissions.copies import carried, is_copier
from toolrun.permissions.critical_ops import CriticalOps
from toolrun.permissions.decision import BoundaryCheck, SubcommandVerdict, TargetVerdict
from toolrun.permissions.modes import Effect
from toolrun.permissions.observe import Observation, note, start, stop, unchanged
from toolrun.permissions.paths import EXEMPT_WRITE_TARGETS, ResolvedPath, protected_reason, resolve
from toolrun.permissions.readonly import BashVerdicts, ReadOnly, bash_verdicts, option_words
from toolrun.permissions.rules import Family, Subject
from toolrun.permissions.shellpaths import cd_destinations, path_arguments
from toolrun.permissions.tree_reads import TreeReads
from toolrun.permissions.verdict import Verdict, combine, decided_by
from toolrun.permissions.wordpaths import forget_paths, remember_paths, word_path
from toolrun.permissions.words import Word
from toolrun.permissions.wrapped import wrapped_arguments, wrapped_option_files

#: How many parts' verdicts one engine remembers.
PARTS_KEPT = 8192


class PartVerdict:
    """What deciding one part of a Bash call gave: its verdicts, the subjects and boundary
    checks it added to the call, and what it read from the system."""

    __slots__ = ("boundary", "command", "input", "log", "subjects", "value")

    def __init__(
        self,
        command: SimpleCommand,
        log: tuple[Observation, ...],
        input: Mapping[str, Any],
        subjects: tuple[tuple[Subject, Verdict], ...],
        boundary: tuple[BoundaryCheck, ...],
        value: tuple[SubcommandVerdict, Verdict],
    ) -> None:
        self.command = command  # (kept: its id is in the key)
        self.log = log
        self.input = input
        self.subjects = subjects
        self.boundary = boundary
        self.value = value

    def replay(self, call: CallSteps) -> tuple[SubcommandVerdict, Verdict]:
        """Add to ``call`` what deciding the part afresh would add, and give its verdicts.
        A subject that carried the call's input carries this call's (the trace reads it)."""
        mine = self.input
        for s, verdict in self.subjects:
            if s.params is mine:
                s = Subject(s.kind, s.tool, s.label, s.effect, s.command, s.path, s.family,
                            s.constraint, s.redirect, s.host, call.input, s.what)
            call.subjects.append((s, verdict))
        call.boundary.extend(self.boundary)
        return self.value


def _fed_by_xargs(cmd: SimpleCommand) -> bool:
    """``xargs PROGRAM``: the program is given words read from standard input."""
    stripped = len(cmd.words) - len(cmd.effective)
    return stripped > 0 and any(w.value == "xargs" for w in cmd.words[:stripped])


class BashSubjects(TreeReads, CriticalOps):
    """Subjects of a Bash call."""

    #: what the call was decided on (set by ``_bash``)
    analysis: BashVerdicts | None = None

    def _bash(self) -> tuple[tuple[SubcommandVerdict, ...], tuple[str, ...], Verdict]:
        outer = remember_paths()  # (one decision: each word's path resolved once)
        try:
            return self._bash_paths_remembered()
        finally:
            forget_paths(outer)

    def _bash_paths_remembered(
        self,
    ) -> tuple[tuple[SubcommandVerdict, ...], tuple[str, ...], Verdict]:
        command = self.input.get("command")
        if not isinstance(command, str):
            s = Subject("problem", "Bash", "command", "execute", what="input", params=self.input)
            verdict = self.verdict(
                s, analysable=False, problem="command is missing or not a string"
            )
            return (), ("command is missing or not a string",), verdict
        # the one analysis of the command: the decision is made on it, and hands it on
        # (Decision.bash) to the grouping of calls into runs and to a check's marks
        checked = self.analysis = bash_verdicts(
            command, self.cwd, self.engine.home, self.engine.boundary
        )
        settled = checked.settled
        subcommands: list[SubcommandVerdict] = []
        verdicts: list[Verdict] = []
        for index, (cmd, cwd, readonly) in enumerate(
            zip(checked.commands, checked.cwds, checked.verdicts, strict=True)
        ):
            sub = self._subcommand(index, cmd, cwd, readonly, settled)
            subcommands.append(sub[0])
            verdicts.append(sub[1])
        if checked.problems:
            s = Subject("problem", "Bash", command, "execute", what="the command", params=self.input)
            problem = self.verdict(s, analysable=False, problem="; ".join(checked.problems))
            verdicts.insert(0, problem)
        return tuple(subcommands), checked.problems, combine(verdicts)

    def _subcommand(
        self, index: int, cmd: SimpleCommand, cwd: str | None, checked: ReadOnly, settled: bool
    ) -> tuple[SubcommandVerdict, Verdict]:
        """The verdict of one part, remembered per part (``git log -n 5`` of many command
        lines is one SimpleCommand): by everything it is worked out from, and only while
        what it read from the system reads the same (as a whole decision is remembered)."""
        engine = self.engine
        parts = engine.parts
        if parts is None:
            return self._subcommand_afresh(index, cmd, cwd, checked, settled)
        key = (id(cmd), index, cwd, checked.read_only, checked.reason, settled, self.mode)
        hit = parts.get(key)
        if hit is not None and hit.command is cmd and unchanged(hit.log):
            note(hit.log)
            return hit.replay(self)
        if hit is None and id(cmd) not in engine.parts_seen:
            # Remembered from its second time on: most parts of a stream of new commands
            # (`ls src/d17`) never come back, and keeping each only feeds the collector.
            if len(engine.parts_seen) >= PARTS_KEPT:
                engine.parts_seen.clear()
            engine.parts_seen.add(id(cmd))
            return self._subcommand_afresh(index, cmd, cwd, checked, settled)
        if self.protected:
            # (what this part adds to the call's protected list then depends on what
            # earlier parts added: worked out afresh, not remembered)
            return self._subcommand_afresh(index, cmd, cwd, checked, settled)
        subjects, boundary = len(self.subjects), len(self.boundary)
        recording, outer = start()
        try:
            value = self._subcommand_afresh(index, cmd, cwd, checked, settled)
        finally:
            stop(outer)
        log = tuple(recording.log)
        note(log, opaque=recording.opaque)
        # (a part that names a protected path or a critical target is not remembered:
        # one that is adds nothing to the list, whatever the parts before it added)
        if not recording.opaque and not self.protected:
            if len(parts) >= PARTS_KEPT:
                parts.clear()
            parts[key] = PartVerdict(cmd, log, self.input, tuple(self.subjects[subjects:]),
                               tuple(self.boundary[boundary:]), value)
        return value

    def _subcommand_afresh(
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
            recursive and cmd.analysable and combine(parts).decision == "allow"
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
        combined = combine(parts)
        return (
            SubcommandVerdict(
                index=index,
                command=cmd.text,
                context=cmd.context,
                decision=combined.decision,
                decided_by=decided_by(combined),
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
