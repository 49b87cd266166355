"""What the sandbox costs a Bash call, end to end through `toolrun exec`.

Run:  .venv/bin/python bench/sandbox.py [--calls 1000] [--repeat 3]

The same 1000 read-only Bash calls (one at a time, so each call's own run time
is clean) with and without `sandbox.enabled`, alternating, in one run. Prints
the median run time of a call each way, the median added cost per call
(budget <= 10 ms), and the wall-time ratio of the two runs; and, for scale,
what a bare ``bwrap --ro-bind / / --unshare-net true`` costs over
``bash -c true`` on this machine at the same time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLRUN = [str(Path(sys.executable).parent / "toolrun")]


def run(ws: Path, plan: Path) -> tuple[float, list[float]]:
    """Wall time of the run and each call's run time (ms)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [
            *TOOLRUN,
            "exec",
            str(plan),
            "--workspace",
            str(ws),
            "--format",
            "jsonl",
            "--max-concurrency",
            "1",
            "--no-journal",
        ],
        cwd=ws,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    failed = [r for r in results if r["status"] != "ok"]
    if proc.returncode != 0 or failed:
        raise SystemExit(
            f"toolrun exec failed ({proc.returncode}): {proc.stderr[-2000:]}{failed[:1]}"
        )
    return wall, [float(r["duration_ms"]) for r in results]


def floor(rounds: int = 200) -> float:
    """Median extra time of a bare bwrap over bash, measured interleaved (ms)."""
    bare, boxed = [], []
    for _ in range(rounds):
        for argv, into in (
            (["bash", "-c", "true"], bare),
            (["bwrap", "--ro-bind", "/", "/", "--unshare-net", "true"], boxed),
        ):
            start = time.perf_counter()
            subprocess.run(argv, check=True)
            into.append(time.perf_counter() - start)
    return (statistics.median(boxed) - statistics.median(bare)) * 1000


def workspace(root: Path, name: str, config: str, calls: int) -> tuple[Path, Path]:
    ws = root / name
    ws.mkdir()
    (ws / "toolrun.yaml").write_text(config)
    plan = ws / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "calls": [
                    {"tool": "Bash", "input": {"command": f"echo line-{i}"}} for i in range(calls)
                ]
            }
        )
    )
    return ws, plan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        limit = f"toolrun:\n  maxCallsPerTurn: {args.calls}\n"
        bare = workspace(root, "bare", limit + "sandbox:\n  enabled: false\n", args.calls)
        boxed = workspace(
            root,
            "boxed",
            limit + "sandbox:\n  enabled: true\n  failIfUnavailable: true\n",
            args.calls,
        )
        walls: dict[str, list[float]] = {"bare": [], "boxed": []}
        calls: dict[str, list[float]] = {"bare": [], "boxed": []}
        for _ in range(args.repeat):
            for name, (ws, plan) in (("bare", bare), ("boxed", boxed)):
                wall, durations = run(ws, plan)
                walls[name].append(wall)
                calls[name].extend(durations)
    bwrap_ms = floor()
    bare_ms, boxed_ms = statistics.median(calls["bare"]), statistics.median(calls["boxed"])
    bare_wall, boxed_wall = statistics.median(walls["bare"]), statistics.median(walls["boxed"])
    print(f"{args.calls} read-only Bash calls, one at a time, {args.repeat} runs each way")
    print(f"  median call: {bare_ms:.2f} ms unsandboxed, {boxed_ms:.2f} ms sandboxed")
    print(f"  median added cost per call: {boxed_ms - bare_ms:.2f} ms (budget 10 ms)")
    print(
        f"  for scale: a bare `bwrap --ro-bind / / --unshare-net true` costs {bwrap_ms:.2f} ms "
        "more than `bash -c true` here"
    )
    print(
        f"  wall: {bare_wall:.2f} s unsandboxed, {boxed_wall:.2f} s sandboxed, "
        f"ratio {boxed_wall / bare_wall:.2f}x"
    )


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
