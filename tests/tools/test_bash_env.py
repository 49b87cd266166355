"""The Bash shell's environment: what steers the shell is dropped, the rest passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.bash import BashInput, BashTool
from toolrun.tools.builtins.bash_env import shell_environment

pytestmark = pytest.mark.anyio

bash = BashTool()


def context(ws: Path, **env: str) -> ToolContext:
    return ToolContext(workspace=ws, cwd=ws, env={"PATH": os.environ["PATH"], **env})


def test_only_the_variables_that_steer_the_shell_are_dropped() -> None:
    env = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "CDPATH": "/etc",
        "BASH_ENV": "/tmp/x",
        "SHELLOPTS": "xtrace",
        "BASH_FUNC_ls%%": "() { echo pwned; }",
        "BASH_FUNC_cd()": "() { echo pwned; }",
        "MY_BASH_FUNC_NOTE": "kept: not an exported function",
    }

    assert shell_environment(env) == {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "MY_BASH_FUNC_NOTE": "kept: not an exported function",
    }


def test_the_environment_is_built_again_whenever_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cleaned environment is kept between calls: a change to os.environ or to a
    context's table still shows in the next call, and what one caller does to its copy
    never reaches the next."""
    monkeypatch.setenv("TOOLRUN_TEST_WORD", "first")
    first = shell_environment(os.environ)
    first["TOOLRUN_TEST_WORD"] = "scribbled"
    assert shell_environment(os.environ)["TOOLRUN_TEST_WORD"] == "first"

    monkeypatch.setenv("TOOLRUN_TEST_WORD", "second")
    monkeypatch.setenv("PS4", "$(touch /tmp/pwned)")
    again = shell_environment(os.environ)
    assert again["TOOLRUN_TEST_WORD"] == "second" and "PS4" not in again

    monkeypatch.delenv("TOOLRUN_TEST_WORD")
    assert "TOOLRUN_TEST_WORD" not in shell_environment(os.environ)

    table = {"PATH": "/bin", "WORD": "one"}
    assert shell_environment(table)["WORD"] == "one"
    table["WORD"] = "two"
    table["BASH_ENV"] = "/tmp/x"
    assert shell_environment(table) == {"PATH": "/bin", "WORD": "two"}


@pytest.mark.parametrize("name", ["ls", "cd", "echo", "command"])
async def test_an_exported_function_does_not_replace_a_command(ws: Path, name: str) -> None:
    ctx = context(ws, **{f"BASH_FUNC_{name}%%": "() { touch pwned; }"})

    await bash.run(BashInput(command=f"{name} . >/dev/null 2>&1"), ctx)

    assert not (ws / "pwned").exists()


@pytest.mark.parametrize("command", ["echo plain", "cd . && echo moved"])  # with and without probe
async def test_bash_env_and_env_are_not_sourced(ws: Path, command: str) -> None:
    (ws / "rc.sh").write_text("touch sourced\n")
    ctx = context(ws, BASH_ENV=str(ws / "rc.sh"), ENV=str(ws / "rc.sh"))

    await bash.run(BashInput(command=command), ctx)

    assert not (ws / "sourced").exists()


@pytest.mark.parametrize(
    ("variable", "value", "command", "expected"),
    [
        ("SHELLOPTS", "xtrace:noclobber", "echo a > f; echo b > f; cat f", "b\n"),
        ("BASHOPTS", "nullglob", "echo none*", "none*\n"),
        ("PS4", "$(touch traced)", "(set -x; true) 2>/dev/null; [ -e traced ] || echo no", "no\n"),
        ("IFS", "e", "x=hello; echo $x", "hello\n"),
        ("GLOBIGNORE", "*", "touch g1; echo g*", "g1\n"),
        ("OLDPWD", "/", "cd - >/dev/null 2>&1; pwd", "{ws}\n"),
        ("PROMPT_COMMAND", "touch prompted", "echo x; [ -e prompted ] || echo no", "x\nno\n"),
    ],
)
async def test_variables_that_steer_the_shell_have_no_effect(
    ws: Path, variable: str, value: str, command: str, expected: str
) -> None:
    result = await bash.run(BashInput(command=command), context(ws, **{variable: value}))

    assert result.output == expected.format(ws=ws)


async def test_cdpath_does_not_take_cd_out_of_the_workspace(ws: Path) -> None:
    outside = ws.parent / f"{ws.name}-elsewhere"
    (outside / "outside").mkdir(parents=True)

    result = await bash.run(BashInput(command="cd outside; pwd"), context(ws, CDPATH=str(outside)))

    assert result.output.endswith(f"{ws}\n")
    assert result.metadata["cwd"] == str(ws)


async def test_an_inherited_pwd_through_a_symlink_does_not_steer_cd_dot_dot(ws: Path) -> None:
    elsewhere = ws.parent / f"{ws.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "link").symlink_to(ws)
    ctx = context(ws, PWD=str(elsewhere / "link"))

    result = await bash.run(BashInput(command="cd .. && pwd"), ctx)

    assert result.output == f"{ws.parent}\n"


def test_cdpath_in_a_real_exec_run_leaves_the_workspace_alone(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (elsewhere / "outside").mkdir(parents=True)
    ws.mkdir()
    (ws / "toolrun.yaml").write_text("permissions: {allow: [Bash]}\n")
    calls = [{"tool": "Bash", "input": {"command": c}} for c in ("cd outside", "touch made; pwd")]
    (ws / "plan.json").write_text(json.dumps({"turns": [{"calls": [c]} for c in calls]}))

    run = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl"],
        cwd=ws,
        env={**os.environ, "CDPATH": str(elsewhere)},
        capture_output=True,
        text=True,
        check=False,
    )

    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["status"] for r in results] == ["error", "ok"], run.stderr
    assert results[1]["output"] == f"{ws}\n"
    assert (ws / "made").exists()
    assert list((elsewhere / "outside").iterdir()) == []
