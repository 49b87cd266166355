"""Execution speed, end to end through `toolrun exec` (journal on).

Run:  .venv/bin/python bench/exec.py [--repeat 3] [--only NAME] [--against DIR]

1. 1000 read-only Bash calls at concurrency 4 against `xargs -P4` running the
   same commands: ratio of medians (budget <= 1.5x), and toolrun's own CPU per call past
   start-up (the commands run under the reaper side process, which toolrun does not wait
   for, so they are not in it): the figure to compare on a busy machine. Also the CPU
   per call of toolrun, its side process and the commands together above xargs and its
   shells (the bench adopts the side process as a subreaper to count it).
   `--only reaper`: the same commands through the reaper alone, in this process.
2. read: 10,000 Read calls of small files, 20 turns of 500: calls/s (budget >= 10,000/s).
3. 20 `sleep 0.2` calls with a limit of 10: wall time (budget <= 0.5 s).
4. stdin: `exec -` with 10,000 JSONL lines of Bash `true`, piped as fast as toolrun
   reads, against the plan-file form of the same calls (budget <= 2x); then peak RSS
   of `exec -` over 10,000 and 100,000 lines of Read (flat: about the same).
5. `--only verify`: 100 Edit calls (one per file) with `toolrun.autoVerify` running
   ruff after each, against the same plan without verifiers: the added time per edit
   (runs interleaved, medians).

--against DIR: A/B, each figure also measured with the toolrun source in DIR (e.g. a
checkout of main), the two interleaved run by run, so both see the same machine load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from _bytecode import compile_package

TOOLRUN = [sys.executable, "-m", "toolrun"]
# --against: (label, PYTHONPATH) of each side; without it, this checkout only
SIDES: list[tuple[str, str | None]] = [("toolrun", None)]


def write_plan(path: Path, calls: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"calls": calls}))
    return path


def measured(
    cmd: list[str], cwd: Path, stdin: str | None = None, pythonpath: str | None = None
) -> tuple[float, int, float]:
    """(wall seconds, peak RSS in KB, CPU seconds) of one run of ``cmd``; stdin is
    written as fast as the command reads it. CPU time is steadier than wall time on a
    busy machine."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin.encode() if stdin is not None else b"")
            proc.stdin.close()

    writer = threading.Thread(target=feed) if stdin is not None else None
    if writer is not None:
        writer.start()
    assert proc.stderr is not None
    err = proc.stderr.read()
    if writer is not None:
        writer.join()
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here: its own peak RSS
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed ({code}): {err[-2000:]!r}")
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, stdin: str | None = None) -> float:
    return measured(cmd, cwd, stdin)[0]


def toolrun_exec(ws: Path, plan: Path, *extra: str, pythonpath: str | None = None) -> float:
    return toolrun_measured(ws, plan, *extra, pythonpath=pythonpath)[0]


def toolrun_measured(
    ws: Path, plan: Path, *extra: str, pythonpath: str | None = None
) -> tuple[float, int, float]:
    cmd = [*TOOLRUN, "exec", str(plan), "--workspace", str(ws), "--format", "jsonl", *extra]
    return measured(cmd, ws, pythonpath=pythonpath)


R = TypeVar("R")


def sides(repeat: int, one: Callable[[str | None], R]) -> dict[str, list[R]]:
    """``one(pythonpath)`` ``repeat`` times for each side, the sides interleaved."""
    found: dict[str, list[R]] = {label: [] for label, _ in SIDES}
    for _ in range(repeat):
        for label, path in SIDES:
            found[label].append(one(path))
    return found


def cpu_of(run: Callable[[], float]) -> tuple[float, float]:
    """Wall time and CPU seconds of the process(es) ``run`` starts and waits for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def adopt_orphans() -> None:
    """Become a child subreaper (Linux): toolrun's reaper side process, left behind when
    toolrun exits, becomes our child, so its CPU (and its commands') can be counted."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def orphans_cpu() -> float:
    """CPU seconds of the orphans adopted since the last call (waited for here)."""
    total = 0.0
    while True:
        try:
            _, _, usage = os.wait4(-1, 0)
        except ChildProcessError:
            return total
        total += usage.ru_utime + usage.ru_stime


def bench_bash(ws: Path, repeat: int) -> None:
    """Wall times and ratio as the budget states it; and two CPU figures: toolrun's own
    per call, and everything per call (toolrun, its side process, the commands) above
    what xargs and its shells take for the same commands, which on two busy cores is
    what the wall time follows."""
    n = 1000
    commands = [f"echo line-{i}" for i in range(n)]
    plan = write_plan(
        ws / "bash.json", [{"tool": "Bash", "input": {"command": c}} for c in commands]
    )
    one = write_plan(ws / "bash-one.json", [{"tool": "Bash", "input": {"command": "true"}}])
    stdin = "\n".join(commands) + "\n"
    adopt_orphans()
    orphans_cpu()
    found: dict[str, list[tuple[float, float, float, float, float]]] = {l: [] for l, _ in SIDES}
    xargs: list[tuple[float, float]] = []
    for _ in range(repeat):
        for label, path in SIDES:
            wall, _, cpu = toolrun_measured(ws, plan, "--max-concurrency", "4", pythonpath=path)
            side = orphans_cpu()
            _, _, start_cpu = toolrun_measured(ws, one, pythonpath=path)
            start_side = orphans_cpu()
            found[label].append((wall, cpu, side, start_cpu, start_side))
        x_wall, _, x_cpu = measured(
            ["xargs", "-P4", "-d", "\n", "-I{}", "bash", "-c", "{}"], ws, stdin=stdin
        )
        xargs.append((x_wall, x_cpu))
    b = statistics.median(w for w, _ in xargs)
    x_cpu = statistics.median(c for _, c in xargs)
    print(f"xargs -P4: {b:.2f} s, CPU with its shells {x_cpu:.2f} s (runs "
          f"{_list([w for w, _ in xargs])})")
    for label, runs in found.items():
        a = statistics.median(r[0] for r in runs)
        own = statistics.median((r[1] - r[3]) / n * 1e6 for r in runs)
        above = statistics.median((r[1] + r[2] - r[3] - r[4]) / n * 1e6 for r in runs)
        print(
            f"{label}: 1000 read-only Bash calls, concurrency 4: {a:.2f} s, ratio "
            f"{a / b:.2f}x xargs (budget 1.5x); toolrun's own CPU "
            f"{statistics.median(r[1] for r in runs):.2f} s, {own:.0f} us a call past "
            f"start-up; toolrun + side process + commands {above - x_cpu / n * 1e6:.0f} us "
            f"a call above xargs (runs {_list([r[0] for r in runs])})"
        )


def bench_reaper(ws: Path, repeat: int) -> None:
    """The same 1000 commands through the reaper alone (run_command at concurrency 4 in
    this process): what spawning, waiting and reading output cost, without the executor,
    the permission checks, the journal or toolrun's start-up."""
    import anyio

    from toolrun.reaper import link
    from toolrun.reaper.run import run_command
    from toolrun.tools.builtins.bash_env import shell_environment

    n = 1000
    bash = shutil.which("bash") or "bash"

    async def run_all() -> None:
        calls = iter(range(n))

        async def worker() -> None:
            for i in calls:
                out: list[bytes] = []
                env = shell_environment(os.environ)
                argv = [bash, "-c", f"echo line-{i}"]
                await run_command(argv, cwd=ws, env=env, time_limit=60, stdout=out.append)

        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(worker)

    link.prestart()
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        anyio.run(run_all)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    print(
        f"1000 Bash commands through the reaper alone, concurrency 4: "
        f"{statistics.median(walls):.2f} s, {statistics.median(cpus) / n * 1e6:.0f} us of "
        "this process's CPU a call"
    )


def small_files(ws: Path, n: int = 10_000) -> list[str]:
    files = ws / "files"
    if not files.exists():
        files.mkdir()
        for i in range(n):
            (files / f"f{i}.txt").write_text(f"line one of {i}\nline two\n")
    return [f"files/f{i}.txt" for i in range(n)]


def bench_read(ws: Path, repeat: int) -> None:
    names = small_files(ws)
    n = len(names)
    turns = [
        {"calls": [{"tool": "Read", "input": {"file_path": f}} for f in names[t : t + 500]]}
        for t in range(0, n, 500)
    ]
    plan = ws / "read.json"
    plan.write_text(json.dumps({"turns": turns}))
    found = sides(repeat, lambda path: toolrun_measured(ws, plan, pythonpath=path))
    for label, runs in found.items():
        walls, cpus = [r[0] for r in runs], [r[2] for r in runs]
        wall = statistics.median(walls)
        print(
            f"{label}: 10,000 Read calls, 20 turns of 500 (journal on): {wall:.2f} s, "
            f"{n / wall:,.0f} calls/s (budget 10,000/s); runs {_list(walls)}; "
            f"CPU s median {statistics.median(cpus):.2f} (runs {_list(cpus)})"
        )


def bench_stdin(ws: Path, repeat: int) -> None:
    n = 10_000
    call = {"tool": "Bash", "input": {"command": "true"}}
    lines = (json.dumps(call) + "\n") * n
    plan = write_plan(ws / "true.json", [call] * n)
    stream = [*TOOLRUN, "exec", "-", "--workspace", str(ws), "--format", "jsonl"]

    def ratio(path: str | None) -> float:
        piped = measured(stream, ws, stdin=lines, pythonpath=path)[0]
        return piped / toolrun_exec(ws, plan, pythonpath=path)

    for label, ratios in sides(repeat, ratio).items():
        print(
            f"{label}: exec - with 10,000 lines of Bash true / the plan file: "
            f"{statistics.median(ratios):.2f}x (budget 2x); runs {_list(ratios)}"
        )
    reads = [json.dumps({"tool": "Read", "input": {"file_path": f}}) + "\n" for f in small_files(ws)]
    for label, path in SIDES:
        peaks = []
        for count in (10_000, 100_000):
            text = "".join(reads) * (count // len(reads))
            wall, rss, _ = measured(stream, ws, stdin=text, pythonpath=path)
            peaks.append(rss)
            print(f"{label}: exec - with {count:,} lines of Read: {wall:.1f} s, peak RSS {rss // 1024} MB")
        print(f"{label}: peak RSS 100,000 / 10,000 lines: {peaks[1] / peaks[0]:.2f}x (flat: ~1x)")


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def bench_sleep(ws: Path, repeat: int) -> None:
    plan = write_plan(
        ws / "sleep.json", [{"tool": "Bash", "input": {"command": "sleep 0.2"}} for _ in range(20)]
    )
    walls, runs = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        out = subprocess.run(
            [*TOOLRUN, "exec", str(plan), "--workspace", str(ws), "--format", "json",
             "--max-concurrency", "10"],
            cwd=ws, capture_output=True, text=True, check=True,
        ).stdout
        walls.append(time.perf_counter() - start)
        runs.append(json.loads(out)["summary"]["wall_ms"] / 1000)
    print(
        f"20 x sleep 0.2, limit 10: run wall {statistics.median(runs):.2f} s (budget 0.5 s); "
        f"whole process {statistics.median(walls):.2f} s with start-up"
    )


def bench_verify(ws: Path, repeat: int) -> None:
    n = 100
    src = ws / "src"
    src.mkdir()
    plan = write_plan(
        ws / "edits.json",
        [
            {
                "tool": "Edit",
                "input": {
                    "file_path": f"src/m{i}.py",
                    "old_string": "import sys\n",
                    "new_string": "import os\nimport sys\n",
                },
            }
            for i in range(n)
        ],
    )
    binary = Path(sys.executable).parent / "ruff"  # installed with the test extra
    ruff = f"{binary} check --isolated --no-cache --output-format json {{files}}"
    verifier = {"name": "ruff", "files": ["*.py"], "command": ruff, "format": "json"}
    configs = {}
    for name, extra in (("plain", {}), ("verify", {"autoVerify": [verifier]})):
        config = {"permissions": {"allow": ["Edit"]}, "toolrun": {"maxCallsPerTurn": 1000, **extra}}
        configs[name] = ws / f"{name}.json"
        configs[name].write_text(json.dumps(config))
    walls: dict[str, list[float]] = {"plain": [], "verify": []}
    for _ in range(repeat):
        for name in ("plain", "verify"):
            for i in range(n):  # every edit adds an unused import: one F401 each
                (src / f"m{i}.py").write_text(f"import sys\n\n\ndef f{i}():\n    return sys.argv\n")
            walls[name].append(toolrun_exec(ws, plan, "--config", str(configs[name])))
    plain, verify = statistics.median(walls["plain"]), statistics.median(walls["verify"])
    print(
        f"100 Edit calls: without verifiers {plain:.2f} s, with ruff after each {verify:.2f} s; "
        f"added {(verify - plain) / n * 1000:.1f} ms per edit (repeats: plain "
        + ", ".join(f"{w:.2f}" for w in walls["plain"]) + "; verify "
        + ", ".join(f"{w:.2f}" for w in walls["verify"]) + ")"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only", choices=["bash", "reaper", "read", "sleep", "stdin", "verify"]
    )
    parser.add_argument("--against", metavar="DIR", help="A/B with the toolrun source in DIR")
    args = parser.parse_args()
    compile_package(args.against)  # time toolrun as installed: from bytecode
    if args.against:
        SIDES[:] = [("this", str(Path(__file__).resolve().parent.parent)),
                    (f"against {args.against}", str(Path(args.against).resolve()))]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "toolrun.yaml").write_text("toolrun: {maxCallsPerTurn: 10000}\n")
        benches = (
            ("bash", bench_bash),
            ("reaper", bench_reaper),
            ("read", bench_read),
            ("sleep", bench_sleep),
            ("stdin", bench_stdin),
            ("verify", bench_verify),
        )
        for name, fn in benches:
            if args.only in (None, name):
                fn(ws, args.repeat)


if __name__ == "__main__":
    main()
