"""Start-up cost of `toolrun --help`, a TAB completion, and a one-call `exec` and `check`
(without and with a small config file),
against `python -c pass`.

Run:  .venv/bin/python bench/startup.py [--runs 31] [--against DIR]
Prints the median wall time (and the children's CPU time, steadier on a busy machine)
of each and the ratio to the bare interpreter (design budget: --help and TAB at most 5x;
and, as an aim of our own rather than a budget, a one-call exec or check in 0.15 s: it is
a fixed part of every exec and check figure of issue 17). The one-call runs are a plan of one
Bash `true` in a workspace without a config file (and with `--config` naming a small one:
rules and `maxCallsPerTurn`, as the benches write), journal on, output as JSONL / JSON.

--against DIR: each row also run with the toolrun source in DIR (e.g. a checkout of
main) on PYTHONPATH, the two interleaved run by run so both see the same machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import compile_package

Timing = tuple[float, float]  # (median wall, median CPU of the children), seconds


def median_wall(
    cmd: list[str], runs: int, env: dict[str, str] | None = None, cwd: Path | None = None
) -> float:
    return medians([(cmd, env)], runs, cwd)[0][0]


def medians(
    sides: list[tuple[list[str], dict[str, str] | None]], runs: int, cwd: Path | None = None
) -> list[Timing]:
    """Each command run ``runs`` times, the commands taking turns (A B A B ...)."""
    walls: list[list[float]] = [[] for _ in sides]
    cpus: list[list[float]] = [[] for _ in sides]
    for _ in range(runs):
        for i, (cmd, env) in enumerate(sides):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(
                cmd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=cwd,
                check=False,
            )
            walls[i].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[i].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--against", metavar="DIR", help="A/B with the toolrun source in DIR")
    args = parser.parse_args()
    compile_package(args.against)  # time toolrun as installed: from bytecode

    script = Path(sys.executable).parent / "toolrun"
    toolrun = [str(script)] if script.exists() else [sys.executable, "-m", "toolrun"]
    complete_env = {
        **os.environ,
        "_TOOLRUN_COMPLETE": "bash_complete",
        "COMP_WORDS": "toolrun va",
        "COMP_CWORD": "1",
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    envs: list[tuple[str, dict[str, str] | None]] = [("", None)]
    if args.against:
        envs = [
            ("this", {**env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}),
            ("against", {**env, "PYTHONPATH": str(Path(args.against).resolve())}),
        ]
        toolrun = [sys.executable, "-m", "toolrun"]  # the script would import this checkout
    # warm the .pyc caches
    median_wall([*toolrun, "--help"], 2)

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)  # no toolrun.yaml here, nor (usually) above it
        plan = ws / "one.json"
        plan.write_text(json.dumps({"calls": [{"tool": "Bash", "input": {"command": "true"}}]}))
        one_call = ["--workspace", str(ws)]
        # most projects keep a config file: rules and a few settings, as the benches write
        config = ws / "conf" / "toolrun.yaml"
        config.parent.mkdir()
        config.write_text(
            "permissions:\n  allow: ['Bash(git status)', Edit]\n  ask: ['Bash(git push:*)']\n"
            "  deny: ['Read(.env)']\ntoolrun: {maxCallsPerTurn: 10000}\n"
        )
        with_config = [*one_call, "--config", str(config)]
        commands: list[tuple[str, list[str], dict[str, str] | None]] = [
            ("toolrun --help", [*toolrun, "--help"], None),
            ("toolrun <TAB> (bash_complete)", toolrun, complete_env),
            ("toolrun --version", [*toolrun, "--version"], None),
            (
                "exec (1 Bash call)",
                [*toolrun, "exec", str(plan), *one_call, "--format", "jsonl"],
                env,
            ),
            (
                "check (1 Bash call)",
                [*toolrun, "check", str(plan), *one_call, "--format", "json"],
                env,
            ),
            (
                "exec (1 Bash call, toolrun.yaml)",
                [*toolrun, "exec", str(plan), *with_config, "--format", "jsonl"],
                env,
            ),
            (
                "check (1 Bash call, toolrun.yaml)",
                [*toolrun, "check", str(plan), *with_config, "--format", "json"],
                env,
            ),
        ]
        base = medians([([sys.executable, "-c", "pass"], None)], args.runs)[0]
        rows: list[tuple[str, Timing]] = [("python -c pass", base)]
        for name, cmd, cmd_env in commands:
            sides = [(cmd, {**(cmd_env or os.environ), **(side or {})}) for _, side in envs]
            for (label, _), timing in zip(envs, medians(sides, args.runs, cwd=ws), strict=True):
                rows.append((f"{name} {label}".strip(), timing))
    print(f"median of {args.runs} runs each ({sys.executable}); wall, then children's CPU")
    for name, (wall, cpu) in rows:
        print(
            f"  {name:40s} {wall * 1000:7.1f} ms {wall / base[0]:5.2f}x   cpu {cpu * 1000:7.1f} ms"
        )
    light = [t for name, (t, _) in rows[1:] if not name.startswith(("exec", "check"))]
    worst = max(light) / base[0]
    print(
        f"worst --help/TAB ratio {worst:.2f}x (budget 5x): {'ok' if worst <= 5 else 'OVER BUDGET'}"
    )
    one = max(
        t for name, (t, _) in rows if name.startswith(("exec", "check")) and "against" not in name
    )
    print(
        f"slowest one-call exec/check {one * 1000:.0f} ms (aim 150 ms): "
        + ("met" if one <= 0.15 else "not met")
    )


if __name__ == "__main__":
    main()
