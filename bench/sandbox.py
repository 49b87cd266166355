"""What the sandbox and the read-only jail cost a Bash call, end to end through `toolrun exec`.

Run:  .venv/bin/python bench/sandbox.py [--calls 500] [--repeat 3] [--against DIR]
                                        [--srt PACKAGE_DIR] [--only-concurrent]

Rows, each the same read-only Bash calls (``echo line-N``) one at a time, so each call's
own run time (``duration_ms``) is clean, the runs of all rows interleaved round by round:

- unsandboxed: no sandbox, no jail (``toolrun.enforce: off``);
- sandbox: ``sandbox.enabled`` (and ``enforce: off``, so no call goes to the jail);
- jail: no sandbox, the jail on (the calls are judged read-only, so they are jailed);
- with ``--against DIR`` (a checkout of main, whose sandbox starts a bubblewrap per call):
  the same rows with the toolrun source in DIR, interleaved with these;
- with ``--srt PACKAGE_DIR`` (``npm install --prefix /work/peers
  @anthropic-ai/sandbox-runtime``, then ``.../node_modules/@anthropic-ai/sandbox-runtime``):
  srt used as a library (``bench/srt_calls.mjs``), a wrapped spawn per call against a bare
  spawn of the same command, interleaved call by call.

Then 1000 read-only Bash calls at concurrency 4 with the jail on against ``xargs -P4``
running the same commands (wall time, ratio of medians), without the journal and with it
(``journal on``: as a user runs it, every record written and group-fsynced), with the CPU
the whole machine was busy for each (toolrun, its side processes and the commands: spread
perfectly over the cores, that work alone takes busy/cores, the ratio's floor), and how
long after toolrun started its first command did (that time plus xargs's: the ratio
toolrun would reach if every call after its first cost nothing at all). Prints
medians; the added cost of a call is its median minus the unsandboxed median of the same
source. Runs from bytecode (``PYTHONDONTWRITEBYTECODE`` is unset, the package compiled first).
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
from datetime import datetime
from pathlib import Path

from _bytecode import compile_package

TOOLRUN = [sys.executable, "-m", "toolrun"]
HERE = Path(__file__).resolve().parent
#: row -> (toolrun.enforce, sandbox.enabled)
ROWS = {"unsandboxed": ("off", False), "sandbox": ("off", True), "jail": ("auto", False)}


def environment(pythonpath: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return env


def run(ws: Path, plan: Path, pythonpath: str | None, *extra: str) -> tuple[float, list[dict]]:
    """Wall time of one ``toolrun exec`` and its results."""
    wall, _, results = run_cpu(ws, plan, pythonpath, *extra)
    return wall, results


def run_cpu(
    ws: Path, plan: Path, pythonpath: str | None, *extra: str, journal: bool = False
) -> tuple[float, float, list[dict]]:
    """Wall time, toolrun's own CPU seconds (not its side processes' nor the commands',
    which it does not wait for: steadier than the wall time on a busy machine) and the
    results of one ``toolrun exec`` (with ``journal``: as a user runs it, the journal
    written and fsynced; each run's journal removed after it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [*TOOLRUN, "exec", str(plan), "--workspace", str(ws), "--format", "jsonl",
         *([] if journal else ["--no-journal"]), *extra],
        cwd=ws, capture_output=True, text=True, check=False, env=environment(pythonpath),
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if journal:
        shutil.rmtree(ws / ".toolrun", ignore_errors=True)
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    failed = [r for r in results if r["status"] != "ok"]
    if proc.returncode != 0 or failed:
        raise SystemExit(
            f"toolrun exec failed ({proc.returncode}): {proc.stderr[-2000:]}{failed[:1]}"
        )
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, results


def first_start(results: list[dict], launched: float) -> float:
    """Seconds from ``launched`` (the wall clock just before toolrun was started) to the
    start of its first command: the part of the run no command overlaps (the interpreter,
    imports, the config, the plan, the turn's grouping and decisions; the jail starts
    meanwhile)."""
    stamps = [datetime.fromisoformat(r["started_at"]).timestamp()
              for r in results if r.get("started_at")]  # fmt: skip
    return min(stamps) - launched if stamps else float("nan")


def where(result: dict) -> str:
    """Where a call ran, from its metadata (to check that a row measures what it says)."""
    meta = result.get("metadata") or {}
    if (meta.get("jail") or {}).get("enforced"):
        return "jail"
    if (meta.get("sandbox") or {}).get("sandboxed"):
        return "sandbox"
    return "unsandboxed"


def workspace(root: Path, name: str, enforce: str, sandboxed: bool,
              calls: int) -> tuple[Path, Path]:
    ws = root / name
    ws.mkdir()
    (ws / "toolrun.yaml").write_text(
        f"toolrun:\n  maxCallsPerTurn: {calls}\n  enforce: '{enforce}'\n"
        f"sandbox:\n  enabled: {str(sandboxed).lower()}\n  failIfUnavailable: true\n"
    )
    plan = ws / "plan.json"
    commands = [{"tool": "Bash", "input": {"command": f"echo line-{i}"}} for i in range(calls)]
    plan.write_text(json.dumps({"calls": commands}))
    return ws, plan


def single_calls(root: Path, sides: list[tuple[str, str | None]], calls: int,
                 repeat: int) -> dict[tuple[str, str], list[float]]:
    """Each call's duration (ms) per (source, row), the runs interleaved."""
    spaces = {row: workspace(root, row, *how, calls) for row, how in ROWS.items()}
    found: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeat):
        for label, path in sides:
            for row, (ws, plan) in spaces.items():
                _, results = run(ws, plan, path, "--max-concurrency", "1")
                ran = {where(r) for r in results}
                if ran != {row}:
                    raise SystemExit(f"{label} {row}: the calls ran {ran}, not {row}")
                found.setdefault((label, row), []).extend(
                    float(r["duration_ms"]) for r in results
                )
    return found


def srt_calls(package: str, root: Path, calls: int, repeat: int) -> tuple[list[float], list[float]]:
    """srt's and a bare spawn's time per call (ms), from bench/srt_calls.mjs."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("--srt needs node on PATH")
    ws = root / "srt"
    ws.mkdir(exist_ok=True)
    bare: list[float] = []
    srt: list[float] = []
    for _ in range(repeat):
        done = subprocess.run(
            [node, str(HERE / "srt_calls.mjs"), package, str(ws), str(calls)],
            cwd=ws, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"srt failed ({done.returncode}): {done.stderr[-2000:]}")
        found = json.loads(done.stdout.splitlines()[-1])
        bare += found["bare"]
        srt += found["srt"]
    return bare, srt


def concurrent(root: Path, sides: list[tuple[str, str | None]], repeat: int) -> None:
    """1000 read-only Bash calls at concurrency 4, jail on, against xargs -P4."""
    n = 1000
    ws = root / "concurrent"
    ws.mkdir()
    (ws / "toolrun.yaml").write_text(f"toolrun:\n  maxCallsPerTurn: {n}\n")
    commands = [f"echo line-{i}" for i in range(n)]
    plan = ws / "plan.json"
    plan.write_text(json.dumps({"calls": [{"tool": "Bash", "input": {"command": c}}
                                          for c in commands]}))
    stdin = "\n".join(commands) + "\n"
    # each source without the journal (--no-journal), then with it, as a user runs it
    rows = [(label, path, journal) for journal in (False, True) for label, path in sides]
    names = {(label, journal): label + (", journal on" if journal else "")
             for label, _, journal in rows}
    walls: dict[str, list[float]] = {name: [] for name in names.values()}
    cpus: dict[str, list[float]] = {name: [] for name in names.values()}
    firsts: dict[str, list[float]] = {name: [] for name in names.values()}
    ahead: dict[str, list[float]] = {name: [] for name in names.values()}
    busies: dict[str, list[float]] = {name: [] for name in names.values()}
    xargs: list[float] = []
    xargs_busy: list[float] = []
    load = os.getloadavg()[0]
    for _ in range(repeat):
        for label, path, journal in rows:
            name = names[(label, journal)]
            before, launched = busy_seconds(), time.time()
            wall, cpu, results = run_cpu(ws, plan, path, "--max-concurrency", "4",
                                         journal=journal)
            busies[name].append(busy_seconds() - before)
            if {where(r) for r in results} != {"jail"}:
                raise SystemExit(f"{name}: not every call ran in the jail")
            walls[name].append(wall)
            cpus[name].append(cpu)
            # how long the first calls took against the rest: a jail not ready in time
            firsts[name].append(float(results[0]["duration_ms"]))
            ahead[name].append(first_start(results, launched))
        before = busy_seconds()
        start = time.perf_counter()
        subprocess.run(["xargs", "-P4", "-d", "\n", "-I{}", "bash", "-c", "{}"], input=stdin,
                       text=True, cwd=ws, check=True, stdout=subprocess.DEVNULL)
        xargs.append(time.perf_counter() - start)
        xargs_busy.append(busy_seconds() - before)
    base = statistics.median(xargs)
    cores = os.cpu_count() or 1
    print(f"1000 read-only Bash calls, concurrency 4, jail on; xargs -P4: {base:.2f} s "
          f"(runs {_list(xargs)}), the machine busy {statistics.median(xargs_busy):.2f} "
          f"CPU-s on {cores} cores")
    for label, runs in walls.items():
        wall = statistics.median(runs)
        busy = statistics.median(busies[label])
        # on these cores no schedule of that much work ends sooner: the ratio's floor
        floor = busy / cores
        print(f"  {label}: {wall:.2f} s, {wall / base:.2f}x xargs (budget 1.5x, aim 1.2x; "
              f"runs {_list(runs)}); toolrun's own CPU {statistics.median(cpus[label]):.2f} s; "
              f"the machine busy {busy:.2f} CPU-s (all of it on {cores} cores: {floor:.2f} s, "
              f"{floor / base:.2f}x); first call {statistics.median(firsts[label]):.1f} ms")
        # were every call free after that, the commands alone would still take xargs's time
        before_first = statistics.median(ahead[label])
        print(f"    first command started {before_first:.2f} s after toolrun; that plus "
              f"xargs's time: {before_first + base:.2f} s, {(before_first + base) / base:.2f}x "
              f"(the ratio with no cost per call at all)")
    print(f"  load average (1 min) before: {load:.2f}, after: {os.getloadavg()[0]:.2f}")


def busy_seconds() -> float:
    """CPU seconds the whole machine has been busy since boot (every process, every core:
    toolrun, its side processes and the commands alike), from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:]
    except OSError:
        return float("nan")
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", metavar="DIR", help="A/B with the toolrun source in DIR")
    parser.add_argument("--srt", metavar="PACKAGE_DIR", help="also measure srt, from there")
    parser.add_argument("--skip-concurrent", action="store_true")
    parser.add_argument("--only-concurrent", action="store_true",
                        help="only the 1000 calls at concurrency 4 against xargs -P4")
    args = parser.parse_args()
    compile_package(args.against)  # time toolrun as installed: from bytecode
    sides: list[tuple[str, str | None]] = [("this", str(HERE.parent))]
    if args.against:
        sides.append((f"against {args.against}", str(Path(args.against).resolve())))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.only_concurrent:
            concurrent(root, sides, args.repeat)
            return
        found = single_calls(root, sides, args.calls, args.repeat)
        print(f"{args.calls} read-only Bash calls one at a time, {args.repeat} runs of each "
              "row, interleaved; median call (ms), and added over unsandboxed")
        for label, _ in sides:
            bare = statistics.median(found[(label, "unsandboxed")])
            print(f"  {label}: unsandboxed {bare:.2f}")
            for row, budget in (("sandbox", 2.0), ("jail", 1.0)):
                median = statistics.median(found[(label, row)])
                print(f"  {label}: {row} {median:.2f}, +{median - bare:.2f} ms "
                      f"(budget {budget:g} ms)")
        if args.srt:
            bare_ms, srt_ms = srt_calls(args.srt, root, args.calls, args.repeat)
            b, s = statistics.median(bare_ms), statistics.median(srt_ms)
            print(f"  srt (library, wrapWithSandbox + spawn per call): {s:.2f}, bare spawn "
                  f"{b:.2f}, +{s - b:.2f} ms")
        if not args.skip_concurrent:
            concurrent(root, sides, args.repeat)


if __name__ == "__main__":
    main()


def workspace_jail_rows(calls: int = 300, repeat: int = 3) -> list[str]:
    """What a call in each jail (#25) adds over the same call unjailed (``--enforce off``),
    end to end through `toolrun exec`, the runs alternating; the rows, also printed.

    Run:  .venv/bin/python -c 'from bench.sandbox import workspace_jail_rows as w; w()'

    ``echo line-N > out.txt`` in acceptEdits is a workspace file command (the workspace
    jail); ``echo line-N`` under bypassPermissions runs in the masks-only jail, and in the
    default mode in the read-only jail. Budget: 1 ms (the read-only jail's, design §8).
    """
    cases = [  # (jail, mode, command)
        ("workspace", "acceptEdits", "echo line-{i} > out.txt"),
        ("masks-only", "bypassPermissions", "echo line-{i}"),
        ("read-only", "default", "echo line-{i}"),
    ]
    rows = [f"{calls} Bash calls, one at a time, {repeat} runs each way: median call"]
    with tempfile.TemporaryDirectory() as tmp:
        for jail, mode, command in cases:
            config = f"toolrun:\n  maxCallsPerTurn: {calls}\npermissions:\n  defaultMode: {mode}\n"
            ws, plan = workspace(Path(tmp), jail, config, calls)
            plan.write_text(json.dumps({"calls": [
                {"tool": "Bash", "input": {"command": command.format(i=i)}} for i in range(calls)
            ]}))
            durations: dict[str, list[float]] = {"on": [], "off": []}
            for _ in range(repeat):
                for way in ("on", "off"):
                    extra = [] if way == "on" else ["--enforce", "off"]
                    durations[way].extend(_jail_run(ws, plan, extra, jail))
            on, off = statistics.median(durations["on"]), statistics.median(durations["off"])
            rows.append(f"  {jail} jail: {on:.2f} ms, unjailed {off:.2f} ms, "
                        f"added {on - off:.2f} ms")
    for row in rows:
        print(row)
    return rows


def _jail_run(ws: Path, plan: Path, extra: list[str], jail: str) -> list[float]:
    proc = subprocess.run(
        [*TOOLRUN, "exec", str(plan), "--workspace", str(ws), "--format", "jsonl",
         "--max-concurrency", "1", "--no-journal", *extra],
        cwd=ws, capture_output=True, text=True, check=False,
    )
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    jailed = [r for r in results if (r.get("metadata") or {}).get("jail", {}).get("enforced")]
    if proc.returncode != 0 or any(r["status"] != "ok" for r in results) or (
        not extra and len(jailed) != len(results)
    ):
        raise SystemExit(f"toolrun exec ({jail} jail) failed: {proc.stderr[-2000:]}")
    return [float(r["duration_ms"]) for r in results]
