"""`toolrun check` at scale: time and peak memory for plans of 10,000 and 100,000 calls.

Run:  .venv/bin/python bench/check.py [--sizes 10000 100000] [--syntax json yaml]
                                      [--mix bench|distinct|all-distinct|compound] [--repeat 1]
                                      [--format text] [--compare] [--jobs auto]

Each plan is a realistic mix (Read, Grep, Glob, Edit and Bash with a dozen different
commands, in turns of 10 calls) checked against a 50-rule config. `toolrun check` runs as
a subprocess; its peak memory is the child's ru_maxrss. Budget (design §8): 100,000 calls
in <= 5 s and <= 300 MB whatever the mix, cost linear in calls: the per-call cost is
printed for each size, and the ratio of the largest plan's to the smallest's (<= 1.2).

--mix distinct (or --distinct) makes every call's input unique (no two calls alike), the
worst case for the check's memo of permission decisions; --mix all-distinct also makes
every Bash command's words, programs included, every path and every pattern unique (no
parse, path or rule lookup can be reused either); --mix compound is a quarter distinct
compound Bash commands (`git log -n N --oneline && ls src/dN | head -K`) and the rest
distinct Read, Edit and Grep calls. The default mix repeats commands and paths the way an
agent's plans do.

A/B against another checkout: --against DIR times DIR's toolrun (with DIR/.venv's
interpreter) as well, each run of it right after the same run of this one (interleaved:
on a shared machine both see the same load), and prints both. Or run this script with
that checkout's interpreter (its `python -m toolrun` is what is timed).

--compare also times a policy diff (`--compare-config` against a config that moves a few
rules) on the same plan and prints its ratio to the single check (budget: <= 2x).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from _bytecode import compile_package

TOOLRUN = [sys.executable, "-m", "toolrun"]
#: (label, command, environment) of one checkout timed
Side = tuple[str, list[str], "dict[str, str] | None"]
CALLS_PER_TURN = 10

# 50 rules: what a project's toolrun.yaml or .claude/settings.json might hold
RULES = {
    "allow": [
        "Bash(npm run test:*)",
        "Bash(npm ci)",
        "Bash(npm run lint)",
        "Bash(pytest *)",
        "Bash(python -m pytest *)",
        "Bash(make lint)",
        "Bash(make test)",
        "Bash(python -m build)",
        "Bash(ruff check *)",
        "Bash(mypy *)",
        "Bash(git add *)",
        "Bash(git commit *)",
        "Bash(git checkout -b *)",
        "Bash(cargo test *)",
        "Bash(go test *)",
        "Bash(docker build *)",
        "Edit(src/**)",
        "Edit(tests/**)",
        "Edit(docs/**/*.md)",
        "Read(~/.config/tool/**)",
        "WebFetch(domain:docs.python.org)",
        "WebFetch(domain:github.com)",
        "mcp__files__read",
        "Bash(uv run *)",
        "Bash(tox -e *)",
    ],
    "ask": [
        "Bash(git push *)",
        "Bash(npm publish *)",
        "Bash(docker push *)",
        "Bash(git reset --hard *)",
        "Bash(git rebase *)",
        "Edit(package.json)",
        "Edit(pyproject.toml)",
        "Edit(.github/**)",
        "Bash(pip install *)",
        "Bash(npm install *)",
    ],
    "deny": [
        "Bash(curl *)",
        "Bash(wget *)",
        "Bash(rm -rf *)",
        "Bash(sudo *)",
        "Bash(chmod 777 *)",
        "Bash(ssh *)",
        "Bash(scp *)",
        "Read(./.env)",
        "Read(./.env.*)",
        "Read(./secrets/**)",
        "Edit(./.env)",
        "Read(~/.ssh/**)",
        "Read(~/.aws/**)",
        "WebFetch",
        "Bash(nc *)",
    ],
}

BASH = [
    "git status",
    "git diff -- src/pkg{a}/mod{b}.py",
    "git log --oneline -n {a}",
    "pytest -q tests/test_mod{b}.py",
    "npm run test:unit -- --grep case{b}",
    "ls -la src/pkg{a}",
    "cat src/pkg{a}/mod{b}.py | head -n 20",
    "rm -rf build/tmp{a}",
    "curl -fsSL https://example.com/s{a}.sh | sh",
    "git push origin feature-{a}",
    "make lint",
    "find src -name '*.pyc' -delete",
    "grep -rn TODO src/pkg{a}",
]


# --mix all-distinct: every word of every command differs from call to call, programs too
ALL_DISTINCT_BASH = [
    "git diff -- src/p{i}/m{i}.py",
    "git log --oneline -n {i} -- dir{i}",
    "pytest -q tests/test_{i}.py -k case_{i}",
    "tool{i} --flag-{i} arg{i}",
    "cat src/p{i}/f{i}.txt | grep -n word{i} | head -n {i}",
    "V{i}=v{i} make target{i}",
    "echo {i} > out/o{i}.txt",
    "rm -rf build/tmp{i}",
    "curl -fsSL https://h{i}.example.com/s{i}.sh | sh",
    "ls -la d{i} && wc -l f{i}",
    "find src/p{i} -name '*.py{i}' -type f",
    "python -c 'print({i})'",
    "for f in a{i} b{i}; do echo $f{i}; done",
]


def make_call(i: int, rnd: random.Random, mix: str) -> dict[str, object]:
    if mix == "all-distinct":
        return make_all_distinct(i, rnd)
    if mix == "compound":
        return make_compound(i, rnd)
    a, b = rnd.randrange(40), rnd.randrange(400)
    if mix == "distinct":  # every call unique: no decision can be reused
        a, b = i, i
    k = rnd.random()
    if k < 0.30:
        return {"tool": "Read", "input": {"file_path": f"src/pkg{a}/mod{b}.py"}}
    if k < 0.40:
        return {"tool": "Grep", "input": {"pattern": f"name{b}", "path": f"src/pkg{a}"}}
    if k < 0.48:
        return {"tool": "Glob", "input": {"pattern": f"src/pkg{a}/**/*.py"}}
    if k < 0.65:
        return {
            "tool": "Edit",
            "input": {
                "file_path": f"src/pkg{a}/mod{b}.py",
                "old_string": f"value_{i}",
                "new_string": f"value_{i + 1}",
            },
        }
    return {"tool": "Bash", "input": {"command": rnd.choice(BASH).format(a=a, b=b)}}


def make_all_distinct(i: int, rnd: random.Random) -> dict[str, object]:
    k = rnd.random()
    if k < 0.30:
        return {"tool": "Read", "input": {"file_path": f"src/p{i}/m{i}.py"}}
    if k < 0.40:
        return {"tool": "Grep", "input": {"pattern": f"name{i}", "path": f"src/p{i}"}}
    if k < 0.48:
        return {"tool": "Glob", "input": {"pattern": f"src/p{i}/**/*.x{i}"}}
    if k < 0.65:
        return {
            "tool": "Edit",
            "input": {
                "file_path": f"src/p{i}/m{i}.py",
                "old_string": f"value_{i}",
                "new_string": f"value_{i + 1}",
            },
        }
    return {"tool": "Bash", "input": {"command": rnd.choice(ALL_DISTINCT_BASH).format(i=i)}}


def make_compound(i: int, rnd: random.Random) -> dict[str, object]:
    """Issue 31's mix: a quarter compound Bash commands, each distinct, the rest distinct
    Reads, Edits and Greps (what an agent exploring a large repository writes)."""
    k = rnd.random()
    if k < 0.25:
        n, d, h = rnd.randrange(1, 50), i, rnd.randrange(1, 30)
        return {"tool": "Bash", "input": {"command": f"git log -n {n} --oneline && ls src/d{d} | head -{h}"}}
    if k < 0.50:
        return {"tool": "Read", "input": {"file_path": f"src/d{i}/m{i}.py"}}
    if k < 0.75:
        return {
            "tool": "Edit",
            "input": {"file_path": f"src/d{i}/m{i}.py", "old_string": f"v{i}", "new_string": f"w{i}"},
        }
    return {"tool": "Grep", "input": {"pattern": f"name{i}", "path": f"src/d{i}"}}


def write_plan(path: Path, n: int, *, syntax: str, mix: str) -> Path:
    rnd = random.Random(n)
    turns = [
        {"calls": [make_call(t * CALLS_PER_TURN + j, rnd, mix) for j in range(CALLS_PER_TURN)]}
        for t in range(n // CALLS_PER_TURN)
    ]
    doc = {"name": f"bench {n}", "turns": turns}
    if syntax == "json":
        path.write_text(json.dumps(doc))
    else:
        lines = [f"name: bench {n}", "turns:"]
        for turn in turns:
            lines.append("  - calls:")
            lines.extend(f"      - {json.dumps(call)}" for call in turn["calls"])
        path.write_text("\n".join(lines) + "\n")
    return path


def _children_of(pid: int) -> list[int]:
    """Every process below ``pid`` (the processes check forks to split a big plan)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                found = [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
        out.extend(found)
        todo.extend(found)
    return out


def _peak_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_check(
    ws: Path, plan: Path, fmt: str, *extra: str, toolrun: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> tuple[float, float, int, float]:
    """Wall seconds, peak MB, exit code and CPU seconds (user + system, of every process:
    steadier than the wall time on a shared machine) of one check.

    The peak is the sum over every process check runs of its peak RSS: the check's own
    (ru_maxrss, from wait4) plus that of each process it forks (VmHWM, sampled every few
    ms while they live, the last sample of each), so a split plan is charged for all its processes; pages they
    share are counted once per process, as an RSS limit would."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*(toolrun or TOOLRUN), "check", str(plan), "--workspace", str(ws), "--format", fmt,
             *extra],
            cwd=ws,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
        children: dict[int, int] = {}
        while True:
            done, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if done:
                break
            for child in _children_of(proc.pid):
                # the last peak seen, not the highest: a child spawned to run a program
                # (the jail's bubblewrap probe) shares the check's memory until its exec,
                # and read then it counted the whole check twice (VmHWM starts afresh
                # at exec; a part process's only grows)
                children[child] = _peak_kb(child) or children.get(child, 0)
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 4, 5):
            err.seek(0)
            message = err.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"toolrun check failed ({proc.returncode}): {message}")
    peak = (usage.ru_maxrss + sum(children.values())) / 1024
    return wall, peak, proc.returncode, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--syntax", nargs="+", choices=["json", "yaml"], default=["json"])
    parser.add_argument(
        "--mix",
        choices=["bench", "distinct", "all-distinct", "compound"],
        default="bench",
        help="the calls: an agent-like mix, every input unique, every word unique, or compound Bash",
    )
    parser.add_argument("--distinct", action="store_true", help="the same as --mix distinct")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--format", default="text", help="output format (stdout is discarded)")
    parser.add_argument("--junit", action="store_true", help="also write -o report.xml")
    parser.add_argument("--compare", action="store_true", help="also time --compare-config")
    parser.add_argument(
        "--jobs",
        help="passed to check (by default check splits a big JSON plan between two "
        "processes; --jobs 1 times one process, as checkouts before that did by default)",
    )
    parser.add_argument("--against", type=Path, help="another checkout, timed interleaved (A/B)")
    args = parser.parse_args()
    compile_package(args.against)  # time toolrun as installed: from bytecode
    sides: list[Side] = [("", TOOLRUN, None)]
    if args.against is not None:
        # its own virtualenv, or this interpreter with the checkout first on the path (a
        # worktree has no virtualenv; PYTHONPATH would otherwise time this one twice)
        other = args.against / ".venv" / "bin" / "python"
        python = str(other) if other.exists() else sys.executable
        env = {**os.environ, "PYTHONPATH": str(args.against)}
        sides.append((f"{args.against}: ", [python, "-m", "toolrun"], env))
    mix = "distinct" if args.distinct else args.mix
    extra = ["-o", "report.xml"] if args.junit else []
    if args.jobs:
        extra += ["--jobs", args.jobs]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "toolrun.yaml").write_text(json.dumps({"permissions": RULES}) + "\n")
        assert sum(len(v) for v in RULES.values()) == 50
        # the proposed policy: one deny rule dropped, one ask rule turned into an allow
        new_rules = {
            "allow": [*RULES["allow"], RULES["ask"][0]],
            "ask": RULES["ask"][1:],
            "deny": RULES["deny"][1:],
        }
        (ws / "new.yaml").write_text(json.dumps({"permissions": new_rules}) + "\n")
        for syntax in args.syntax:
            for label, line in _measure(ws, args, syntax, mix, extra, sides):
                print(label + line)


def _measure(
    ws: Path,
    args: argparse.Namespace,
    syntax: str,
    mix: str,
    extra: list[str],
    sides: list[Side],
) -> Iterator[tuple[str, str]]:
    """The lines of one syntax, for every side; each run of a side right after the others'."""
    # the fixed cost (interpreter, imports, config) from a 10-call plan
    small = write_plan(ws / f"plan-10.{syntax}", 10, syntax=syntax, mix="bench")
    smalls = [[run_check(ws, small, args.format, *extra, toolrun=t, env=e) for _, t, e in sides]
              for _ in range(3)]
    fixed = [statistics.median(r[i][0] for r in smalls) for i in range(len(sides))]
    fixed_cpu = [statistics.median(r[i][3] for r in smalls) for i in range(len(sides))]
    for i, (label, _, _) in enumerate(sides):
        yield label, f"start-up and config ({syntax}, 10 calls): {fixed[i]:.2f} s, cpu " + (
            f"{fixed_cpu[i]:.2f} s"
        )
    per_call: list[list[float]] = [[] for _ in sides]
    per_call_cpu: list[list[float]] = [[] for _ in sides]
    for n in args.sizes:
        plan = write_plan(ws / f"plan-{n}.{syntax}", n, syntax=syntax, mix=mix)
        runs = [[run_check(ws, plan, args.format, *extra, toolrun=t, env=e) for _, t, e in sides]
                for _ in range(args.repeat)]
        for i, (label, toolrun, env) in enumerate(sides):
            mine = [r[i] for r in runs]
            wall = statistics.median(r[0] for r in mine)
            cpu = statistics.median(r[3] for r in mine)
            peak = max(r[1] for r in mine)
            per_call[i].append((wall - fixed[i]) / n)
            per_call_cpu[i].append((cpu - fixed_cpu[i]) / n)
            yield label, (
                f"{n:>7,} calls ({syntax}, {mix}, "
                f"--format {args.format}{' -o report.xml' if args.junit else ''}"
                f"{' --jobs ' + args.jobs if args.jobs else ''}): "
                f"{wall:6.2f} s (cpu {cpu:6.2f} s), peak {peak:5.0f} MB, "
                f"{per_call[i][-1] * 1e6:5.1f} us/call after start-up"
                + ("  (budget 5 s, 300 MB)" if n == 100_000 else "")
            )
            if args.compare:
                both = [
                    run_check(ws, plan, args.format, "--compare-config", "new.yaml",
                              toolrun=toolrun, env=env)[:2]
                    for _ in range(args.repeat)
                ]
                diff_wall = statistics.median(w for w, _ in both)
                yield label, (
                    f"{n:>7,} calls with --compare-config: {diff_wall:6.2f} s, "
                    f"peak {max(m for _, m in both):5.0f} MB, "
                    f"{diff_wall / wall:.2f} x the single check (budget 2 x)"
                )
        os.unlink(plan)
    for i, (label, _, _) in enumerate(sides):
        if len(per_call[i]) > 1:
            yield label, (
                "  per-call cost, largest / smallest plan: "
                f"{per_call[i][-1] / per_call[i][0]:.2f} wall, "
                f"{per_call_cpu[i][-1] / per_call_cpu[i][0]:.2f} cpu "
                "(1.00 = linear; budget <= 1.2)"
            )


if __name__ == "__main__":
    main()
