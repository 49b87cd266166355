"""Every example the README lists runs in a fresh clone with the exit code it shows.

Each command of the README's example table runs as a real ``toolrun`` process in a
copy of the repository made into a new git repository (a fresh clone: no journal,
no build output, no files an earlier run left), and again in the same copy, since a
user runs an example more than once.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
ROW = re.compile(r"^\| `(toolrun [^`]+)` \| (\d) \| ", re.MULTILINE)


def readme_examples() -> list[tuple[str, int]]:
    section = (ROOT / "README.md").read_text().split("Examples in `plans/`", 1)[1]
    return [(command, int(code)) for command, code in ROW.findall(section.split("\n## ")[0])]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("clone") / "toolrun"
    # What a clone would hold: the files git tracks or would add (also uncommitted
    # ones), never what .gitignore keeps out (the venv, journals, build output).
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "fresh clone"]):
        subprocess.run([*git, *step], cwd=copy, check=True)
    # The ignored demo projects must not be in the clone: the plans create them.
    assert not (copy / "plans" / "refactor" / "src").exists()
    return copy


def test_the_readme_lists_every_plan_folder_and_file() -> None:
    listed = " ".join(command for command, _ in readme_examples())
    examples = sorted(p.name for p in (ROOT / "plans").iterdir() if not p.name.startswith("."))
    assert examples and all(f"plans/{name}" in listed for name in examples), listed


@pytest.mark.slow
@pytest.mark.parametrize(("command", "exit_code"), readme_examples())
def test_each_example_runs_offline_in_a_fresh_clone(
    clone: Path, command: str, exit_code: int
) -> None:
    argv = [sys.executable, "-m", "toolrun", *shlex.split(command)[1:], "--format", "json"]
    # No network: a proxy that does not exist catches anything that tries.
    env = {**os.environ, "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    for attempt in ("first run", "second run"):
        done = subprocess.run(
            argv, check=False, cwd=clone, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == exit_code, (attempt, done.stdout[-3000:], done.stderr)
        if command.startswith("toolrun exec"):
            statuses = {r["status"] for r in _json_results(done.stdout)}
            assert statuses <= {"ok", "denied", "needs_approval"}, (attempt, done.stdout)
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    )
    assert status.stdout == "", "an example left files git would see"


def _json_results(stdout: str) -> list[dict[str, object]]:
    results: list[dict[str, object]] = json.loads(stdout)["results"]
    return results
