"""`toolrun check` on recorded agent sessions: time for Claude Code and Codex logs of N calls.

Run:  .venv/bin/python bench/sessions.py [--sizes 10000 100000]

Every call names absolute paths under the session's recorded cwd (so each is rebased onto
the workspace), the mix an agent's session has: Read, Edit, Grep and Bash with cd and
redirections, one call a turn. `toolrun check` runs as a subprocess.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLRUN = [sys.executable, "-m", "toolrun"]
ROOT = "/home/dev/proj"


def _inputs(i: int) -> tuple[str, dict[str, object]]:
    kind = i % 4
    if kind == 0:
        return "Read", {"file_path": f"{ROOT}/src/m{i % 50}.py"}
    if kind == 1:
        return "Edit", {"file_path": f"{ROOT}/src/m{i % 50}.py", "old_string": "a", "new_string": "b"}
    if kind == 2:
        return "Grep", {"pattern": "TODO", "path": f"{ROOT}/src"}
    return "Bash", {"command": f"cd {ROOT}/src && git diff > {ROOT}/out{i % 7}.txt"}


def claude_code(n: int) -> str:
    lines = []
    for i in range(n):
        tool, tool_input = _inputs(i)
        lines.append(json.dumps({
            "type": "assistant", "cwd": ROOT, "isSidechain": False,
            "message": {"id": f"msg_{i}", "role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_{i}", "name": tool, "input": tool_input}]},
        }))
    return "\n".join(lines) + "\n"


def codex(n: int) -> str:
    lines = [json.dumps({"type": "session_meta", "payload": {"cwd": ROOT}})]
    for i in range(n):
        command = ["bash", "-lc", f"cat {ROOT}/src/m{i % 50}.py"] if i % 2 else ["rg", "-n", "x y", "src"]
        lines.append(json.dumps({"type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": f"c{i}",
            "arguments": json.dumps({"command": command, "workdir": ROOT})}}))
        lines.append(json.dumps({"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": f"c{i}", "output": "ok"}}))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "toolrun.yaml").write_text('permissions:\n  allow: ["Edit(src/**)", "Bash(git diff *)"]\n')
        for name, make in (("claude-code", claude_code), ("codex", codex)):
            for n in args.sizes:
                log = ws / f"{name}-{n}.jsonl"
                log.write_text(make(n))
                started = time.perf_counter()
                run = subprocess.run([*TOOLRUN, "check", "--format", "json", str(log)],
                                     check=False, cwd=ws, capture_output=True, text=True)
                took = time.perf_counter() - started
                summary = json.loads(run.stdout)["summary"]
                print(f"{name:12} {n:>7} calls: {took:6.2f} s ({took / n * 1e6:6.1f} µs/call), "
                      f"exit {run.returncode}, allow {summary['allow']} ask {summary['ask']}")


if __name__ == "__main__":
    main()
