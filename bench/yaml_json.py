"""A YAML plan against the same plan in JSON, end to end (issue 31: within 10 %).

Run:  .venv/bin/python bench/yaml_json.py [--runs 7] [--calls 10000] [--against DIR]
                                           [--style block|flow|both]

Writes each plan twice, as JSON and as YAML (``block``: as ``yaml.safe_dump`` and a
person write it; ``flow``: one ``- {...}`` line per call, as ``bench/check.py`` writes it),
then times, from bytecode, interleaved run by run so every side sees the same load:

- ``exec`` of N Reads of small files (journal on, JSONL out);
- ``exec`` of a mixed plan: Reads, Greps and Globs (of one file each), Edits and Bash
  commands that need approval (decided, not run: the decisions and the load are timed);
- ``check`` of both plans;
- ``load_document`` of each file in this process (the parse alone).

Prints min and median wall seconds of each, the YAML/JSON ratio of the medians (the
budget: at most 1.10), the median CPU of the child and the YAML/JSON ratio of those
(steadier than the wall's when the machine is shared). ``--against DIR``: every row also
with the toolrun source in DIR (e.g. a checkout of the main you started from).
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

TOOLRUN = [sys.executable, "-m", "toolrun"]
CALLS_PER_TURN = 500


def reads(n: int) -> list[dict[str, object]]:
    return [{"tool": "Read", "input": {"file_path": f"files/f{i}.txt"}} for i in range(n)]


def mixed(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        k = i % 10
        if k < 4:
            out.append({"tool": "Read", "input": {"file_path": f"files/f{i}.txt"}})
        elif k < 5:  # (one file each: a search of all 10,000 would be the whole time)
            out.append({"tool": "Grep", "input": {"pattern": f"two{i}", "path": f"files/f{i}.txt"}})
        elif k < 6:
            out.append({"tool": "Glob", "input": {"pattern": f"files/f{i}.txt"}})
        elif k < 8:
            edit = {"file_path": f"files/f{i}.txt", "old_string": f"v{i}", "new_string": f"w{i}"}
            out.append({"tool": "Edit", "input": edit})
        else:
            out.append({"tool": "Bash", "input": {"command": f"npm install pkg{i} --save"}})
    return out


def write(folder: Path, name: str, calls: list[dict[str, object]], style: str) -> dict[str, Path]:
    import yaml

    turns = [
        {"calls": calls[t : t + CALLS_PER_TURN]} for t in range(0, len(calls), CALLS_PER_TURN)
    ]
    doc = {"name": name, "turns": turns}
    paths = {"json": folder / f"{name}.json", "yaml": folder / f"{name}.yaml"}
    paths["json"].write_text(json.dumps(doc, indent=2))
    if style == "block":
        paths["yaml"].write_text(yaml.safe_dump(doc, sort_keys=False))
    else:
        lines = [f"name: {name}", "turns:"]
        for turn in turns:
            lines.append("  - calls:")
            lines.extend(f"      - {json.dumps(call)}" for call in turn["calls"])
        paths["yaml"].write_text("\n".join(lines) + "\n")
    return paths


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 4, 5):  # a call failed, was denied or needs approval
        sys.exit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def load_times(path: Path, pythonpath: str, runs: int) -> list[float]:
    """``load_document`` of ``path``, ``runs`` times in one fresh process (import first)."""
    code = (
        "import sys, time\nfrom pathlib import Path\n"
        "from toolrun.yamlfile import load_document\n"
        "load_document(Path(sys.argv[1]))\nout = []\n"
        "for _ in range(int(sys.argv[2])):\n"
        "    t = time.process_time(); load_document(Path(sys.argv[1]))\n"
        "    out.append(time.process_time() - t)\nprint(' '.join(map(str, out)))\n"
    )
    env = {**os.environ, "PYTHONPATH": pythonpath}
    # (not from the bench's directory: -c puts the working directory first on sys.path,
    # where this checkout's toolrun would shadow PYTHONPATH's)
    found = subprocess.run(
        [sys.executable, "-c", code, str(path), str(runs)],
        env=env, capture_output=True, text=True, check=True, cwd=path.parent,
    )  # fmt: skip
    return [float(x) for x in found.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--style", choices=["block", "flow", "both"], default="both")
    parser.add_argument("--against", metavar="DIR")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    compile_package(args.against)
    trees = [("this", here)] + ([("against", args.against)] if args.against else [])
    styles = ["block", "flow"] if args.style == "both" else [args.style]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        # turns of 500 calls (the limit is 64 unless the config raises it)
        (ws / "toolrun.yaml").write_text("toolrun:\n  maxCallsPerTurn: 1000\n")
        (ws / "files").mkdir()
        for i in range(args.calls):
            (ws / "files" / f"f{i}.txt").write_text(f"line one of {i}\nline two\n")
        base = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
        base.pop("PYTHONDONTWRITEBYTECODE", None)  # from bytecode, as an install runs
        base["HOME"] = tmp
        print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {args.runs} runs")
        for style in styles:
            plans = {
                "reads": write(ws, f"reads-{style}", reads(args.calls), style),
                "mixed": write(ws, f"mixed-{style}", mixed(args.calls), style),
            }
            rows: list[tuple[str, list[str]]] = []
            for plan in plans:
                for command in ("exec", "check"):
                    for syntax in ("json", "yaml"):
                        path = str(plans[plan][syntax])
                        cmd = [*TOOLRUN, command, path, "--workspace", str(ws)]
                        cmd += ["--format", "jsonl"] if command == "exec" else ["--format", "json"]
                        rows.append((f"{command} {plan} {syntax}", cmd))
            walls: dict[tuple[str, str], list[float]] = {}
            cpus: dict[tuple[str, str], list[float]] = {}
            for _ in range(args.runs):
                for label, cmd in rows:
                    for tree, source in trees:
                        env = {**base, "PYTHONPATH": source}
                        wall, cpu = timed(cmd, env, ws)
                        walls.setdefault((tree, label), []).append(wall)
                        cpus.setdefault((tree, label), []).append(cpu)
            print(f"\n{style} YAML, {args.calls:,} calls (seconds)")
            for tree, _ in trees:
                for label, _ in rows:
                    w = walls[(tree, label)]
                    ratio = ""
                    if label.endswith("yaml"):
                        other = walls[(tree, label[:-4] + "json")]
                        other_cpu = cpus[(tree, label[:-4] + "json")]
                        # the CPU ratio as well: steadier than the wall's on a shared machine
                        ratio = (
                            f"  yaml/json {statistics.median(w) / statistics.median(other):.3f}"
                            f" (cpu {statistics.median(cpus[(tree, label)]) / statistics.median(other_cpu):.3f})"
                        )
                    print(
                        f"  {tree:8} {label:18} min {min(w):.3f}  median {statistics.median(w):.3f}"
                        f"  cpu {statistics.median(cpus[(tree, label)]):.3f}{ratio}"
                    )
            for tree, source in trees:
                for plan in plans:
                    got = {s: load_times(plans[plan][s], source, args.runs) for s in ("json", "yaml")}
                    print(
                        f"  {tree:8} load_document {plan}: json min {min(got['json']) * 1000:.1f} ms"
                        f" median {statistics.median(got['json']) * 1000:.1f};"
                        f" yaml min {min(got['yaml']) * 1000:.1f} median "
                        f"{statistics.median(got['yaml']) * 1000:.1f} ms"
                    )


if __name__ == "__main__":
    main()
