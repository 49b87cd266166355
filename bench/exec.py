"""Execution speed, end to end through `toolrun exec` (journal on).

Run:  .venv/bin/python bench/exec.py [--repeat 3]

1. 1000 read-only Bash calls at concurrency 4 against `xargs -P4` running the
   same commands: ratio of medians (budget <= 1.5x), and toolrun's own CPU per call past
   start-up (the commands run under the reaper side process, which toolrun does not wait
   for, so they are not in it): the figure to compare on a busy machine.
   `--only reaper`: the same commands through the reaper alone, in this process.
2. 10,000 Read calls of small files: calls/s (budget >= 5,000/s).
3. 20 `sleep 0.2` calls with a limit of 10: wall time (budget <= 0.5 s).
4. `--only verify`: 100 Edit calls (one per file) with `toolrun.autoVerify` running
   ruff after each, against the same plan without verifiers: the added time per edit
   (runs interleaved, medians).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TOOLRUN = [str(Path(sys.executable).parent / "toolrun")]


def write_plan(path: Path, calls: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"calls": calls}))
    return path


def timed(cmd: list[str], cwd: Path, stdin: str | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        input=stdin,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall


def toolrun_exec(ws: Path, plan: Path, *extra: str) -> float:
    return timed(
        [*TOOLRUN, "exec", str(plan), "--workspace", str(ws), "--format", "jsonl", *extra], ws
    )


def cpu_of(run: Callable[[], float]) -> tuple[float, float]:
    """Wall time and CPU seconds of the process(es) ``run`` starts and waits for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def bench_bash(ws: Path, repeat: int) -> None:
    n = 1000
    commands = [f"echo line-{i}" for i in range(n)]
    plan = write_plan(
        ws / "bash.json", [{"tool": "Bash", "input": {"command": c}} for c in commands]
    )
    one = write_plan(ws / "bash-one.json", [{"tool": "Bash", "input": {"command": "true"}}])
    ours, theirs, ours_cpu, start_cpu = [], [], [], []
    stdin = "\n".join(commands) + "\n"
    for _ in range(repeat):
        wall, cpu = cpu_of(lambda: toolrun_exec(ws, plan, "--max-concurrency", "4"))
        ours.append(wall)
        ours_cpu.append(cpu)
        # toolrun's CPU alone (the commands run under its side process, which it does not
        # wait for): less that of a one-call run, it is what the calls cost toolrun itself
        start_cpu.append(cpu_of(lambda: toolrun_exec(ws, one))[1])
        theirs.append(
            timed(["xargs", "-P4", "-d", "\n", "-I{}", "bash", "-c", "{}"], ws, stdin=stdin)
        )
    a, b = statistics.median(ours), statistics.median(theirs)
    per_call = (statistics.median(ours_cpu) - statistics.median(start_cpu)) / n * 1e6
    print(
        f"1000 read-only Bash calls, concurrency 4: toolrun {a:.2f} s, xargs -P4 {b:.2f} s, "
        f"ratio {a / b:.2f}x (budget 1.5x); toolrun's own CPU "
        f"{statistics.median(ours_cpu):.2f} s, {per_call:.0f} us a call past start-up"
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


def bench_read(ws: Path, repeat: int) -> None:
    n = 10_000
    files = ws / "files"
    files.mkdir()
    for i in range(n):
        (files / f"f{i}.txt").write_text(f"line one of {i}\nline two\n")
    plan = write_plan(
        ws / "read.json",
        [{"tool": "Read", "input": {"file_path": f"files/f{i}.txt"}} for i in range(n)],
    )
    walls = [toolrun_exec(ws, plan) for _ in range(repeat)]
    wall = statistics.median(walls)
    print(f"10,000 Read calls (journal on): {wall:.2f} s, {n / wall:,.0f} calls/s (budget 5,000/s)")


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
    parser.add_argument("--only", choices=["bash", "reaper", "read", "sleep", "verify"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "toolrun.yaml").write_text("toolrun: {maxCallsPerTurn: 10000}\n")
        benches = (
            ("bash", bench_bash),
            ("reaper", bench_reaper),
            ("read", bench_read),
            ("sleep", bench_sleep),
            ("verify", bench_verify),
        )
        for name, fn in benches:
            if args.only in (None, name):
                fn(ws, args.repeat)


if __name__ == "__main__":
    main()
