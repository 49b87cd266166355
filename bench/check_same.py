"""The decisions of this checkout's `toolrun check` against another's, call by call.

Run:  .venv/bin/python bench/check_same.py --against DIR [--mixes bench compound ...]
                                           [--size 3000] [--jobs 1 2]

Each mix of ``bench/check.py`` (the agent-like one, every input distinct, every word
distinct, issue 31's compound Bash) is checked by both checkouts with ``--format json``
in a workspace with a git repository, a symlink out of it and a secrets folder; every
field of every call's record (decision, who decided, reason, status, run, run kind,
where it would run...) and the summary must be the same, less what differs from run to
run (ids, times). A speed change must change no decision: this says so, or shows the
first calls that differ. DIR's toolrun runs with DIR on PYTHONPATH (a worktree without a
virtualenv of its own is fine); this checkout's runs with this one's.

The other reports (``--formats``: text, JUnit, SARIF, GitHub annotations) must be the
same byte for byte, less the run id, execution ids and times, masked in both.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from check import RULES, write_plan

HERE = Path(__file__).resolve().parents[1]
#: fields that differ from one run to the next whatever was decided
VOLATILE = {"execution_id", "run_id", "started_at", "finished_at", "wait_ms", "duration_ms",
            "wall_ms"}  # fmt: skip


#: the reports compared as text, and what differs from run to run in them
TEXT_FORMATS = ("text", "junit", "sarif", "github")
_MASKS = [
    (re.compile(r"exec_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "exec_ID"),
    (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}"), "RUN_ID"),
    (re.compile(r'"(wall_ms|time)": [0-9.e+-]+'), r'"\1": T'),
    (re.compile(r'(time|timestamp)="[^"]*"'), r'\1="T"'),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "T"),
]


def _workspace(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(json.dumps({"permissions": RULES}) + "\n")
    for pkg in range(3):
        (ws / "src" / f"pkg{pkg}").mkdir(parents=True)
        (ws / "src" / f"pkg{pkg}" / "mod1.py").write_text("x = 1\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text("k\n")
    (ws / ".env").write_text("A=1\n")
    (ws / "out").symlink_to("/tmp")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)


def _records(checkout: Path, ws: Path, plan: Path, jobs: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    proc = subprocess.run(
        [sys.executable, "-m", "toolrun", "check", str(plan), "--workspace", str(ws),
         "--format", "json", "--jobs", jobs],
        cwd=ws, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode not in (0, 4, 5):
        raise SystemExit(f"{checkout}: check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return _stable(json.loads(proc.stdout))


def _report(checkout: Path, ws: Path, plan: Path, jobs: str, fmt: str) -> str:
    """A report as text, less what differs from run to run (masked), after its exit code."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    proc = subprocess.run(
        [sys.executable, "-m", "toolrun", "check", str(plan), "--workspace", str(ws),
         "--format", fmt, "--jobs", jobs],
        cwd=ws, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode not in (0, 4, 5):
        raise SystemExit(f"{checkout}: check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    text = proc.stdout
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return f"exit {proc.returncode}\n{text}"


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--mixes", nargs="+", default=["bench", "distinct", "all-distinct",
                                                        "compound"])  # fmt: skip
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--jobs", nargs="+", default=["1", "2"])
    parser.add_argument("--formats", nargs="*", default=list(TEXT_FORMATS),
                        choices=TEXT_FORMATS, help="also compared, byte for byte")
    args = parser.parse_args()
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        _workspace(ws)
        for mix in args.mixes:
            plan = write_plan(ws / f"plan-{mix}.json", args.size, syntax="json", mix=mix)
            for jobs in args.jobs:
                mine = _records(HERE, ws, plan, jobs)
                theirs = _records(args.against, ws, plan, jobs)
                calls = mine.get("results", [])
                kinds: dict[str, int] = {}
                for c in calls:
                    kinds[c["decision"]] = kinds.get(c["decision"], 0) + 1
                bad = [i for i, (a, b) in enumerate(zip(calls, theirs.get("results", []),
                                                        strict=False)) if a != b]  # fmt: skip
                same = not bad and mine == theirs
                differ += not same
                print(f"{mix:>12} --jobs {jobs}: {len(calls)} calls {kinds}: "
                      + ("identical" if same else f"{len(bad)} calls DIFFER"))
                for i in bad[:3]:
                    print("   this:  ", json.dumps(calls[i])[:600])
                    print("   other: ", json.dumps(theirs["results"][i])[:600])
                for fmt in args.formats:
                    a = _report(HERE, ws, plan, jobs, fmt)
                    b = _report(args.against, ws, plan, jobs, fmt)
                    differ += a != b
                    print(f"{'':>12} --format {fmt}: "
                          + ("identical" if a == b else "DIFFERS"))  # fmt: skip
                    if a != b:
                        lines = difflib.unified_diff(b.splitlines(), a.splitlines(), "other",
                                                     "this", lineterm="", n=1)  # fmt: skip
                        print("\n".join(list(lines)[:40]))
    raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    main()
