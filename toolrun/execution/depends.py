"""Which earlier call of a plan a dry decision depends on (check, exec --dry-run).

``exec`` decides each call right before it runs, after the earlier calls changed the
disk; a dry run decides every call on the disk as it is. The two agree unless an earlier
call writes where a later decision looked. So each decision keeps what it read from the
system (:mod:`toolrun.permissions.observe`: symlinks resolved, globs expanded, trees
searched, repositories found) and each call that may run and is not read-only says what
it may write; a later *allow* whose reads meet an earlier call's writes is marked
(``depends on call-3``) and counted as an ask.

Only allows are marked: a dry ask or deny already keeps the call from running unseen, and
the invariant is that check never says allow where exec would not. (An earlier call can
turn a deny into an allow, e.g. by replacing a symlink to a denied file: check is then
stricter than exec, which is the safe side.)

Precision: a write meets a read when one path holds the other (writing ``x`` changes
what ``x/.env`` resolves to; writing ``x/.env`` changes what a search of ``x`` finds).
The workspace and the call's own directory are the exception: that a decision resolved
them says nothing about what is inside (searches inside them are observed as globs or
tree searches of their own), so only writing them or a parent counts. What cannot be
analysed (``npm install``, an MCP tool) may write anything: every later allow that read
something from the disk is marked.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun.dataclass_init import fast_init
from toolrun.execution.results import CallDecision, DecidedBy
from toolrun.permissions.observe import Observation, start, stop

if TYPE_CHECKING:
    from toolrun.execution.decide import EngineDecider
    from toolrun.hooks import PreToolUseResult
    from toolrun.permissions import PermissionEngine
    from toolrun.permissions.readonly import BashVerdicts
    from toolrun.plan.models import Call

#: Tools that never write a file (Read covers Glob, Grep, LS: their family is "read").
_NETWORK_ONLY = frozenset({"WebFetch", "WebSearch"})


# (Reads and Writes: one per allow of a later part of a split check, and again as its
# records are joined: fast_init writes the slots directly)
@fast_init
@dataclass(frozen=True, slots=True)
class Reads:
    """What one decision read from the disk, as paths (absolute, normalised)."""

    # (tuples, not sets: only iterated, and a split check keeps one per allow)
    lines: tuple[str, ...] = ()  # a write of it or a parent changes the decision
    trees: tuple[str, ...] = ()  # ... or of anything below it
    repos: tuple[str, ...] = ()  # git looks up a repository from here (a .git above)
    # the trees of these were searched (a glob expanded, a guarded tree walked): a new file
    # there changes the decision even when only its content is written (Write, Edit)
    searches: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.lines or self.trees or self.repos)


@fast_init
@dataclass(frozen=True, slots=True)
class Writes:
    """What one call may change when it runs."""

    paths: frozenset[str] = frozenset()
    anything: bool = False  # not analysable: any file, anywhere
    moves_cwd: bool = False  # a cd that exec carries to the calls after it
    # only the content of regular files (Write, Edit: they write where the path led when
    # decided, or nowhere): no path resolves otherwise after them, only searches differ
    contents: bool = False

    def __bool__(self) -> bool:
        return bool(self.paths) or self.anything or self.moves_cwd


NO_READS = Reads()
#: stands for reads that are not empty, once what they are no longer matters
SOME_READS = Reads(trees=("/",))
#: reads of no file a plan's call writes: the tool registry, the user database
_NO_PATH_READS = frozenset({"registered", "_user_home"})
NO_WRITES = Writes()
ANYTHING = Writes(anything=True, moves_cwd=True)


def _above(path: str) -> Iterable[str]:
    """``path`` and every parent of it, nearest first."""
    while True:
        yield path
        if path == "/" or not path:
            return
        path = posixpath.dirname(path)


def _holds(parent: str, path: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def reads_of(
    log: Sequence[Observation],
    anchors: Sequence[str],
    extra: Iterable[str] = (),
    repo: str | None = None,
) -> Reads:
    """The paths a decision's observations (and ``extra`` paths it covered) depend on;
    ``anchors``: the workspace and the directories the call works in; ``repo``: a
    directory a git command looks up its repository from."""
    lines: set[str] = set()
    trees: set[str] = set()
    searches: set[str] = set()
    repos: set[str] = {repo} if repo else set()
    # resolving the workspace or a cwd is no search of it (see the module's doc): a path
    # that holds an anchor is a line (``_holds``, by set lookups: a split check works
    # this out for every allow of its later parts)
    same, parents = _holders(tuple(anchors))

    for fn, args, result in log:
        name = getattr(fn, "__name__", "")
        if name == "_repository":
            repos.update(a for a in args if isinstance(a, str))
        elif name == "_glob" and args and isinstance(args[0], str):
            trees.add(args[0].rstrip("/") or "/")
            searches.add(args[0].rstrip("/") or "/")
        elif name in _NO_PATH_READS:
            continue  # the tool registry, the user database: no plan call writes them
        else:
            found = False
            below = name == "_guarded_below"
            for value in (*args, result):
                for p in _paths_in(value) if type(value) is not str else _str_path(value):
                    found = True
                    if below:
                        trees.add(p)
                        searches.add(p)
                    elif p in same or p.rstrip("/") in parents:
                        lines.add(p)
                    else:
                        trees.add(p)
            if not found:
                trees.add("/")  # a read toolrun cannot place: fail closed
                searches.add("/")
    for p in extra:
        (lines if p in same or p.rstrip("/") in parents else trees).add(p)
    return Reads(tuple(lines), tuple(trees), tuple(repos), tuple(searches))


@functools.lru_cache(maxsize=64)
def _holders(anchors: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """What ``any(_holds(p, a) for a in anchors)`` asks, as two sets: ``p`` holds an
    anchor when it is one, or when ``p.rstrip("/")`` is one's text up to a ``/`` of it
    (``a.startswith(q + "/")``, "" for the root)."""
    parents = {a[:i] for a in anchors for i, ch in enumerate(a) if ch == "/"}
    return frozenset(anchors), frozenset(parents)


def _str_path(value: str) -> tuple[str, ...]:
    """``_paths_in`` of a string (most observed values), without a generator."""
    if value.startswith("/"):
        return (posixpath.normpath(value) if "//" in value or "/." in value else value,)
    return ()


def searches_of(log: Sequence[Observation]) -> tuple[str, ...]:
    """``reads_of(log, ...).searches`` alone, in the same order (all that writes of file
    contents only can meet: see :meth:`Writers.contents_only`)."""
    searches: set[str] = set()
    for fn, args, result in log:
        name = getattr(fn, "__name__", "")
        if name == "_repository":
            continue
        if name == "_glob" and args and isinstance(args[0], str):
            searches.add(args[0].rstrip("/") or "/")
        elif name in _NO_PATH_READS:
            continue
        elif name == "_guarded_below":
            found = False
            for value in (*args, result):
                for p in _paths_in(value):
                    found = True
                    searches.add(p)
            if not found:
                searches.add("/")
        elif not _names_a_path((*args, result)):  # (only whether it named one counts here)
            searches.add("/")
    return tuple(searches)


def _names_a_path(values: Iterable[Any]) -> bool:
    """Whether ``_paths_in`` gives a path for one of ``values`` (a string first, without
    a generator: most observed values are)."""
    for value in values:
        if type(value) is str:
            if value.startswith("/"):
                return True
        elif any(True for _ in _paths_in(value)):
            return True
    return False


def _paths_in(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        if value.startswith("/"):
            yield posixpath.normpath(value) if "//" in value or "/." in value else value
        return
    forms = getattr(value, "forms", None)  # a ResolvedPath
    if isinstance(forms, tuple):
        yield from (f for f in forms if isinstance(f, str) and f.startswith("/"))


def writes_of(
    engine: PermissionEngine, tool: str, input: Mapping[str, Any], cwd: str,
    decision: CallDecision,
) -> Writes:
    """What a call that may run (allowed or asked) may write."""
    if decision.decision == "deny":
        return NO_WRITES
    kind = _writer_kind(tool)
    if kind == "none":
        return NO_WRITES
    if kind == "bash":
        return bash_writes(engine, str(input.get("command", "")), cwd, decision.analysis)
    if kind == "paths" and decision.paths:
        return Writes(frozenset(p for pair in decision.paths for p in pair), contents=True)
    return ANYTHING  # a tool of its own (MCP, plugin): it may write anything


@functools.cache
def _writer_kind(tool: str) -> str:
    """What kind of writer a tool is, from the engine's constant tables (asked once per
    tool name rather than for every call: most of what ``writes_of`` cost): "none" (it
    writes no file), "bash", "paths" (it writes the files its decision resolved) or
    "anything"."""
    from toolrun.permissions.claude_tools import claude_tool
    from toolrun.permissions.tool_subjects import PATH_FIELDS

    field = PATH_FIELDS.get(tool)
    if tool in _NETWORK_ONLY or (field is not None and field[1] == "read"):
        return "none"
    known = claude_tool(tool)
    if known is not None and known.need == "none":
        return "none"  # TodoWrite, Task...: toolrun runs nothing for them (a subagent's
        # own calls are calls of the plan, decided on their own)
    if tool == "Bash":
        return "bash"
    return "paths" if field is not None or tool == "ApplyPatch" else "anything"


def _verdicts(
    engine: PermissionEngine, command: str, cwd: str, analysis: BashVerdicts | None
) -> BashVerdicts:
    """The decision's own analysis of ``command`` when it is the one of that directory
    (it is, unless a hook changed the call), else the command's verdicts there."""
    if analysis is not None and analysis.answers(command, cwd, engine.home,
                                                 engine.boundary.roots):  # fmt: skip
        return analysis
    from toolrun.permissions.readonly import bash_verdicts

    return bash_verdicts(command, cwd, engine.home, engine.boundary)


def bash_writes(
    engine: PermissionEngine, command: str, cwd: str, analysis: BashVerdicts | None = None
) -> Writes:
    """The files a Bash command may write: redirection targets and the operands of the
    file commands (``cp mv ln mkdir touch rm ...``); anything when a part is neither
    read-only nor such a command, or a word is only known at run time. ``analysis``:
    what the decision was made on."""
    from toolrun.permissions.paths import EXEMPT_WRITE_TARGETS, resolve
    from toolrun.permissions.shellpaths import WRITE_FILE_COMMANDS
    from toolrun.permissions.wordpaths import glob_directory, word_path

    home = engine.home
    verdicts = _verdicts(engine, command, cwd, analysis)
    if not verdicts.analysable:
        return ANYTHING
    paths: set[str] = set()
    for cmd, where, verdict in zip(verdicts.commands, verdicts.cwds, verdicts.verdicts,
                                   strict=True):  # fmt: skip
        if where is None:
            return ANYTHING
        for redirect in cmd.redirects:
            if not redirect.writes:
                continue
            target = redirect.target
            if target is not None and target.value in EXEMPT_WRITE_TARGETS:
                continue
            found = word_path(target, where, home) if target is not None else None
            if found is None:
                return ANYTHING
            paths.update(found.forms)
        if cmd.kind == "test" or verdict.read_only:
            continue
        if cmd.kind != "command" or cmd.name not in WRITE_FILE_COMMANDS or not cmd.analysable:
            return ANYTHING
        for word in cmd.effective[1:]:
            value = word.value
            if value is None:
                return ANYTHING
            if value.startswith("-"):
                # an option's value may name the file written (--target-directory=DIR)
                _, eq, value = value.partition("=")
                if not eq or not value:
                    continue
                found = resolve(value, where, home)
            elif word.glob:
                found = glob_directory(word, where, home)
            else:
                found = word_path(word, where, home)
            if found is None:
                return ANYTHING
            paths.update(found.forms)
    return Writes(frozenset(paths), moves_cwd=verdicts.with_cd)


class Writers:
    """The writes of a plan's calls so far, indexed by path, each with its first writer."""

    __slots__ = (
        "anything", "content_parents", "contents", "cwd", "exact", "git", "parents", "some",
    )  # fmt: skip

    def __init__(self) -> None:
        self.exact: dict[str, str] = {}  # a written path
        self.contents: dict[str, str] = {}  # a path only written to (``Writes.contents``)
        self.parents: dict[str, str] = {}  # a parent of a written path
        self.content_parents: dict[str, str] = {}  # a parent of a path only written to
        self.git: dict[str, str] = {}  # a directory where a .git (or inside one) is written
        self.anything: str | None = None
        self.cwd: str | None = None  # the first call whose cd exec carries on
        # any of the above (asked for every later allow: one attribute, not four)
        self.some = False

    def __bool__(self) -> bool:
        return self.some

    def copy(self) -> Writers:
        """These writers as they are now, apart from what is added to them after."""
        other = Writers()
        other.exact, other.contents = dict(self.exact), dict(self.contents)
        other.parents, other.content_parents = dict(self.parents), dict(self.content_parents)
        other.git, other.anything, other.cwd = dict(self.git), self.anything, self.cwd
        other.some = self.some
        return other

    def add(self, call_id: str, writes: Writes) -> None:
        if writes.paths or writes.anything or writes.moves_cwd:
            self.some = True
        if writes.anything and self.anything is None:
            self.anything = call_id
        if writes.moves_cwd and self.cwd is None:
            self.cwd = call_id
        written = self.contents if writes.contents else self.exact
        parents = self.content_parents if writes.contents else self.parents
        for path in writes.paths:
            written.setdefault(path, call_id)
            head, sep, _ = path.partition("/.git")
            if sep and (len(head) + 5 == len(path) or path[len(head) + 5] == "/"):
                self.git.setdefault(head or "/", call_id)
            for parent in _above(posixpath.dirname(path)):
                if parent in parents:
                    break  # (its parents are in already)
                parents[parent] = call_id

    def on(self, reads: Reads, *, follows_cd: bool = False) -> str | None:
        """The earlier call whose writes ``reads`` meet (``follows_cd``: a Bash call whose
        directory is the one an earlier ``cd`` left); None when there is none."""
        if reads.empty:
            return None
        if self.anything is not None:
            return self.anything
        if follows_cd and self.cwd is not None:
            return self.cwd
        exact = self.exact
        if exact:  # (most plans write only files' contents: nothing to walk up for)
            for group in (reads.lines, reads.trees, reads.repos):
                for path in group:
                    for parent in _above(path):
                        if parent in exact:
                            return exact[parent]
        for path in reads.trees:
            if path in self.parents:
                return self.parents[path]
        found = self.on_searches(reads.searches)
        if found is not None or not self.git:
            return found
        for path in reads.repos:
            for parent in _above(path):
                if parent in self.git:
                    return self.git[parent]
        return None

    def on_searches(self, searches: Sequence[str]) -> str | None:
        """The earlier call that wrote a file's content below one of ``searches``."""
        # (a path only written to, by Write or Edit, resolves as before: it matters only to
        # a real search above it, where its name may be new: a glob, a guarded tree)
        for path in searches:
            if path in self.content_parents:
                return self.content_parents[path]
        return None

    def contents_only(self) -> bool:
        """Only files' contents are written so far (no path, cd, repository or anything):
        then only a decision's searches can meet them (``on`` is ``on_searches``)."""
        return (self.anything is None and self.cwd is None and not self.exact
                and not self.parents and not self.git)  # fmt: skip


def marked(decision: CallDecision, writer: str) -> CallDecision:
    """An allow that an earlier call may change, counted as an ask."""
    return CallDecision(
        "ask", mark_reason(decision.reason, writer), DecidedBy("depends", None, writer),
        paths=decision.paths,
    )


def mark_reason(reason: str, writer: str) -> str:
    return (
        f"depends on {writer}: that earlier call may change what this decision read from "
        f"the disk, so exec may decide it otherwise (on the disk as it is: {reason or 'allow'})"
    )


def git_directory(tool: str, input: Mapping[str, Any], cwd: str) -> str | None:
    """The directory a Bash command that runs git looks up its repository from: a
    repository made or changed earlier (``git init``, a written .git) changes it."""
    if tool != "Bash":
        return None
    command = input.get("command")
    return cwd if isinstance(command, str) and "git" in command else None


def _anchors(
    engine: PermissionEngine, call: Call, cwd: str, analysis: BashVerdicts | None = None
) -> list[str]:
    """The workspace, the call's directory and those its ``cd``s move to."""
    anchors = [engine.workspace, cwd]
    command = call.input.get("command") if call.tool == "Bash" else None
    if isinstance(command, str) and "cd" in command:
        verdicts = _verdicts(engine, command, cwd, analysis)
        anchors.extend(d for d in set(verdicts.cwds) if d is not None and d != cwd)
    return anchors


class Footprint:
    """What one decision read, and what its call may write, worked out when first asked
    (most plans never need either: nothing before the call writes)."""

    __slots__ = ("_reads", "_writes", "log")

    def __init__(self, log: Sequence[Observation]) -> None:
        self.log = log
        self._reads: Reads | None = None
        self._writes: Writes | None = None

    def reads(self, engine: PermissionEngine, call: Call, cwd: str,
              decision: CallDecision) -> Reads:  # fmt: skip
        if self._reads is None:
            extra = [p for pair in decision.paths for p in pair]
            repo = git_directory(call.tool, call.input, cwd)
            anchors = _anchors(engine, call, cwd, decision.analysis)
            self._reads = reads_of(self.log, anchors, extra, repo)
        return self._reads

    def searches(self) -> tuple[str, ...]:
        """What :meth:`reads` would give as ``searches``, alone."""
        if self._reads is not None:
            return self._reads.searches
        return searches_of(self.log)

    def reads_anything(self, call: Call, cwd: str, decision: CallDecision) -> bool:
        """Whether :meth:`reads` is not empty, without working it out."""
        if self._reads is not None:
            return not self._reads.empty
        return bool(decision.paths or git_directory(call.tool, call.input, cwd)) or any(
            getattr(fn, "__name__", "") not in _NO_PATH_READS for fn, _, _ in self.log
        )

    def writes(self, engine: PermissionEngine, call: Call, cwd: str,
               decision: CallDecision) -> Writes:  # fmt: skip
        if self._writes is None:
            self._writes = writes_of(engine, call.tool, call.input, cwd, decision)
        return self._writes


class PlanDependencies:
    """The writers of the calls decided so far, and the mark of a later allow they meet."""

    def __init__(self, engine: PermissionEngine) -> None:
        self.engine = engine
        self.writers = Writers()

    def reset(self) -> None:
        self.writers = Writers()

    def after(
        self,
        call: Call,
        cwd: Path,
        decision: CallDecision,
        footprint: Footprint,
        *,
        cwd_recorded: bool = False,
    ) -> CallDecision:
        """``decision`` of ``call``, marked when an earlier writer meets what it read;
        then the call's own writes join the writers."""
        engine, writers, here = self.engine, self.writers, str(cwd)
        out = decision
        anything = writers.anything
        if anything is not None:
            # whatever it read, that earlier call may have changed it; nor do the writes
            # of this call matter any more (the first such call is named for every mark)
            if decision.decision == "allow" and footprint.reads_anything(call, here, decision):
                out = marked(decision, anything)
            return out
        if decision.decision == "allow" and writers:
            if writers.contents_only():
                writer = writers.on_searches(footprint.searches())
            else:
                reads = footprint.reads(engine, call, here, decision)
                follows = call.tool == "Bash" and not cwd_recorded
                writer = writers.on(reads, follows_cd=follows)
            if writer is not None:
                out = marked(decision, writer)
        if decision.decision != "deny":
            writes = footprint.writes(engine, call, here, decision)
            if writes:
                writers.add(call.id, writes)
        return out


def recorded(decide: Any, *args: Any) -> tuple[CallDecision, Footprint]:
    """``decide(*args)`` and what it read from the system."""
    recording, outer = start()
    try:
        decision = decide(*args)
    finally:
        stop(outer)
    return decision, Footprint(tuple(recording.log))


class DryRunDecider:
    """exec --dry-run's decider: the engine's, each allow marked when an earlier call of
    the run may change it (the engine must not memoise: a remembered decision does not
    say what it read)."""

    def __init__(self, inner: EngineDecider) -> None:
        self.inner = inner
        self.plan = PlanDependencies(inner.engine)

    def decide(
        self, call: Call, cwd: Path, hooks: PreToolUseResult | None = None
    ) -> CallDecision:
        decision, footprint = recorded(self.inner.decide, call, cwd, hooks)
        return self.plan.after(call, cwd, decision, footprint)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # suggest, allow_for_run
