"""Reading a large journal back: `toolrun runs` and `toolrun show last`, time and peak memory.

Run:  .venv/bin/python bench/journal.py [--mb 500] [--repeat 1] [--source DIR]

Writes one journal of about ``--mb`` MB (results with 2 KB outputs, a start
record before each, as `exec` writes them), then times each command in a fresh
process and reads its peak RSS from the kernel (wait4). ``--source DIR`` runs the
toolrun package found in DIR instead (e.g. the main checkout, for a before/after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_journal(folder: Path, megabytes: int) -> Path:
    runs = folder / ".toolrun" / "runs"
    runs.mkdir(parents=True)
    run_id = "20261130T120000Z-abcdef"
    path = runs / f"{run_id}.jsonl"
    target = megabytes * 1024 * 1024
    with path.open("w") as fh:
        fh.write(json.dumps({"event": "run", "run_id": run_id, "started_at": time.time(),
                             "plans": ["big.yaml"]}) + "\n")  # fmt: skip
        index = 0
        while fh.tell() < target:
            execution_id = f"exec_{index:08d}-0000-4000-8000-000000000000"
            call = {"index": index, "id": f"call-{index + 1}", "execution_id": execution_id,
                    "run_id": run_id, "plan": "big.yaml", "tool": "Bash",
                    "input": {"command": f"cat file{index}.txt"}}  # fmt: skip
            fh.write(json.dumps({"event": "started", **call,
                                 "started_at": "2026-11-30T12:00:00.000Z"}) + "\n")  # fmt: skip
            result = {"event": "result", **call, "decision": "allow",
                      "decided_by": {"kind": "rule", "rule": "Bash", "source": "toolrun.yaml:2"},
                      "status": "ok", "output": f"line {index}\n" * 200, "error": None,
                      "started_at": "2026-11-30T12:00:00.000Z",
                      "finished_at": "2026-11-30T12:00:00.010Z", "wait_ms": 0.1,
                      "duration_ms": 10.0, "attempts": 1, "aborted_before_launch": False,
                      "location": {"file": "big.yaml", "line": index + 2, "column": 5}}  # fmt: skip
            fh.write(json.dumps(result) + "\n")
            index += 1
        fh.write(json.dumps({"event": "end", "run_id": run_id, "wall_ms": 1.0,
                             "interrupted": False}) + "\n")  # fmt: skip
    return path


def measure(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS in MB of one run of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--source", type=Path, default=None)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.source is not None:
        env["PYTHONPATH"] = str(args.source.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = write_journal(folder, args.mb)
        size = path.stat().st_size / 1024 / 1024
        lines = sum(1 for _ in path.open("rb"))
        print(f"journal: {size:.0f} MB, {lines} lines")
        for name in ("runs", "show"):
            cmd = [sys.executable, "-m", "toolrun", name]
            if name == "show":
                cmd.append("last")
            walls, peaks = [], []
            for _ in range(args.repeat):
                wall, peak = measure(cmd, folder, env)
                walls.append(wall)
                peaks.append(peak)
            label = " ".join(cmd[3:])
            print(
                f"toolrun {label:<10} median {statistics.median(walls):6.2f} s, "
                f"peak RSS {max(peaks):7.0f} MB"
            )


if __name__ == "__main__":
    main()
