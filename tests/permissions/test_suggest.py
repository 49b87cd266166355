"""The narrowest allow rule for a call that asks: what explain-permission prints and what
"always" adds. A suggestion must allow its own call and nothing the rules stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config import load_config
from toolrun.permissions import PermissionEngine
from toolrun.permissions.suggest import suggest, with_allow_rules


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / ".git").mkdir()
    return workspace


def engine(ws: Path, config: str = "") -> PermissionEngine:
    if config:
        (ws / "toolrun.yaml").write_text(config)
    return PermissionEngine(load_config(workspace=ws, env={}))


def rules_for(eng: PermissionEngine, tool: str, **input: object) -> tuple[str, ...]:
    return suggest(eng, eng.decide(tool, input)).rules


def why_none(eng: PermissionEngine, tool: str, **input: object) -> str:
    found = suggest(eng, eng.decide(tool, input))
    assert found.rules == ()
    return found.why


@pytest.mark.parametrize(
    ("tool", "input", "rules"),
    [
        ("Bash", {"command": "touch src/a"}, ("Bash(touch src/a)",)),
        ("Bash", {"command": "git push origin main"}, ("Bash(git push origin main)",)),
        ("Bash", {"command": "FOO=1 make"}, ("Bash(FOO=1 make)",)),
        ("Bash", {"command": "touch 'a(b)*'"}, ("Bash(touch 'a\\(b\\)\\\\*')",)),
        ("Bash", {"command": "echo hi > out.txt"}, ("Edit(./out.txt)",)),  # echo is read-only
        ("Bash", {"command": "mkdir d && touch d/f"}, ("Bash(mkdir d)", "Bash(touch d/f)")),
        (
            "Edit",
            {"file_path": "src/a.py", "old_string": "a", "new_string": "b"},
            ("Edit(./src/a.py)",),
        ),
        ("Write", {"file_path": "notes.txt", "content": "x"}, ("Edit(./notes.txt)",)),
        ("WebFetch", {"url": "https://Docs.Example.com/x"}, ("WebFetch(domain:docs.example.com)",)),
    ],
)
def test_the_suggestion_is_the_exact_call(
    ws: Path, tool: str, input: dict[str, object], rules: tuple[str, ...]
) -> None:
    eng = engine(ws)
    assert rules_for(eng, tool, **input) == rules
    assert with_allow_rules(eng, rules).decide(tool, input).decision == "allow"


@pytest.mark.parametrize(
    ("command", "other"),
    [
        ("touch src/a", "touch src/b"),
        ("touch src/a", "touch src/a ../x"),
        ("touch src/a", "touch src/a && rm -rf src"),
        ("touch src/a", "touch src/a; rm -rf src"),
        ("touch src/a", "touch src/a | sh"),
        ("touch 'a*'", "touch abc"),  # a literal star stays literal
        ("git push origin main", "git push origin main --force"),
        ("git push origin main", "git push origin --delete main"),
    ],
)
def test_the_suggested_rule_approves_nothing_else(ws: Path, command: str, other: str) -> None:
    eng = engine(ws)
    rules = rules_for(eng, "Bash", command=command)
    assert rules
    assert with_allow_rules(eng, rules).decide("Bash", {"command": other}).decision != "allow"


def test_no_rule_for_what_only_a_person_may_approve(ws: Path) -> None:
    eng = engine(ws, 'permissions:\n  ask: ["Bash(git push *)"]\n')
    assert "critical path" in why_none(eng, "Bash", command="rm -rf .")
    assert "outside the workspace" in why_none(eng, "Bash", command="rm -rf ../x")
    assert "outside the workspace" in why_none(eng, "Bash", command="touch ~/x")
    assert "git push" in why_none(eng, "Bash", command="git push origin main")
    assert ".git" in why_none(eng, "Write", file_path=".git/config", content="x")
    assert "outside the workspace" in why_none(eng, "Write", file_path="../x", content="x")
    assert "cannot be analysed" in why_none(eng, "Bash", command="eval 'rm x'")


def test_a_path_with_pattern_characters_gets_no_rule(ws: Path) -> None:
    eng = engine(ws)
    assert "pattern characters" in why_none(eng, "Write", file_path="src/*.py", content="x")
    assert "pattern characters" in why_none(eng, "Write", file_path="src/[a].py", content="x")


def test_an_allowed_or_denied_call_gets_no_suggestion(ws: Path) -> None:
    eng = engine(ws, 'permissions:\n  deny: ["Bash(rm *)"]\n')
    assert "allowed" in why_none(eng, "Bash", command="ls")
    assert "denied" in why_none(eng, "Bash", command="rm x")


def test_rules_added_for_the_run_name_their_source(ws: Path) -> None:
    eng = with_allow_rules(engine(ws), ["Bash(touch src/a)"])
    decision = eng.decide("Bash", {"command": "touch src/a"})
    assert decision.decision == "allow"
    assert decision.decided_by.rule == "Bash(touch src/a)"
    assert decision.decided_by.source == "this run ('always' at the prompt)"


@pytest.mark.parametrize(
    "command",
    [
        "echo x | patch -p1",  # a later `echo EVIL | patch -p1` would match Bash(patch -p1)
        "patch -p1 < fix.diff",
        "python3 x.py",
        "xargs rm < list.txt",
        "find src -name '*.o' | xargs rm",
        "git apply fix.diff",
        "git am",
        "env rm x",
        "sudo touch x",
        "tar xf - < a.tar",
    ],
)
def test_no_rule_for_a_program_whose_effect_comes_from_its_input(ws: Path, command: str) -> None:
    eng = engine(ws)
    decision = eng.decide("Bash", {"command": command})
    if decision.decision == "ask":
        assert suggest(eng, decision).rules == ()
