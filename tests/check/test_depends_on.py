"""check and exec --dry-run never say allow where exec of the same plan would not.

exec decides each call after the earlier ones ran; a dry run decides them all on the disk
as it is. Each plan below runs three ways in the round-3 scene (a workspace with a
symlink out, a git repository with committed secrets): ``check``, ``exec --dry-run`` and a
real ``exec``; call by call, a dry allow must be an exec allow, and the call whose
decision an earlier call changes is marked ``depends on call-N`` (an ask).

Each row names its source: the brief of issue 24 ("issue 24"), or "by hand" for the
other spellings of the same class.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.round3.scene import SECRETS, Scene

CONFIG = (
    "permissions:\n"
    "  deny: ['Read(./.env)', 'Read(./config/.env)', 'Edit(./docs/**)', 'Read(**/*.key)']\n"
    "  allow: ['Bash(ln *)', 'Bash(git init *)', 'Bash(rsync *)']\n"
)


def bash(command: str) -> dict[str, Any]:
    return {"tool": "Bash", "input": {"command": command}}


def write(name: str, content: str = "K\n") -> dict[str, Any]:
    """A Write call; ``{ws}`` in the name is the workspace (Write takes absolute paths)."""
    return {"tool": "Write", "input": {"file_path": name, "content": content}}


def toolrun(scene: Scene, calls: list[dict[str, Any]], command: str, *args: str,
            mode: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The result records of ``toolrun COMMAND plan.json`` in the scene (no terminal)."""
    text = json.dumps({"calls": calls}).replace("{ws}", str(scene.ws))
    (scene.ws / "plan.json").write_text(text)
    fmt = "json" if command == "check" else "jsonl"
    argv = [sys.executable, "-m", "toolrun", command, "plan.json", "--workspace", str(scene.ws),
            "--format", fmt, *args, *(("--mode", mode) if mode else ())]  # fmt: skip
    done = subprocess.run(argv, env=scene.env(), capture_output=True, text=True, check=False,
                          timeout=120, cwd=scene.ws, stdin=subprocess.DEVNULL)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    if command == "check":
        records: list[dict[str, Any]] = json.loads(done.stdout)["results"]
        return records
    return [json.loads(line) for line in done.stdout.splitlines() if '"index"' in line]


def three_ways(tmp_path: Path, calls: list[dict[str, Any]], mode: str | None,
               *extra: str) -> tuple[list[dict[str, Any]], ...]:  # fmt: skip
    scene = Scene.make(tmp_path)
    scene.config(CONFIG)
    checked = toolrun(scene, calls, "check", *extra, mode=mode)
    dry = toolrun(scene, calls, "exec", "--dry-run", mode=mode)
    ran = toolrun(scene, calls, "exec", mode=mode)
    assert len(checked) == len(dry) == len(ran) == len(calls)
    for before in (checked, dry):
        for said, did in zip(before, ran, strict=True):
            if said["decision"] == "allow":
                assert did["decision"] == "allow", (said, did)
                # what check let through leaks nothing
                assert not scene.leaked([did]), did
    return checked, dry, ran


# (calls, mode, the call that depends, on which call, source)
CASES = [
    # a copy makes what exec's later read refuses (a copy of a folder holding a denied file
    # is itself denied now: these copy what no rule covers into what one does, or a link out)
    ([bash("mkdir -p build && cp -r src build/s"), bash("grep -r TOP build/s/link/")],
     "acceptEdits", 2, 1, "issue 24"),
    ([bash("mkdir -p build && cp -r src build/s"), bash("cat build/s/link/secret.txt")],
     "acceptEdits", 2, 1, "issue 24"),
    ([bash("cp -a src cfg2"), bash("grep -rn SECRET cfg2/link/")], "acceptEdits", 2, 1,
     "by hand"),
    ([bash("rsync -a src/ c3/"), bash("cat c3/link/secret.txt")], "acceptEdits", 2, 1,
     "by hand"),
    # a link made by an earlier call: exec resolves it, check saw nothing there
    ([bash("ln -s ../outside link"), bash("cat link/secret.txt")], None, 2, 1, "issue 24"),
    ([bash("ln -s src srclink"), bash("cat srclink/link/secret.txt")], None, 2, 1, "by hand"),
    ([bash("ln -sn src s2"), bash("head s2/link/secret.txt")], None, 2, 1, "by hand"),
    ([bash("ln -s -- ./src/ s3"), bash("grep SECRET s3/link/secret.txt")], None, 2, 1,
     "by hand"),
    # a cd that exec carries to the next call (src/link leads out of the workspace)
    ([bash("cd src"), bash("cat link/secret.txt")], None, 2, 1, "by hand"),
    ([bash("cd src && ls"), bash("head -n1 link/secret.txt")], None, 2, 1, "by hand"),
    ([bash("cd ./src/"), bash("wc -c link/secret.txt")], None, 2, 1, "by hand"),
    ([bash("mkdir -p x && cd x && git init -q"), bash("git status")],
     "acceptEdits", 2, 1, "issue 24"),
    # a file an earlier call makes that a later glob expands to (an option, a secret)
    ([bash("echo x > ./-n"), bash("cat *")], "acceptEdits", 2, 1, "issue 24"),
    ([bash("touch ./-A"), bash("ls *")], "acceptEdits", 2, 1, "by hand"),
    # a Write tool call that makes a file a later glob matches
    ([write("{ws}/-v"), bash("cat *")], "acceptEdits", 2, 1, "issue 24"),
    ([write("{ws}/--help"), bash("head *")], "acceptEdits", 2, 1, "by hand"),
]


@pytest.mark.parametrize(("calls", "mode", "later", "earlier", "source"), CASES,
                         ids=[f"{c[4]}: {c[0][0]['input']} then {c[0][1]['input']}"
                              for c in CASES])  # fmt: skip
def test_a_call_an_earlier_call_changes_is_marked(
    tmp_path: Path, calls: list[dict[str, Any]], mode: str | None, later: int, earlier: int,
    source: str,
) -> None:
    checked, dry, _ = three_ways(tmp_path, calls, mode)
    for records in (checked, dry):
        mark = records[later - 1]
        assert mark["decision"] == "ask", mark
        assert mark["decided_by"] == {"kind": "depends", "rule": None,
                                      "source": f"call-{earlier}"}  # fmt: skip
    assert checked[later - 1]["reason"].startswith(f"depends on call-{earlier}: ")


# what no earlier call can change stays as it is (source: by hand)
UNMARKED = [
    ([write("{ws}/src/b.py"), {"tool": "Read", "input": {"file_path": "{ws}/src/main.py"}}],
     "acceptEdits"),
    ([write("{ws}/src/b.py"), bash("cat README.md")], "acceptEdits"),
    ([bash("mkdir -p build && cp -r config build/cfg"), bash("cat src/main.py")], "acceptEdits"),
    ([bash("npm install --no-audit nothing-here"), bash("echo done")], "acceptEdits"),
    # a denied call never runs: nothing after it depends on it
    ([bash("mv config/.env x.txt"), bash("cat x.txt")], "acceptEdits"),
    ([bash("mkdir -p b && cp config/app.yaml b/app.key"), bash("grep -r K b")], "acceptEdits"),
    ([bash("cat README.md"), bash("ls src"), bash("git log --oneline -1")], None),
]


@pytest.mark.parametrize(("calls", "mode"), UNMARKED)
def test_a_call_no_earlier_call_can_change_is_not_marked(
    tmp_path: Path, calls: list[dict[str, Any]], mode: str | None
) -> None:
    checked, dry, _ = three_ways(tmp_path, calls, mode)
    assert all(r["decided_by"]["kind"] != "depends" for r in checked + dry)
    assert checked[-1]["decision"] == "allow"


def test_a_mark_crosses_the_parts_of_a_split_check(tmp_path: Path) -> None:
    """--jobs 2 decides each turn in its own process: the cd of the first turn still
    marks the read of the second (source: issue 24)."""
    scene = Scene.make(tmp_path)
    scene.config(CONFIG)
    turns = {"turns": [{"calls": [bash("cd src")]}, {"calls": [bash("cat link/secret.txt")]},
                       {"calls": [bash("cat README.md")]}]}  # fmt: skip
    (scene.ws / "plan.json").write_text(json.dumps(turns))

    def check(jobs: str) -> list[dict[str, Any]]:
        argv = [sys.executable, "-m", "toolrun", "check", "plan.json", "--format", "json",
                "--jobs", jobs]  # fmt: skip
        done = subprocess.run(argv, env=scene.env(), capture_output=True, text=True,
                              cwd=scene.ws, check=False)  # fmt: skip
        records: list[dict[str, Any]] = json.loads(done.stdout)["results"]
        return records

    split, whole = check("2"), check("1")
    assert [r["decided_by"] for r in split] == [r["decided_by"] for r in whole]
    assert split[1]["decided_by"] == {"kind": "depends", "rule": None, "source": "call-1"}
    assert split[2]["decided_by"]["kind"] == "depends"  # README.md: relative to the new cwd
    assert not any(s in json.dumps(split) for s in SECRETS)
