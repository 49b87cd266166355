"""One big input decided in several processes: its turns split into contiguous parts.

The plan is loaded once; then a process is forked for every part but the first, which
this process decides itself. A forked process starts with the loaded plan, the config and
the warm caches already in place (nothing is re-read or re-imported) and sends back only
its compact records. Turns are independent during a check (nothing runs, so the disk a
part decides on is the one every part sees), which is what makes the parts' records, put
back in plan order with their run numbers shifted, the very records one process would
make. The one thing that crosses parts, an allow that a call of an earlier part may
change once exec runs it, each later part keeps the reads and writes of
(``CallCheck.deps``), and ``Joiner`` marks it as one process would have, starting from
what the first part's calls wrote. Parts are sized (``shares``) for every process to be
done at once: this one also joins the others' records, as they write them.

Nothing is lost when a part's process fails (killed, out of memory, a bug): that part is
decided again here. Ctrl-C (SIGTERM, SIGHUP) ends the check as in one process, and no
forked process outlives it, even when this one is killed.
"""

from __future__ import annotations

import bisect
import io
import itertools
import os
import pickle
import select
import signal
import stat
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from toolrun.reaper import raise_now
from toolrun.report.models import CallCheck

if TYPE_CHECKING:
    from toolrun.execution.depends import Writers
    from toolrun.plan.models import Turn

T = TypeVar("T")

#: what ps shows for a process deciding a part of a plan
PART_NAME = "toolrun-part"

Runs = tuple[tuple[int, str, int], ...]
Decided = tuple[Runs, tuple["CallCheck", ...]]
# decides the turns it is given (None in place of the others), with the plan's turn starts
Decide = Callable[..., Decided]


#: A part process's work for one call, this process's being 1: it also keeps what the
#: marks across parts need and sends its records. (Measured as the two run side by side,
#: on issue 31's 100,000-call plan: 1.09 of CPU; each decided alone, it looks like 1.04.)
PART_COST = 1.09
#: This process's work for one call of another part: joining its record as it comes (0.06)
JOIN_COST = 0.06


def shares(parts: int) -> list[float]:
    """Each part's share of the calls, such that every process is done at the same time:
    this one (part 0) also joins the others' records, each of them also keeps and sends
    its own. (By calls alone, this one waited half a second of 6 for the other.)"""
    if parts <= 1:
        return [1.0]
    others = parts - 1
    first = (PART_COST - others * JOIN_COST) / (PART_COST + others * (1 - JOIN_COST))
    return [first] + [(1 - first) / others] * others


def ranges(turns: Sequence[Turn | None], parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges of turn indexes, each holding its ``shares`` of the calls."""
    return size_ranges([len(t.calls) if t is not None else 0 for t in turns], parts)


def size_ranges(sizes: Sequence[int], parts: int) -> list[tuple[int, int]]:
    """``ranges`` of turns of ``sizes`` calls each."""
    parts = max(1, min(parts, len(sizes)))
    before = [0, *itertools.accumulate(sizes)]  # the calls before each turn
    cuts = [0]  # the first turn of each part
    for k, end in enumerate(itertools.accumulate(s * before[-1] for s in shares(parts)[:-1])):
        # a part ends where its share does, before or after the turn it ends in (whichever
        # is nearer), and leaves a turn for each part still to come
        at = bisect.bisect_left(before, end)
        if at > 0 and end - before[at - 1] <= before[min(at, len(sizes))] - end:
            at -= 1
        cuts.append(max(cuts[-1] + 1, min(at, len(sizes) - (parts - 1 - k))))
    return [r for r in itertools.pairwise([*cuts, len(sizes)]) if r[0] < r[1]]


def decide_in_parts(
    decide: Decide, turns: list[Turn | None], parts: int, writers: Callable[[], Writers]
) -> Decided:
    """The records of every call of ``turns``, decided in ``parts`` processes; ``writers``:
    what the first part's calls wrote, once this process decided them (``Joiner``)."""
    starts = starts_of_turns(turns)
    spans = ranges(turns, parts)
    children: list[tuple[int, int, tuple[int, int]]] = []  # (pid, read end, span)
    pending: dict[int, int] = {}  # forked and not reaped yet: pid -> read end
    try:
        for span in spans[1:]:

            def keep(pid: int, fd: int, span: tuple[int, int] = span) -> None:
                children.append((pid, fd, span))
                pending[pid] = fd

            _fork(decide, turns, span, starts, keep)
        first = spans[0]
        mine: list[Turn | None] = [None] * len(turns)
        for i in range(*first):
            mine[i], turns[i] = turns[i], None  # let each go once decided
        decided = decide(mine, turn_starts=starts)
        joiner = Joiner(writers())
        joiner.add(decided)
        for pid, fd, span in children:
            whole = joiner.collect(pid, fd)
            del pending[pid]  # reaped
            if not whole:  # the process failed: its part is decided here
                part: list[Turn | None] = [None] * len(turns)
                part[span[0] : span[1]] = turns[span[0] : span[1]]
                joiner.add(shifted(decide(part, turn_starts=starts), joiner.shift))
            for i in range(*span):
                turns[i] = None
    finally:
        for pid, fd in pending.items():
            end_part(pid, fd)
    return joiner.joined()


def _fork(
    decide: Decide,
    turns: list[Turn | None],
    span: tuple[int, int],
    starts: list[int],
    keep: Callable[[int, int], None],
) -> None:
    """A process deciding the turns of ``span``: its pid and the file it writes its
    records to go to ``keep``."""

    def work(sink: Sink) -> Decided:
        part: list[Turn | None] = [None] * len(turns)
        part[span[0] : span[1]] = turns[span[0] : span[1]]
        return decide(part, turn_starts=starts, sink=sink)

    fork_part(work, keep)


#: where a part process puts its records as it decides them (batches of BATCH or more)
Sink = Callable[[list["CallCheck"]], None]


def fork_part(work: Callable[[Sink], Decided | None], keep: Callable[[int, int], None]) -> None:
    """A process sending back what ``work`` decides: the records it gives its sink as it
    goes, then what it returns (None: nothing, decide its part here). Its pid and the
    file descriptor it writes to go to ``keep`` (for ``collect_part`` or ``end_part``)
    before Ctrl-C can stop this one again.

    The records go to an unnamed file, not a pipe: the process writes them as it makes
    them (never holding them all) without waiting for this one to read, which it does
    once its own part is decided, as they come (``collect_part``). Where no file can be
    made, a pipe does (the process then waits for this one to read)."""
    try:
        with tempfile.TemporaryFile(prefix="toolrun-part-") as made:
            out, into = os.dup(made.fileno()), -1  # (the file goes once both have closed it)
    except OSError:
        out, into = os.pipe()
    # Ctrl-C (SIGTERM, SIGHUP) reaches the whole process group: the forked process leaves
    # the answer to its parent, which ends it. Held back across the fork, so that it is
    # never raised in the new process before it ignores it (it would run on in its
    # parent's code) nor in this one before it knows the new process's pid (which would
    # be left behind)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked process (its records are what tests check)
        code = 1
        try:
            for number in STOPPING:
                signal.signal(number, signal.SIG_IGN)
            die_with(parent)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            _name(PART_NAME)
            if into >= 0:  # a pipe: its read end is the parent's
                os.close(out)
                out = into
            with os.fdopen(out, "wb", buffering=1 << 16) as sent:
                _send(work(partial(_dump, file=sent)), sent)
            code = 0
        finally:
            # never back into the parent's code (its finally blocks, atexit, buffers)
            os._exit(code)
    try:
        if into >= 0:
            os.close(into)
        keep(pid, out)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


#: What stops a check (toolrun.commands.check_decide): held back across a fork, then
#: ignored in the forked process, whose parent ends it.
STOPPING = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
#: prctl(2): the signal a process gets when the thread that forked it ends.
PR_SET_PDEATHSIG = 1
#: How long a pool's worker has to end its hooks once told to stop.
WORKER_GRACE_S = 5.0


def die_with(parent: int, sig: int = signal.SIGKILL) -> None:
    """Have this process (forked, or a worker of a pool) get ``sig`` when its parent ends,
    however it ends (SIGKILL, a crash: a part writes to a file, not a pipe, so no broken
    pipe would tell it). Linux only; the parent starts it from its main thread, which
    lives as long as it does."""
    try:
        from toolrun.reaper.side import prctl

        prctl(PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # it ended before the request was made
        os._exit(1)


#: In a pool's worker: the process that started it.
_parent: int | None = None


def worker_start(parent: int) -> None:
    """A pool worker's start (a check of several inputs, one process each). Ctrl-C and
    SIGHUP are its parent's to answer; SIGTERM from the parent stops the input it checks
    as Ctrl-C stops a check (its hooks are ended, not left); at the parent's end the
    worker exits at once."""
    global _parent
    _parent = parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    die_with(parent, signal.SIGTERM)


def _stop_worker(signum: int, frame: object) -> None:
    if _parent is not None and os.getppid() != _parent:
        # its parent is gone: nobody waits for this input, and its hooks, under the
        # reaper side process, are killed when this process's end of it closes. Unwound
        # instead, from wherever the signal landed (between a read of the side's answers
        # and their use), the worker could wait forever in a cleanup and keep the
        # check's stdout and stderr open with it
        os._exit(1)
    signal.signal(signal.SIGTERM, _stopping)
    raise_now(KeyboardInterrupt())


def _stopping(signum: int, frame: object) -> None:
    """SIGTERM to a worker stopping already (its parent's, after the group's): raised
    again, it cut the stop short or printed a traceback; the parent's SIGKILL bounds the
    stop. With the parent gone, the worker exits at once."""
    if _parent is not None and os.getppid() != _parent:
        os._exit(1)


def in_worker(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` in a pool's worker; stopped (by whatever exception) with its parent
    gone since, the worker ends once the work has unwound (the pool's queue, which every
    worker holds both ends of, would never tell it)."""
    try:
        return work(*args)
    except BaseException:
        if _parent is not None and os.getppid() != _parent:
            os._exit(1)
        raise


def end_workers(processes: Sequence[Any], grace: float = WORKER_GRACE_S) -> None:
    """Stop a pool's workers now (SIGTERM, then SIGKILL after ``grace`` seconds), rather
    than wait for each to finish its input."""
    from multiprocessing.connection import wait

    for process in processes:
        process.terminate()
    wait([p.sentinel for p in processes], grace)
    for process in processes:
        if process.is_alive():
            process.kill()


def _name(name: str) -> None:
    """The name ps and top show for this process (Linux; elsewhere it keeps its own)."""
    try:
        with open("/proc/self/comm", "w") as f:
            f.write(name)
    except OSError:  # pragma: no cover - not Linux
        pass


#: records pickled at a time: a pickle remembers every object it wrote (to write it again
#: as a reference), which for a whole part was a third of the process's memory
BATCH = 2048


def _dump(records: Sequence[CallCheck], file: BinaryIO) -> None:
    pickle.dump([_row(r) for r in records], file, pickle.HIGHEST_PROTOCOL)
    file.flush()  # whole in the file: the parent joins it while the next batch is decided


def _row(record: CallCheck) -> list[Any]:
    """A record as plain data: a named tuple, and the frozen dataclasses of its deps,
    pickle (and load) through Python code for each; a list of tuples of strings does
    not (a third of the cost, which was a tenth of a part process's). A list, which the
    process joining it changes in place (its run, its deps) before it makes it a record:
    new tuples cost that process twice as much."""
    row: list[Any] = list(record)
    deps = record.deps
    if deps is not None:
        reads, writes, follows_cd = deps
        read = None if reads is None else (reads.lines, reads.trees, reads.repos, reads.searches)
        written = (
            None if writes is None
            else (writes.paths, writes.anything, writes.moves_cwd, writes.contents)
        )  # fmt: skip
        row[_DEPS] = (read, written, follows_cd)
    return row


def _record(row: list[Any], shift: int) -> CallCheck:
    """The record of a :func:`_row` (changed in place), its run number moved on by ``shift``."""
    if shift and row[_RUN]:
        row[_RUN] += shift
    plain = row[_DEPS]
    if plain is not None:
        from toolrun.execution.depends import Reads, Writes

        reads, writes, follows_cd = plain
        row[_DEPS] = (
            None if reads is None else Reads(*reads),
            None if writes is None else Writes(*writes),
            follows_cd,
        )
    return _new(CallCheck, row)


def _send(got: Decided | None, out: BinaryIO) -> None:
    """After the batches a part gave its sink: the rest of ``got``'s records, then the
    end mark with its runs (or the mark of nothing: decide the part here)."""
    if got is None:
        pickle.dump(("none",), out, pickle.HIGHEST_PROTOCOL)
        return
    runs, calls = got
    for start in range(0, len(calls), BATCH):
        _dump(list(calls[start : start + BATCH]), out)
    pickle.dump(("end", runs), out, pickle.HIGHEST_PROTOCOL)


#: a part's row to its record, its run number moved on by the shift given
Convert = Callable[[list[Any], int], "CallCheck"]


def _receive(source: BinaryIO, shift: int = 0, convert: Convert | None = None) -> Decided | None:
    """What a part sent (EOFError, UnpicklingError...: not all of it), its run numbers
    moved on by ``shift`` batch by batch (never two copies of the records at once);
    ``convert``: what makes each row a record (``_record``)."""
    calls: list[CallCheck] = []
    record = convert or _record
    while True:
        got: Any = pickle.load(source)
        if type(got) is list:
            calls.extend([record(row, shift) for row in got])
        elif got == ("none",):
            return None
        elif type(got) is tuple and len(got) == 2 and got[0] == "end":
            return got[1], tuple(calls)
        else:
            raise ValueError("not a part's records")


def _moved(calls: Sequence[CallCheck], shift: int) -> Sequence[CallCheck]:
    """Records with their run numbers moved on by ``shift`` (the runs of earlier parts)."""
    if not shift:
        return calls
    # (a third of what ``_replace`` takes, for 50,000 records)
    return [_new(CallCheck, (*c[:_RUN], c.run + shift, *c[_RUN + 1 :])) if c.run else c
            for c in calls]  # fmt: skip


def shifted(got: Decided, shift: int) -> Decided:
    """A part decided here, its run numbers moved on as ``collect_part`` moves them."""
    return got[0], tuple(_moved(got[1], shift))


def collect_part(
    pid: int, fd: int, shift: int = 0, convert: Convert | None = None
) -> Decided | None:
    """The records a forked process sent (run numbers moved on by ``shift``; each row
    made a record by ``convert``), read as it writes them, or None when it did not send
    them whole (a pickle cut short does not load, the end mark is missing) or did not
    exit as done."""
    got: Decided | None = None
    whole = False
    written = _Written(pid, fd) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    with io.BufferedReader(written or io.FileIO(fd, "rb"), 1 << 16) as source:
        try:
            got = _receive(source, shift, convert)  # as it comes: never the whole of it as bytes
            whole = source.read(1) == b""
        except Exception:  # noqa: BLE001 - a process that died while writing
            whole = False
    status = written.status if written and written.status is not None else os.waitpid(pid, 0)[1]
    if not whole or os.waitstatus_to_exitcode(status) != 0:
        return None
    return got


class _Written(io.RawIOBase):
    """The file a part process writes its records to, read as they are written: a read
    waits for more until the process has ended (then the end of the file is the end).

    Read at its own offset (``pread``): the process writes through a copy of the same
    descriptor, whose offset is its own. The process is watched through a pidfd, not
    reaped, so that its pid stays its own for ``end_part`` until ``collect_part`` reaps
    it; where there is no pidfd, it is reaped before its file is read, as it ends."""

    #: how long a read waits for more, at most, before it looks again
    WAIT_S = 0.005

    def __init__(self, pid: int, fd: int) -> None:
        super().__init__()
        self.pid, self.fd, self.at = pid, fd, 0
        self.ended = False
        self.status: int | None = None  # (reaped here: no pidfd)
        try:
            self.exits: int | None = os.pidfd_open(pid)  # readable once the process ends
        except (AttributeError, OSError):  # not Linux 5.3 or later
            self.exits = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while True:
            got = os.pread(self.fd, len(buffer), self.at)
            if got or self.ended:
                buffer[: len(got)] = got
                self.at += len(got)
                return len(got)
            # nothing more yet: wait for more, or for the end (what it wrote before it
            # ended is all in the file, read by the next turn of the loop)
            self.ended = self._wait()

    def _wait(self) -> bool:
        """Whether the process has ended, once it has or a moment has passed."""
        if self.exits is not None:
            return bool(select.select([self.exits], [], [], self.WAIT_S)[0])
        self.status = os.waitpid(self.pid, 0)[1]
        return True

    def close(self) -> None:
        if not self.closed:
            if self.exits is not None:
                os.close(self.exits)
            os.close(self.fd)
        super().close()


def end_part(pid: int, fd: int) -> None:
    """A forked process that is not done when this one stops: ended, reaped."""
    try:
        os.close(fd)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def joined(decided: Sequence[Decided]) -> Decided:
    """The parts' records, their run numbers already moved on (``collect_part``,
    ``shifted``), as one process would have made them: an allow that an earlier call
    may change is marked here, in plan order across the parts (as ``PlanDependencies``
    marks one process's), and what the parts kept for it is let go."""
    joiner = Joiner()
    for part in decided:
        joiner.add(part)
    return joiner.joined()


class Joiner:
    """The parts' records joined in plan order, part after part (``joined``); a part
    process's rows are joined as they are read (``collect``), each made its final record
    at once rather than a record with its deps first, then another without them.

    ``writers``: the writes of the first part's calls, when its process marked them
    itself (``CheckDecider.plan.writers``; its records keep none), rather than built
    again from its records."""

    def __init__(self, writers: Writers | None = None) -> None:
        from toolrun.execution.depends import Reads, Writers, Writes

        self.runs: list[tuple[int, str, int]] = []
        self.calls: list[CallCheck] = []
        self.writers = Writers() if writers is None else writers
        self._reads, self._writes = Reads, Writes

    @property
    def shift(self) -> int:
        """The runs joined so far: what the next part's run numbers move by."""
        return len(self.runs)

    def add(self, decided: Decided) -> None:
        """A part's records (its run numbers moved on by ``shift`` already)."""
        part_runs, part_calls = decided
        self.runs.extend(part_runs)
        writers = self.writers
        self.calls.extend(c if c.deps is None else _across(c, writers) for c in part_calls)

    def collect(self, pid: int, fd: int) -> bool:
        """The next part, as its process sends it (``collect_part``); False, and nothing
        joined, when it did not send it whole."""
        before = self.writers.copy()
        got = collect_part(pid, fd, self.shift, self._row)
        if got is None:
            self.writers = before  # (the rows read before it failed joined nothing)
            return False
        self.runs.extend(got[0])
        self.calls.extend(got[1])
        return True

    def _row(self, row: list[Any], shift: int) -> CallCheck:
        """``_across(_record(row, shift))``, without the record in between (the row is
        changed in place: it is fresh from the pickle)."""
        if shift and row[_RUN]:
            row[_RUN] += shift
        plain = row[_DEPS]
        if plain is None:
            return _new(CallCheck, row)
        row[_DEPS] = None
        reads, writes, follows_cd = plain
        writers = self.writers
        writer = None
        if reads is not None and row[_DECISION] == "allow" and writers:
            writer = writers.on(self._reads(*reads), follows_cd=follows_cd)
        if writes is not None and (writes[0] or writes[1] or writes[2]):  # (``Writes`` true)
            writers.add(row[_ID], self._writes(*writes))
        record = _new(CallCheck, row)
        return record if writer is None else _marked(record, writer)

    def joined(self) -> Decided:
        return tuple(self.runs), tuple(self.calls)


def _across(call: CallCheck, writers: Writers) -> CallCheck:
    """``call`` marked when the writes of the calls before it (in every part) meet what
    it read; its own writes join them."""
    assert call.deps is not None
    reads, writes, follows_cd = call.deps
    writer = None
    if reads is not None and call.decision == "allow" and writers:
        writer = writers.on(reads, follows_cd=follows_cd)
    if writes:
        writers.add(call.id, writes)
    # only what the part kept for the marks goes (most calls: a third of what
    # ``_replace`` takes, for 50,000 records)
    record = _new(CallCheck, (*call[:_DEPS], None, *call[_DEPS + 1 :]))
    return record if writer is None else _marked(record, writer)


def _marked(call: CallCheck, writer: str) -> CallCheck:
    """An allow of a later part that ``writer``, an earlier call, may change: an ask."""
    from toolrun.execution.depends import mark_reason

    # (a marked ask runs nowhere yet: exec decides it afresh, as one process marks it)
    return call._replace(decision="ask", kind="depends", rule=None, source=writer,
                         reason=mark_reason(call.reason, writer), runs_in=None,
                         runs_in_why=None)  # fmt: skip


#: where a record keeps its id, decision, run number, and what a part kept for the marks
#: across parts
_ID, _DECISION, _RUN, _DEPS = 1, 4, 14, 21
#: a record from its fields, as they are (``CallCheck._make`` checks their number: the
#: fields come from a record)
_new = tuple.__new__


def starts_of_turns(turns: Sequence[Turn | None]) -> list[int]:
    """Each turn's first call index (an empty turn: the index its first call would have),
    for the 1-based turn of a call by bisection: kept in order, as bisection needs (-1
    for an empty turn put calls before it in the turns after it)."""
    return starts_of([len(t.calls) if t is not None else 0 for t in turns])


def starts_of(sizes: Sequence[int]) -> list[int]:
    """``starts_of_turns`` of turns of ``sizes`` calls each."""
    starts: list[int] = []
    first = 0
    for size in sizes:
        starts.append(first)
        first += size
    return starts

