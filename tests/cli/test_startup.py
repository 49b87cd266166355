"""What a one-call `toolrun exec` or `toolrun check` loads: what the run needs, no more.

Start-up is most of a short run, so these guard the imports it saves (a test of imports,
not of time; bench/startup.py has the figures): without a config file the config schema
(pydantic models) is never built, of the built-in tools only those the plan calls are
imported, and a plain plan is validated without importing pydantic at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
pydantic = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core"))
print(json.dumps({"code": code, "loaded": [m for m in WATCHED if m in sys.modules],
                  "pydantic": pydantic, "yaml": "yaml" in sys.modules}), file=sys.stderr)
"""


def run_toolrun(ws: Path, *args: str) -> tuple[int, list[str], str]:
    """Run toolrun in a fresh interpreter in ``ws``: (exit code, watched modules, stdout)."""
    report, stdout = run_report(ws, *args)
    return report["code"], report["loaded"], stdout


def run_report(ws: Path, *args: str) -> tuple[dict[str, Any], str]:
    """Run toolrun in a fresh interpreter in ``ws``: (what it loaded, stdout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    proc = subprocess.run(
        [sys.executable, "-c", f"WATCHED = {WATCHED!r}\n{RUN}", *args],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    report: dict[str, Any] = json.loads(proc.stderr.strip().splitlines()[-1])
    return report, proc.stdout


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


def test_a_one_call_bash_exec_without_config_loads_no_pydantic(one_call: Path) -> None:
    report, out = run_report(one_call, "exec", "plan.json", "--format", "jsonl")
    assert report["code"] in (0, None)
    result = json.loads(out)
    assert (result["status"], result["output"]) == ("ok", "hello\n")
    assert report["pydantic"] == []
    assert report["yaml"] is False  # a JSON plan without problems needs no YAML node


def test_a_one_call_read_exec_without_config_loads_no_pydantic(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("first\nsecond\n")
    (tmp_path / "plan.yaml").write_text(
        "name: read one\nturns:\n  - calls:\n"
        "      - {id: r, tool: Read, input: {file_path: notes.txt, offset: 2, limit: 1}}\n"
    )
    report, out = run_report(tmp_path, "exec", "plan.yaml", "--format", "jsonl")
    assert report["code"] in (0, None)
    result = json.loads(out)
    assert (result["id"], result["status"], result["output"]) == ("r", "ok", "     2\tsecond")
    assert report["pydantic"] == []
    assert report["yaml"] is True


def test_a_one_call_check_without_config_loads_no_pydantic(one_call: Path) -> None:
    report, out = run_report(one_call, "check", "plan.json", "--format", "json")
    assert report["code"] in (0, None)
    assert json.loads(out)["summary"]["allow"] == 1
    assert report["pydantic"] == []


def test_an_invalid_input_still_gets_pydantics_located_messages(tmp_path: Path) -> None:
    """The guard above is not vacuous: what the fast path cannot take goes to the tool's
    pydantic model, for the same located messages as ever."""
    (tmp_path / "plan.json").write_text(
        '{"calls": [\n'
        '  {"tool": "Bash", "input": {"command": "true", "timeout": 0}},\n'
        '  {"tool": "Read", "input": {"file_path": 5, "limt": 3}}\n'
        "]}\n"
    )
    expected = (
        "plan.json:2:49: calls[0].input.timeout: Input should be greater than or equal to 1\n"
        "plan.json:3:30: calls[1].input.file_path: Input should be a valid string\n"
        "plan.json:3:46: calls[1].input.limt: unknown key 'limt' (did you mean 'limit'?)\n"
    )
    for command in ("exec", "check"):
        proc = subprocess.run(
            [sys.executable, "-m", "toolrun", command, "plan.json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 3
        # check, which reads every input, ends with what it read (issue 26)
        tail = "sources: none (built-in defaults)\n" if command == "check" else ""
        assert proc.stderr.endswith(expected + tail), command
    report, _ = run_report(tmp_path, "exec", "plan.json")
    assert report["code"] == 3
    assert "pydantic" in report["pydantic"]


def test_a_lax_input_pydantic_would_coerce_runs_as_before(tmp_path: Path) -> None:
    """A timeout written as a string is pydantic's to take (it coerces it): the call runs."""
    (tmp_path / "plan.json").write_text(
        json.dumps(
            {"calls": [{"tool": "Bash", "input": {"command": "echo ok", "timeout": "5000"}}]}
        )
    )
    report, out = run_report(tmp_path, "exec", "plan.json", "--format", "jsonl")
    assert (json.loads(out)["status"], json.loads(out)["output"]) == ("ok", "ok\n")
    assert "pydantic" in report["pydantic"]


PLAIN_CONFIG = (
    "permissions:\n  allow: ['Bash(echo *)']\n  deny: ['Bash(rm *)']\n"
    "toolrun: {maxCallsPerTurn: 10000, maxStoredOutput: 64MiB, hookFailure: closed}\n"
)


def test_a_one_call_exec_with_a_plain_config_loads_no_pydantic(one_call: Path) -> None:
    """A config of rules and toolrun settings is read without the schema's models."""
    (one_call / "toolrun.yaml").write_text(PLAIN_CONFIG + "model: opus\npermissionz: {}\n")
    report, out = run_report(one_call, "exec", "plan.json", "--format", "jsonl")
    assert report["code"] in (0, None)
    result = json.loads(out)
    assert (result["status"], result["output"], result["decision"]) == ("ok", "hello\n", "allow")
    assert result["decided_by"]["rule"] == "Bash(echo *)"
    assert report["pydantic"] == []
    assert not set(report["loaded"]) & set(CONFIG_SCHEMA)


def test_a_one_call_check_with_a_plain_config_loads_no_pydantic(one_call: Path) -> None:
    (one_call / "toolrun.yaml").write_text(PLAIN_CONFIG.replace("echo", "ls"))
    report, out = run_report(one_call, "check", "plan.json", "--format", "json")
    assert report["code"] in (0, None)
    assert json.loads(out)["summary"]["allow"] == 1  # read-only echo, allowed by default
    assert report["pydantic"] == []


def test_a_plain_configs_unknown_keys_are_still_reported_without_pydantic(one_call: Path) -> None:
    (one_call / "toolrun.yaml").write_text(PLAIN_CONFIG + "permissionz: {}\nmodel: opus\n")
    proc = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl"],
        cwd=one_call,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stderr == (  # as main gives it
        "toolrun.yaml:5:1: permissionz: warning: unknown setting 'permissionz' "
        "(did you mean 'permissions'?); it is not used\n"
        "ignored: model (Claude Code settings toolrun does not enforce)\n"
    )


def test_a_config_file_is_still_read_with_its_schema_and_located_problems(
    one_call: Path,
) -> None:
    """A config the fast path cannot prove valid goes to the schema: its rules still apply,
    and its problems keep the schema's located messages. (Before issue 17 every config file
    built the schema; a plain one no longer does, see above.)"""
    (one_call / "toolrun.yaml").write_text("permissions:\n  deny: [Bash]\ntoolrun: {strict: 0}\n")
    code, loaded, out = run_toolrun(one_call, "exec", "plan.json", "--format", "jsonl")
    assert code == 4  # denied by the config's rule
    assert json.loads(out)["decision"] == "deny"
    assert set(CONFIG_SCHEMA) <= set(loaded)  # strict: 0 is pydantic's to coerce
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


def test_the_cli_collects_young_objects_seldom_while_a_command_starts(tmp_path: Path) -> None:
    """`python -m toolrun` (not the library) raises the young-generation threshold before
    the command's modules are imported: their objects all live to the end, and walking
    them every 700 allocations was 8 ms of a short run's start."""
    probe = (
        "import gc, sys\n"
        "import toolrun.cli\n"
        "def shown(*args, **kwargs):\n"
        "    print(gc.get_threshold()[0]); raise SystemExit(0)\n"
        "toolrun.cli.main = shown\n"
        "sys.argv = ['toolrun', 'validate', 'x']\n"
        "from toolrun.__main__ import STARTUP_GC_YOUNG, run\n"
        "print(gc.get_threshold()[0], STARTUP_GC_YOUNG)\n"
        "run()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    before, wanted, during = done.stdout.split()
    assert int(before) == 700 and during == wanted and int(wanted) > 10 * 700
