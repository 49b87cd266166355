"""`toolrun hook`, one call, start to answer (design budget: 80 ms).

Run:  .venv/bin/python bench/hook.py [--runs 31] [--against DIR]

Pipes Claude Code's PreToolUse payloads for Bash (a compound command), Read and Edit to
`python -m toolrun hook` in a workspace with a toolrun.yaml and a .claude/settings.json,
from bytecode (the package is compiled first, PYTHONDONTWRITEBYTECODE unset: as an
installed copy runs). Three ways, interleaved run by run so all see the same load:

- warm: a hook server already holds the engine (every call but a session's first);
- cold: TOOLRUN_HOOK_SERVER=off, the engine imported and the config loaded in the call
  (a session's first call pays this, plus starting the server);
- python: `python -c pass`, the floor no hook goes under;
- warm -S / python -S: the same without `site`, as a regular (not editable) install starts:
  an editable install's finder imports pathlib, re and more into every interpreter, hiding
  what the hook itself imports (each -S row is compared with the -S floor).

Prints the median and p90 wall time, the median CPU time (user + system of the child,
steadier on a busy machine) and the median of what each run adds to the bare interpreter
run beside it, in ms. The server is started with its own
runtime directory and stopped at the end.

--against DIR: the warm rows also for the toolrun source in DIR (e.g. the checkout of
main you started from), with its own server, interleaved with this tree's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import compile_package

PAYLOADS = {
    "Bash": {"command": "git log -n 3 --oneline && ls src | head -5"},
    "Read": {"file_path": "{ws}/src/app.py"},
    "Edit": {"file_path": "{ws}/src/app.py", "old_string": "a", "new_string": "b"},
}


def payload(ws: Path, tool: str, n: int) -> bytes:
    tool_input = {k: v.replace("{ws}", str(ws)) for k, v in PAYLOADS[tool].items()}
    return json.dumps(
        {
            "session_id": "bench-session",
            "transcript_path": str(ws / "t.jsonl"),
            "cwd": str(ws),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{n}",
        }
    ).encode()


def timed(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall * 1000, cpu * 1000


def workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("a = 1\n")
    (ws / "toolrun.yaml").write_text(
        "permissions:\n"
        '  allow: ["Bash(npm test)", "Read(src/**)"]\n'
        '  ask: ["Bash(git push *)"]\n'
        '  deny: ["Bash(rm -rf *)", "Read(./.env)", "WebFetch(domain:evil.example)"]\n'
        "toolrun:\n  loadClaudeSettings: true\n"
    )
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(curl *)"], "allow": ["Bash(make *)"]}})
    )
    return ws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--against", metavar="DIR")
    args = parser.parse_args()
    compile_package(args.against)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = workspace(root)
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        base = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        base.update(HOME=str(root), XDG_RUNTIME_DIR=str(runtime))
        here = str(Path(__file__).resolve().parents[1])
        warm_env = {**base, "PYTHONPATH": here}
        cold_env = {**warm_env, "TOOLRUN_HOOK_SERVER": "off"}
        hook = [sys.executable, "-m", "toolrun", "hook"]
        sides: list[tuple[str, list[str], dict[str, str], bool]] = [
            ("warm", hook, warm_env, True),
            ("cold", hook, cold_env, True),
            ("python -c pass", [sys.executable, "-c", "pass"], base, False),
            ("warm -S", [sys.executable, "-S", *hook[1:]], warm_env, True),
            ("python -S -c pass", [sys.executable, "-S", "-c", "pass"], base, False),
        ]
        if args.against:
            against = {**base, "PYTHONPATH": args.against}
            sides.append(("warm, against", hook, against, True))
            sides.append(("warm -S, against", [sys.executable, "-S", *hook[1:]], against, True))
            timed(hook, payload(ws, "Bash", 0), against, ws)
        # the server is started by a first call, and is up before timing starts
        timed(hook, payload(ws, "Bash", 0), warm_env, ws)
        time.sleep(1.0)
        try:
            for tool in PAYLOADS:
                print(f"{tool}: {args.runs} runs each, interleaved (ms)")
                walls: dict[str, list[float]] = {name: [] for name, *_ in sides}
                cpus: dict[str, list[float]] = {name: [] for name, *_ in sides}
                for n in range(args.runs):
                    for name, cmd, env, stdin in sides:
                        data = payload(ws, tool, n) if stdin else b""
                        wall, cpu = timed(cmd, data, env, ws)
                        walls[name].append(wall)
                        cpus[name].append(cpu)
                for name, *_ in sides:
                    floor = walls["python -S -c pass" if "-S" in name else "python -c pass"]
                    w = sorted(walls[name])
                    p90 = w[min(len(w) - 1, int(len(w) * 0.9))]
                    # run by run, what the call adds to a bare interpreter started beside it
                    over = statistics.median(a - b for a, b in zip(walls[name], floor, strict=True))
                    print(
                        f"  {name:28} median {statistics.median(w):6.1f}  p90 {p90:6.1f}  "
                        f"cpu {statistics.median(cpus[name]):6.1f}  over python {over:6.1f}"
                    )
        finally:
            for pid_file in runtime.glob("toolrun/*.pid"):
                try:
                    os.kill(int(pid_file.read_text()), signal.SIGTERM)
                except (OSError, ValueError):
                    pass


if __name__ == "__main__":
    main()
