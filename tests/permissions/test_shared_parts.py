"""What a decision shares across calls because it is a function of its inputs alone: the
DecidedBy of a rule or kind, and the working directory made absolute (issue 31). Each
decision still names its own rule and source, and a cwd through ``..`` reads the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.permissions.conftest import make_config
from toolrun.config.models import SourceKind
from toolrun.permissions import PermissionEngine
from toolrun.permissions.paths import absolute

TOOL_CALLS = [
    ("Read", {"file_path": "src/a.py"}),
    ("Edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}),
    ("Grep", {"pattern": "x", "path": "src"}),
    ("Bash", {"command": "cat src/a.py"}),
]


@pytest.mark.parametrize(("tool", "call"), TOOL_CALLS)
def test_each_engine_names_its_own_rule_s_source(
    tmp_path: Path, tool: str, call: dict[str, str]
) -> None:
    rule = {"Read": "Read(src/**)", "Edit": "Edit(src/**)", "Grep": "Read(src/**)",
            "Bash": "Bash(cat *)"}[tool]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a\n")
    names = ["toolrun.yaml", "team.yaml", "toolrun.yaml", "other.yaml"]
    kinds = [SourceKind.TOOLRUN, SourceKind.TOOLRUN, SourceKind.PROJECT, SourceKind.TOOLRUN]
    for name, kind in zip(names, kinds, strict=True):
        engine = PermissionEngine(make_config(tmp_path, deny=[rule], name=name, kind=kind),
                                  memo=False)
        decision = engine.decide(tool, call, cwd=tmp_path)
        assert decision.decision == "deny"
        assert decision.decided_by.rule == rule
        assert decision.decided_by.source == engine.rules.rules[0].source
        assert name in str(decision.decided_by.source)
        targets = decision.targets or decision.subcommands
        assert all(t.decided_by == decision.decided_by for t in targets)


@pytest.mark.parametrize(("mode", "kind", "decision"), [
    ("default", "default", "ask"), ("bypassPermissions", "mode", "allow"),
    ("plan", "mode", "deny"), ("dontAsk", "mode", "deny"),
])
def test_a_kind_s_decided_by_is_its_own_in_every_mode(
    tmp_path: Path, mode: str, kind: str, decision: str
) -> None:
    engine = PermissionEngine(make_config(tmp_path), memo=False)
    for _ in range(2):
        got = engine.decide("Bash", {"command": "npm run build"}, cwd=tmp_path, mode=mode)
        assert (got.decision, got.decided_by.kind, got.decided_by.rule) == (decision, kind, None)


@pytest.mark.parametrize("spelling", ["src", "./src", "src/", "src//", "{ws}/src", "src/."])
def test_a_cwd_is_made_absolute_as_before(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "src").mkdir()
    engine = PermissionEngine(make_config(tmp_path), memo=False)
    given = spelling.format(ws=tmp_path)
    for _ in range(2):  # (the second from what the engine remembers)
        decision = engine.decide("Bash", {"command": "ls"}, cwd=Path(given))
        assert decision.cwd == absolute(str(Path(given)), engine.workspace, engine.home)
        assert decision.cwd == str(tmp_path / "src")


@pytest.mark.parametrize("spelling", ["link/..", "link/../", "./link/..", "link/../."])
def test_a_cwd_through_dotdot_is_walked_on_the_disk_every_time(
    tmp_path: Path, spelling: str
) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    link = ws / "link"
    link.symlink_to(ws / "src")
    engine = PermissionEngine(make_config(ws), memo=False)
    first = engine.decide("Bash", {"command": "ls ."}, cwd=Path(spelling))
    assert first.cwd == str(ws) and first.decision == "allow"
    link.unlink()
    link.symlink_to(outside / "deep")  # `link/..` now leads to outside/
    second = engine.decide("Bash", {"command": "ls ."}, cwd=Path(spelling))
    assert second.cwd == str(outside)
    assert second.decision == "ask", second.reason
