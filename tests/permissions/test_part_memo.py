"""The engine remembers what deciding one part of a Bash call gave (``git log -n 5`` of many
command lines is one SimpleCommand): the decision comes out exactly as when every part is
worked out afresh, whatever the other parts, the order, the mode or the disk between calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.permissions.conftest import Tree, make_config, secret_link
from toolrun.permissions import PermissionEngine

#: Parts that recur across command lines: read-only ones, ruled ones, protected and critical
#: targets, redirects, git (its repository), symlinks inside and out, unanalysable ones.
PARTS = [
    "git log -n 5 --oneline", "git status", "git show HEAD:.env", "git config core.pager less",
    "ls src", "ls src/missing", "cat link_out", "cat link_in", "cat srclink/a.py", "head -3",
    "cat .env", "echo hi > .git/config", "echo x > out.txt", "rm -rf src", "rm -rf .",
    "npm test", "npm run build", "curl https://x", "sort -o sorted.txt a", "find . -delete",
    "cd src", "cd ..", "cat ../a.py", "wc -l", "grep -rn TODO src", "tee .claude/settings.json",
    "echo $HOME", "sh -c 'rm -rf x'", "FOO=1 npm test", "timeout 5 curl -s x", "cat ~/.bashrc",
    "git -C escape_dir log", "cp .env copy.txt", "true",
]  # fmt: skip
OPERATORS = [" && ", " | ", " ; ", " || "]
MODES = ["default", "acceptEdits", "plan", "bypassPermissions"]
RULES: dict[str, Any] = {
    "allow": ["Bash(npm test)", "Bash(git log *)", "Bash(head *)", "Edit(src/**)", "Read(~/**)"],
    "ask": ["Bash(npm run *)", "Bash(git config *)", "Edit(out.txt)"],
    "deny": ["Bash(curl *)", "Read(./.env)", "Bash(rm -rf *)"],
}


def _line(parts: list[str], ops: list[str]) -> str:
    out = parts[0]
    for op, part in zip(ops, parts[1:], strict=False):
        out += op + part
    return out


def _json(decision: Any) -> str:
    return json.dumps(decision.to_json(), sort_keys=True, default=str)


@pytest.fixture(scope="module")
def engines(tree: Tree) -> tuple[PermissionEngine, PermissionEngine]:
    config = make_config(tree.ws, additional=(tree.shared,), **RULES)
    remembering, afresh = PermissionEngine(config, memo=False), PermissionEngine(config, memo=False)
    afresh.parts = None  # (every part worked out afresh)
    assert remembering.parts is not None
    return remembering, afresh


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(PARTS), min_size=1, max_size=4),
            st.lists(st.sampled_from(OPERATORS), min_size=3, max_size=3),
            st.sampled_from(MODES),
            st.sampled_from(["", "src"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_remembered_parts_give_the_decision_worked_out_afresh(
    engines: tuple[PermissionEngine, PermissionEngine], tree: Tree,
    calls: list[tuple[list[str], list[str], str, str]],
) -> None:
    remembering, afresh = engines
    for parts, ops, mode, where in calls:
        command = _line(parts, ops)
        cwd = tree.ws / where if where else tree.ws
        for _ in range(2):  # seen once, then remembered
            got = remembering.decide("Bash", {"command": command}, cwd=cwd, mode=mode)
            want = afresh.decide("Bash", {"command": command}, cwd=cwd, mode=mode)
            assert _json(got) == _json(want), command


def test_a_remembered_part_reads_the_disk_again(tmp_path: Path) -> None:
    scene = secret_link(tmp_path)
    ws = scene.ws
    engine = PermissionEngine(scene.config, memo=False)
    # each line is new; the part `cat notes` is the same object in all of them
    for i in range(3):
        assert engine.decide("Bash", {"command": f"cat notes && echo {i}"}, cwd=ws).decision == "allow"
    scene.retarget(to_secret=True)
    for i in range(3, 6):
        decision = engine.decide("Bash", {"command": f"cat notes && echo {i}"}, cwd=ws)
        assert decision.decision == "deny", decision.reason
    scene.retarget(to_secret=False)
    assert engine.decide("Bash", {"command": "cat notes && echo 9"}, cwd=ws).decision == "allow"


@pytest.mark.parametrize(
    "rule", ["Bash(timeout:5)", "Bash(description:*secret*)", "Bash(dangerouslyDisableSandbox:true)",
             "Bash(run_in_background:true)"],
)
def test_a_bash_param_rule_turns_the_memo_off(tmp_path: Path, rule: str) -> None:
    # the verdict of a part then depends on the call's whole input, not on the part
    engine = PermissionEngine(make_config(tmp_path, deny=[rule]), memo=False)
    assert engine.parts is None
    for description in ("plain", "secret stuff", "plain"):
        call = {"command": "ls && echo 1", "description": description,
                "timeout": 5, "run_in_background": description != "plain"}
        decision = engine.decide("Bash", call, cwd=tmp_path)
        fresh = PermissionEngine(make_config(tmp_path, deny=[rule]), memo=False)
        assert _json(decision) == _json(fresh.decide("Bash", call, cwd=tmp_path))


def test_the_trace_of_a_remembered_part_carries_this_call_s_input(tmp_path: Path) -> None:
    engine = PermissionEngine(make_config(tmp_path, allow=["Bash(ls *)"]), memo=False)
    for i in range(3):
        call = {"command": f"ls src && echo {i}", "description": f"d{i}"}
        decision = engine.decide("Bash", call, cwd=tmp_path)
        assert decision.to_json()["input"] == call
        # every command subject of the trace holds this call's input
        closure = decision.trace.__closure__
        assert closure is not None
        held = [c.cell_contents for c in closure if isinstance(c.cell_contents, tuple)
                and c.cell_contents and isinstance(c.cell_contents[0], tuple)]
        commands = [s for pairs in held for s, _v in pairs if s.kind == "command"]
        assert commands and all(s.params == call for s in commands)
