"""A live session's decisions in the run journal: one run per agent session, appended.

``.toolrun/runs/session-<session_id>.jsonl`` in the workspace, in the journal's format
(:mod:`toolrun.execution.journal`): a ``run`` record first, then one ``result`` record
per decision, so ``toolrun runs`` lists the session (with no ``end`` record while it
lives: "incomplete") and ``toolrun show`` its decisions. A decision's status is what
toolrun knows of the call: ``denied``, ``needs_approval`` (an ask: the person's answer is
the agent's), or ``skipped`` (allowed: the agent runs it, toolrun never sees it run).

An agent runs the hooks of parallel calls at once, so several ``toolrun hook`` processes
append to one file: the run record is made with the file (written aside and linked into
place, so no other process sees the file without it), and each decision is numbered and
written under an exclusive ``flock``, with one ``write(2)``, then fsynced.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolrun import __version__
from toolrun.execution.journal import dumps, encode_line, runs_dir
from toolrun.execution.results import utc_iso

if TYPE_CHECKING:
    from toolrun.live.answer import Verdict
    from toolrun.live.payload import HookCall, SessionEnded

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_STATUS = {"deny": "denied", "ask": "needs_approval", "allow": "skipped"}
_AGENT = {"claude": "Claude Code", "gemini": "Gemini CLI"}


def _execution_id() -> str:
    """``exec_`` and a version-4 UUID, as the executor's; without the uuid module, which
    a hook's cold call would import for this alone."""
    bits = int.from_bytes(os.urandom(16), "big")
    bits = bits & ~((0xC000 << 48) | (0xF << 76)) | (0x8000 << 48) | (4 << 76)
    h = f"{bits:032x}"
    return f"exec_{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def session_run_id(session_id: str) -> str:
    """The run id of a session: its id made safe as a file name (bounded in length)."""
    safe = _UNSAFE.sub("-", session_id).strip("-.")[:96]
    return f"session-{safe or 'unknown'}"


def session_label(hook: HookCall) -> str:
    return f"{_AGENT[hook.protocol]} session {hook.session_id or '(no session_id)'}"


def _create(path: Path, first: dict[str, Any]) -> None:
    """The journal with its run record, unless it exists; atomic for concurrent hooks."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent.parent / ".gitignore"
    if not ignore.exists():  # as Journal does: .toolrun/ stays out of `git status`
        with contextlib.suppress(OSError):
            ignore.write_text("# written by toolrun: run journals are local\n*\n")
    aside = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, encode_line(dumps(first)))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(aside, path)  # fails if another hook made it first: theirs stands
    except FileExistsError:
        pass
    finally:
        os.unlink(aside)


def record(
    workspace: Path,
    hook: HookCall,
    verdict: Verdict,
    *,
    config_files: tuple[str, ...],
    duration_ms: float,
    notes: tuple[str, ...] = (),
    warm: bool = False,
) -> Path:
    """Append one decision to the session's journal (OSError: it could not be written)."""
    now = time.time()
    run_id = session_run_id(hook.session_id)
    path = runs_dir(workspace) / f"{run_id}.jsonl"
    label = session_label(hook)
    decision = verdict.decision
    _create(
        path,
        {
            "event": "run",
            "run_id": run_id,
            "toolrun": __version__,
            "started_at": now,
            "workspace": str(workspace),
            "mode": decision.mode,
            "plans": [label],
            "config_files": list(config_files),
            "source": "hook",
            "agent": _AGENT[hook.protocol],
            "session_id": hook.session_id,
            "transcript_path": hook.transcript_path,
        },
    )
    answered = "nothing (the agent decides)" if verdict.answer == "none" else verdict.answer
    metadata: dict[str, Any] = {
        "hook_event": hook.event,
        "answer": verdict.answer,
        "cwd": hook.cwd,
        "mode": decision.mode,
        # who decided: a hook's own process, or the warm server (toolrun.live.server)
        "decided_in": {"pid": os.getpid(), "warm": warm},
    }
    if hook.tool != decision.tool:
        metadata["agent_tool"] = hook.tool
        metadata["agent_input"] = dict(hook.input)
    if verdict.silent_because:
        metadata["silent_because"] = verdict.silent_because
    if notes:
        metadata["notes"] = list(notes)
    stamp = utc_iso(now)
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        index = max(_lines(fd) - 1, 0)  # the records after the run record
        result = {
            "event": "result",
            "index": index,
            "id": hook.tool_use_id or f"call-{index + 1}",
            "execution_id": _execution_id(),
            "run_id": run_id,
            "plan": label,
            "tool": decision.tool,
            "input": dict(decision.input),
            "decision": decision.decision,
            "decided_by": decision.decided_by.to_json(),
            "status": _STATUS[decision.decision],
            "output": f"toolrun answered {answered}: {verdict.reason}",
            "error": decision.reason if decision.decision != "allow" else None,
            "started_at": stamp,
            "finished_at": stamp,
            "wait_ms": 0.0,
            "duration_ms": round(duration_ms, 3),
            "attempts": 0,
            "aborted_before_launch": False,
            "location": None,
            "metadata": metadata,
        }
        data = encode_line(dumps(result))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
    return path


def end(workspace: Path, hook: SessionEnded) -> Path | None:
    """Append the session's end record (None: the session decided nothing, no journal).

    The workspace is found as for its decisions; the file is resolved the same way
    (``workspace`` made absolute by the caller), so the end lands in the same journal.
    """
    from toolrun.execution.journal_read import first_record

    path = runs_dir(workspace.resolve()) / f"{session_run_id(hook.session_id)}.jsonl"
    if not path.is_file():
        return None
    first = first_record(path) or {}
    started = first.get("started_at")
    wall_ms = (time.time() - started) * 1000 if isinstance(started, int | float) else None
    record = {
        "event": "end",
        "run_id": session_run_id(hook.session_id),
        "wall_ms": wall_ms,
        "interrupted": False,
        "reason": hook.reason,
    }
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, encode_line(dumps(record)))
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _lines(fd: int) -> int:
    """The number of records in the journal (its newlines), read in blocks."""
    count, offset = 0, 0
    while block := os.pread(fd, 1 << 20, offset):
        count += block.count(b"\n")
        offset += len(block)
    return count
