"""Hooks of a Claude Code plugin (``toolrun.plugins``: folders holding
``hooks/hooks.json``) run with ``CLAUDE_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_DATA`` set, as
Claude Code sets them (#30). Real ``toolrun exec`` processes; the plugin's hook scripts
are shaped like Anthropic's plugin hooks (``"${CLAUDE_PLUGIN_ROOT}"/scripts/...``)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.hooks.conftest import PY, toolrun_exec

SCRIPT = """
import json, os, sys
json.load(sys.stdin)
data = os.environ["CLAUDE_PLUGIN_DATA"]
with open(os.path.join(data, "runs.txt"), "a") as out:  # state that outlives a run
    out.write(os.environ["CLAUDE_PLUGIN_ROOT"] + "\\n")
"""


def plugin(where: Path, command: str, extra: dict[str, object] | None = None) -> Path:
    root = where / "fmt-plugin"
    (root / "hooks").mkdir(parents=True)
    (root / "scripts").mkdir()
    (root / "scripts" / "log.py").write_text(SCRIPT)
    sh = root / "scripts" / "log.sh"
    sh.write_text('#!/bin/sh\necho "$CLAUDE_PLUGIN_ROOT" > "$CLAUDE_PLUGIN_DATA/sh.txt"\n')
    sh.chmod(sh.stat().st_mode | stat.S_IXUSR)
    hooks = {"description": "logs each Bash call", **(extra or {}), "hooks": {"PostToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}}
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks, indent=2))
    return root


CALL = [{"tool": "Bash", "input": {"command": "echo hi"}}]


@pytest.mark.parametrize(
    ("command", "out"),
    [
        ('"${CLAUDE_PLUGIN_ROOT}"/scripts/log.sh', "sh.txt"),  # shell form, the docs' spelling
        ("$CLAUDE_PLUGIN_ROOT/scripts/log.sh", "sh.txt"),
        (f'{PY} "${{CLAUDE_PLUGIN_ROOT}}/scripts/log.py"', "runs.txt"),  # an interpreter
    ],
)
def test_plugin_hooks_get_their_root_and_data_folder(ws: Path, command: str, out: str) -> None:
    root = plugin(ws, command)
    config = "permissions: {allow: [Bash]}\ntoolrun: {plugins: [fmt-plugin]}\n"
    code, (r,), _err = toolrun_exec(ws, config, CALL)
    assert code == 0 and r["status"] == "ok"
    data = ws / ".toolrun" / "plugin-data" / "fmt-plugin"
    assert (data / out).read_text().strip() == str(root)


def test_the_data_folder_outlives_a_run(ws: Path, tmp_path: Path) -> None:
    root = plugin(tmp_path, f'{PY} "${{CLAUDE_PLUGIN_ROOT}}/scripts/log.py"')
    config = f"permissions: {{allow: [Bash]}}\ntoolrun: {{plugins: [{json.dumps(str(root))}]}}\n"
    for _ in range(2):
        code, _results, _err = toolrun_exec(ws, config, CALL)
        assert code == 0
    data = ws / ".toolrun" / "plugin-data" / "fmt-plugin" / "runs.txt"
    assert data.read_text().splitlines() == [str(root), str(root)]


def test_other_hooks_get_no_plugin_variables(ws: Path) -> None:
    config = (
        "permissions: {allow: [Bash]}\nhooks:\n  PostToolUse:\n    - matcher: Bash\n"
        "      hooks: [{type: command, command: 'echo \"[$CLAUDE_PLUGIN_ROOT]\" > seen.txt'}]\n"
    )
    code, _results, _err = toolrun_exec(ws, config, CALL, env={"CLAUDE_PLUGIN_ROOT": ""})
    assert code == 0 and (ws / "seen.txt").read_text() == "[]\n"


@pytest.mark.parametrize("broken", ["missing", "permissions"])
def test_a_broken_plugin_is_a_located_error_and_nothing_runs(ws: Path, broken: str) -> None:
    if broken == "permissions":  # a plugin brings hooks, never rules
        plugin(ws, "true", {"permissions": {"allow": ["Bash"]}})
    config = "toolrun: {plugins: [fmt-plugin]}\n"
    code, results, err = toolrun_exec(ws, config, [{"tool": "Bash", "input": {"command":
                                                                                "touch ran"}}])
    assert code == 3 and results == [] and not (ws / "ran").exists()
    where = "toolrun.yaml:1:" if broken == "missing" else "hooks.json:"
    assert where in err
