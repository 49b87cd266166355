"""What a one-call `toolrun exec` or `toolrun check` loads: what the run needs, no more.

Start-up is most of a short run, so these guard the imports it saves (a test of imports,
not of time; bench/startup.py has the figures): without a config file the config schema
(pydantic models) is never built, and of the built-in tools only those the plan calls
are imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG_SCHEMA = ("toolrun.config.schema",)
OTHER_TOOLS = (
    "toolrun.tools.builtins.read",
    "toolrun.tools.builtins.write",
    "toolrun.tools.builtins.edit",
    "toolrun.tools.builtins.multiedit",
    "toolrun.tools.builtins.glob",
    "toolrun.tools.builtins.grep",
    "toolrun.tools.builtins.ls",
    "toolrun.tools.builtins.webfetch",
    "toolrun.tools.builtins.apply_patch",
    "toolrun.tools.builtins._patch",
)
WATCHED = (*CONFIG_SCHEMA, *OTHER_TOOLS, "toolrun.tools.builtins.bash")

RUN = """
import json, sys
from toolrun.cli import main
try:
    main(sys.argv[1:], prog_name="toolrun")
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "loaded": [m for m in WATCHED if m in sys.modules]}),
      file=sys.stderr)
"""


def run_toolrun(ws: Path, *args: str) -> tuple[int, list[str], str]:
    """Run toolrun in a fresh interpreter in ``ws``: (exit code, watched modules, stdout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    proc = subprocess.run(
        [sys.executable, "-c", f"WATCHED = {WATCHED!r}\n{RUN}", *args],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return report["code"], report["loaded"], proc.stdout


@pytest.fixture
def one_call(tmp_path: Path) -> Path:
    """A workspace (no config file in it or above it) with a plan of one Bash call."""
    (tmp_path / "plan.json").write_text(
        json.dumps({"calls": [{"tool": "Bash", "input": {"command": "echo hello"}}]})
    )
    return tmp_path


def test_a_one_call_exec_without_config_builds_no_config_schema(one_call: Path) -> None:
    code, loaded, out = run_toolrun(one_call, "exec", "plan.json", "--format", "jsonl")
    assert code in (0, None)
    result = json.loads(out)
    assert (result["status"], result["output"]) == ("ok", "hello\n")
    assert loaded == ["toolrun.tools.builtins.bash"]  # no schema, no other tool


def test_a_one_call_check_without_config_builds_no_config_schema(one_call: Path) -> None:
    code, loaded, out = run_toolrun(one_call, "check", "plan.json", "--format", "json")
    assert code in (0, None)
    assert json.loads(out)["summary"]["allow"] == 1
    assert not set(loaded) & {*CONFIG_SCHEMA, *OTHER_TOOLS}


def test_a_config_file_is_still_read_with_its_schema_and_located_problems(
    one_call: Path,
) -> None:
    """The guard above is not vacuous: with a config file the schema loads and checks it."""
    (one_call / "toolrun.yaml").write_text("permissions:\n  deny: [Bash]\n")
    code, loaded, out = run_toolrun(one_call, "exec", "plan.json", "--format", "jsonl")
    assert code == 4  # denied by the config's rule
    assert json.loads(out)["decision"] == "deny"
    assert set(CONFIG_SCHEMA) <= set(loaded)
    (one_call / "toolrun.yaml").write_text(
        "permissions:\n  deny: [Bash]\ntoolrun: {maxConcurency: 2}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json"],
        cwd=one_call,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (3, "")
    assert proc.stderr == (
        "toolrun.yaml:3:11: toolrun.maxConcurency: unknown key 'maxConcurency' "
        "(did you mean 'maxConcurrency'?)\n"
    )


def test_reading_a_config_without_hooks_loads_no_hook_runner(tmp_path: Path) -> None:
    """Rules are checked with the rule grammar alone: neither the hook runner nor its
    process supervisor (asyncio) load with a config that has no hooks."""
    (tmp_path / "toolrun.yaml").write_text("permissions:\n  allow: ['Bash(git status)']\n")
    code = (
        "import sys\n"
        "from toolrun.config import load_config\n"
        f"config = load_config(workspace={str(tmp_path)!r})\n"
        "print([r.text for r in config.rules])\n"
        "print([m for m in ('toolrun.hooks.runner', 'toolrun.reaper.run', 'asyncio',"
        " 'toolrun.permissions.resolver') if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["['Bash(git status)']", "[]"]


@pytest.mark.parametrize(
    "package", ["toolrun.hooks", "toolrun.permissions", "toolrun.tools.builtins"]
)
def test_every_name_a_package_exports_resolves_to_its_module(package: str) -> None:
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        assert value is not None, name
        home = getattr(value, "__module__", None)
        assert home is None or home.startswith(("toolrun.", "typing")), (name, home)
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018
