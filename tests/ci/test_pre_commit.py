"""The pre-commit hooks (.pre-commit-hooks.yaml), run by the real `pre-commit try-repo` on a
git repository in tmp_path: pre-commit installs toolrun from this checkout into its own
environment (from the package index: skipped, saying so, when it cannot be reached) and
runs each hook on the files its `files:` pattern picks. try-repo builds that environment
anew each time (in a store of its own), so each test runs all three hooks at once."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("pre_commit") is None,
        reason="pre-commit is not installed (pip install -e '.[test]')",
    ),
]

RULES = """\
permissions:
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)"]
"""
GOOD = "calls:\n  - {id: look, tool: Read, input: {file_path: toolrun.yaml}}\n"
BAD = """\
turns:
  - calls:
      - {id: look, tool: Read, input: {file_path: toolrun.yaml}}
      - {id: push, tool: Bash, input: {command: "git push origin main"}}
      - {id: fetch, tool: Bash, input: {command: "curl -s https://example.com"}}
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, source: Path) -> tuple[Path, Path]:
    """(the hooks' repository, pip's cache). try-repo builds toolrun's environment anew
    each time, in a store of its own; with pip's cache kept for the module only the first
    build downloads anything."""
    return source, tmp_path_factory.mktemp("pip-cache")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as it is on disk, committed once: every try-repo then names the same
    revision, and pre-commit builds toolrun's environment once (try-repo of a tree with
    uncommitted changes makes a new revision, and a new environment, each time)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip("the hooks are tried from a git checkout of toolrun")
    copy = tmp_path_factory.mktemp("toolrun-source")
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    git(copy, "init", "-q")
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "toolrun as tested")
    return copy


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "agent-plans").mkdir(parents=True)
    (repo / "toolrun.yaml").write_text(RULES)
    (repo / "agent-plans" / "good.yaml").write_text(GOOD)
    (repo / "agent-plans" / "bad.yaml").write_text(BAD)
    (repo / "notes.yaml").write_text("not: a plan\n")  # outside the plans' pattern
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plans")
    return repo


def try_repo(repo: Path, home: tuple[Path, Path], *files: str) -> tuple[int, dict[str, str]]:
    """Every hook of the repository on ``files`` (or all files): the exit code, and each
    hook's line and output by its id."""
    source, cache = home
    env = {**os.environ, "PIP_CACHE_DIR": str(cache), "PRE_COMMIT_COLOR": "never"}
    which = ["--files", *files] if files else ["--all-files"]
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(source), *which],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    out = done.stdout + done.stderr
    if "An unexpected error has occurred" in out or "CalledProcessError" in out:
        if any(w in out for w in ("Could not find a version", "connection", "Network")):
            pytest.skip(f"pre-commit cannot install toolrun without the package index: {out[-300:]}")
        raise AssertionError(out)
    # after the banner: one "name....Passed/Failed/Skipped" line per hook, then its output
    hooks = {}
    names = {"toolrun check": "toolrun-check", "toolrun validate": "toolrun-validate",
             "toolrun lint": "toolrun-lint"}  # fmt: skip
    current = None
    for line in out.split("=" * 79)[-1].splitlines():
        for name, hook in names.items():
            if line.startswith(name + " ("):
                current = hook
                hooks[hook] = ""
        if current is not None:
            hooks[current] += line + "\n"
    return done.returncode, hooks


def test_the_hooks_are_the_three_documented() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["toolrun-check", "toolrun-validate", "toolrun-lint"]
    assert all(h["language"] == "python" for h in hooks)
    assert hooks[2]["pass_filenames"] is False  # lint reads the repository's settings


def test_the_hooks_pass_allowed_plans_and_say_nothing(
    repo: Path, home: tuple[Path, Path]
) -> None:
    code, hooks = try_repo(repo, home, "agent-plans/good.yaml")
    assert code == 0, hooks
    assert "Passed" in hooks["toolrun-check"] and "Passed" in hooks["toolrun-validate"]
    # a plan changed, not the settings: lint has nothing to do
    assert "(no files to check)Skipped" in hooks["toolrun-lint"]
    assert "look" not in "".join(hooks.values())  # nothing printed of an allowed call


def test_the_hooks_fail_on_a_denied_call_a_bad_plan_and_a_duplicate_rule(
    repo: Path, home: tuple[Path, Path]
) -> None:
    (repo / "agent-plans" / "broken.yaml").write_text("calls:\n  - {tool: Nope}\n")
    (repo / "toolrun.yaml").write_text(RULES + '  allow: ["Read", "Read"]\n')
    git(repo, "add", "-A")
    code, hooks = try_repo(repo, home)  # every file: the patterns choose
    assert code == 1, hooks
    check = hooks["toolrun-check"]
    assert "Failed" in check and "exit code: 3" in check  # the broken plan: invalid first
    assert "agent-plans/bad.yaml:5:9: deny  fetch Bash(curl -s https://example.com)" in check
    assert "agent-plans/bad.yaml:4:9: ask   push" in check
    assert " look " not in check  # the allowed calls are not listed
    assert "notes.yaml" not in check  # not a plan by the hook's pattern
    assert "3 inputs, 4 calls: 2 allow · 1 ask · 1 deny · 1 invalid input" in check
    validate = hooks["toolrun-validate"]
    assert "Failed" in validate
    assert "agent-plans/broken.yaml:2:6: calls[0].tool: unknown tool 'Nope'" in validate
    lint = hooks["toolrun-lint"]
    assert "Failed" in lint and "toolrun.yaml:4: duplicate: allow Read" in lint
