from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolrun.cli import main

PY = shlex.quote(sys.executable)
RUFF = f"{PY} -m ruff check --isolated --no-cache --select F401 --output-format json {{files}}"

#: A verifier that does what its first argument says, on the files after it:
#: sarif|text: one finding per line number given in FINDINGS (a JSON list of [file, line]);
#: hang: start a grandchild, then sleep; crash: raise; argv: record its argv.
FAKE = r'''
import json, os, subprocess, sys, time
mode, files = sys.argv[1], sys.argv[2:]
findings = json.loads(os.environ.get("FINDINGS", "[]"))
if mode == "sarif":
    results = [{"ruleId": "FAKE1", "level": "error", "message": {"text": "bad line"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": f},
                               "region": {"startLine": n, "startColumn": 2}}}]}
               for f, n in findings]
    print(json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "fake"}},
                                                    "results": results}]}))
elif mode == "text":
    print("checking", " ".join(files))
    for f, n in findings:
        print(f"{f}:{n}:3: warning: looks odd [W9]")
elif mode == "hang":
    marker = os.environ["MARKER"]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", marker],
                             start_new_session=True)
    with open(os.environ["PIDS"], "w") as fh:
        fh.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(300)
elif mode == "crash":
    raise RuntimeError("the verifier fell over")
elif mode == "argv":
    with open(os.environ["ARGV_FILE"], "w") as fh:
        json.dump(files, fh)
elif mode == "escape":
    try:
        with open(os.environ["OUTSIDE"], "w") as fh:
            fh.write("escaped")
    except OSError as e:
        print(f"{files[0]}:1:1: error: cannot write outside: {e.strerror}")
'''


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    (tmp_path / "fake_verifier.py").write_text(FAKE)
    return workspace


def fake(ws: Path, mode: str) -> str:
    return f"{PY} {shlex.quote(str(ws.parent / 'fake_verifier.py'))} {mode} {{files}}"


def config(ws: Path, *verifiers: dict[str, Any], extra: str = "") -> None:
    """A config allowing every write, with these verifiers."""
    text = "permissions:\n  allow: [Edit, Write, MultiEdit, ApplyPatch, Read]\n" + extra
    if verifiers:
        text += "toolrun:\n  autoVerify: " + json.dumps(list(verifiers)) + "\n"
    (ws / "toolrun.yaml").write_text(text)


def plan(ws: Path, *calls: dict[str, Any]) -> None:
    (ws / "plan.json").write_text(json.dumps({"calls": list(calls)}))


def edit(path: str, old: str, new: str, **more: Any) -> dict[str, Any]:
    return {"tool": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new},
            **more}


def run(*args: str, fmt: str = "jsonl") -> tuple[int, list[dict[str, Any]]]:
    result = CliRunner().invoke(main, ["exec", "plan.json", *args, "--format", fmt])
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def run_text(*args: str) -> tuple[int, str]:
    """``exec`` in text format, or the format ``args`` name."""
    fmt = [] if "--format" in args else ["--format", "text"]
    result = CliRunner().invoke(main, ["exec", "plan.json", *args, *fmt])
    return result.exit_code, result.stdout

#: Two verifiers that each wait for the other to have started: they finish only when
#: they run at the same time (run one after the other, the first times out).
RENDEZVOUS = r'''
import os, sys, time
me, other = sys.argv[1], sys.argv[2]
open(me, "w").close()
while not os.path.exists(other):
    time.sleep(0.01)
print(f"{sys.argv[3]}:1:1: note: met {os.path.basename(other)}")
'''
