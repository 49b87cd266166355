from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from toolrun.errors import ExitCode, Location, PlanError
from toolrun.plan import load_plan, load_plans
from toolrun.tools import ToolRegistry, default_registry


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    return default_registry(plugins=False)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems_of(path: Path, registry: ToolRegistry) -> list[str]:
    with pytest.raises(PlanError) as info:
        load_plan(path, registry, display=path.name)
    assert info.value.exit_code is ExitCode.INVALID
    return [str(p) for p in info.value.problems]


def test_turns_with_default_and_explicit_ids(tmp_path: Path, registry: ToolRegistry) -> None:
    path = write(
        tmp_path,
        "plan.yaml",
        """\
name: demo
turns:
  - calls:
      - {tool: Read, input: {file_path: a.py}}
      - {tool: Grep, input: {pattern: x, path: src}}
  - calls:
      - id: edit-1
        tool: Edit
        input: {file_path: a.py, old_string: x, new_string: y}
      - {tool: Bash, input: {command: pytest -q}, timeout: 300}
""",
    )
    plan = load_plan(path, registry, display="plan.yaml")
    assert plan.name == "demo"
    assert [len(t.calls) for t in plan.turns] == [2, 2]
    calls = list(plan.calls)
    assert [c.id for c in calls] == ["call-1", "call-2", "edit-1", "call-4"]
    assert [c.index for c in calls] == [0, 1, 2, 3]
    assert [c.turn for c in calls] == [0, 0, 1, 1]
    assert calls[3].timeout == 300.0
    assert calls[0].timeout is None
    assert calls[2].location == Location("plan.yaml", 7, 9)
    assert calls[0].location == Location("plan.yaml", 4, 9)
    assert calls[2].input == {"file_path": "a.py", "old_string": "x", "new_string": "y"}
    assert calls[2].params.old_string == "x"


def test_calls_shorthand_is_one_turn(tmp_path: Path, registry: ToolRegistry) -> None:
    path = write(tmp_path, "p.yaml", "calls:\n  - {tool: LS, input: {path: .}}\n")
    plan = load_plan(path, registry)
    assert len(plan.turns) == 1
    assert [c.tool for c in plan.calls] == ["LS"]


def test_json_plan(tmp_path: Path, registry: ToolRegistry) -> None:
    path = write(
        tmp_path,
        "p.json",
        '{"turns": [{"calls": [\n  {"id": "r", "tool": "Read", "input": {"file_path": "a"}}\n]}]}',
    )
    plan = load_plan(path, registry, display="p.json")
    (call,) = plan.calls
    assert call.id == "r"
    assert call.location == Location("p.json", 2, 3)


def test_every_problem_is_reported_at_once(tmp_path: Path, registry: ToolRegistry) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        """\
turns:
  - calls:
      - {tool: Read, input: {file_path: a.py}}
      - {tool: Reed, input: {file_path: a.py}}
  - calls:
      - {tool: Read, input: {file_path: 3}}
      - {id: x, tool: Edit, input: {file_path: a, old_string: b}}
      - {id: x, tool: LS, input: {path: .}, colour: red}
      - {tool: Bash, input: {command: ls, timout: 5}}
      - {tool: Bash, input: {command: ls}, timeout: -1}
""",
    )
    assert problems_of(path, registry) == [
        "bad.yaml:4:10: turns[0].calls[1].tool: unknown tool 'Reed' (did you mean 'Read'?)",
        "bad.yaml:6:30: turns[1].calls[0].input.file_path: Input should be a valid string",
        "bad.yaml:7:29: turns[1].calls[1].input.new_string: missing required key 'new_string'",
        "bad.yaml:8:45: turns[1].calls[2].colour: unknown key 'colour'",
        (
            "bad.yaml:9:43: turns[1].calls[3].input.timout: unknown key 'timout' "
            "(did you mean 'timeout'?)"
        ),
        "bad.yaml:10:44: turns[1].calls[4].timeout: Input should be greater than 0",
    ]


@pytest.mark.parametrize(
    ("name", "timeout", "message"),
    [
        ("json", "9" * 400, "Input should be a valid number"),  # no float holds it
        ("json", "1e400", "Input should be a finite number"),  # JSON's inf
        ("json", "NaN", "Input should be a finite number"),
        ("yaml", "9" * 400, "Input should be a valid number"),
        ("yaml", ".inf", "Input should be a finite number"),
    ],
)
def test_a_timeout_no_number_bounds_is_a_located_problem(
    tmp_path: Path, registry: ToolRegistry, name: str, timeout: str, message: str
) -> None:
    """Not a traceback (an int too large for a float), nor a call never bounded in time."""
    if name == "json":
        text = '{"calls": [{"tool": "LS", "input": {"path": "."}, "timeout": TIMEOUT}]}'
        text = text.replace("TIMEOUT", timeout)
        where = "plan.json:1:51"  # (the value)
    else:
        text = f"calls:\n  - {{tool: LS, input: {{path: .}}, timeout: {timeout}}}\n"
        where = "plan.yaml:2:34"  # (the key)
    path = write(tmp_path, f"plan.{name}", text)
    assert problems_of(path, registry) == [f"{where}: calls[0].timeout: {message}"]


def test_duplicate_ids(tmp_path: Path, registry: ToolRegistry) -> None:
    path = write(
        tmp_path,
        "dup.yaml",
        """\
calls:
  - {id: call-2, tool: LS, input: {path: .}}
  - {tool: LS, input: {path: .}}
""",
    )
    assert problems_of(path, registry) == [
        "dup.yaml:3:5: calls[1].id: duplicate id 'call-2' (first used at dup.yaml:2:5)"
    ]


def test_top_level_problems(tmp_path: Path, registry: ToolRegistry) -> None:
    assert problems_of(write(tmp_path, "a.yaml", "- {tool: LS}\n"), registry) == [
        "a.yaml:1:1: a plan must be a mapping, not a list"
    ]
    assert problems_of(write(tmp_path, "b.yaml", ""), registry) == [
        "b.yaml:1:1: a plan must be a mapping, not empty"
    ]
    assert problems_of(write(tmp_path, "c.yaml", "name: x\nturn: []\n"), registry) == [
        "c.yaml:2:1: turn: unknown key 'turn' (did you mean 'turns'?)",
        "c.yaml:1:1: a plan needs 'turns' or 'calls'",
    ]
    assert problems_of(write(tmp_path, "d.yaml", "turns: []\ncalls: []\n"), registry) == [
        "d.yaml:2:1: calls: use either 'turns' or 'calls', not both"
    ]
    assert problems_of(write(tmp_path, "e.yaml", "version: 2\ncalls: []\n"), registry) == [
        "e.yaml:1:1: version: Input should be 1"
    ]
    assert problems_of(write(tmp_path, "f.yaml", "turns:\n  - calls: {}\n"), registry) == [
        "f.yaml:2:5: turns[0].calls: Input should be a valid list"
    ]


def test_syntax_error_is_located(tmp_path: Path, registry: ToolRegistry) -> None:
    (problem,) = problems_of(write(tmp_path, "s.yaml", "calls:\n  - {tool: LS\n"), registry)
    assert problem.startswith("s.yaml:3:1: invalid YAML: ")


def test_load_plans_collects_problems_from_every_file(
    tmp_path: Path, registry: ToolRegistry
) -> None:
    good = write(tmp_path, "good.yaml", "calls: [{tool: LS, input: {path: .}}]\n")
    bad1 = write(tmp_path, "bad1.yaml", "calls: [{tool: Nope}]\n")
    bad2 = write(tmp_path, "bad2.yaml", "calls: [{tool: Read, input: {}}]\n")
    with pytest.raises(PlanError) as info:
        load_plans([good, bad1, bad2], registry)
    assert len(info.value.problems) == 2
    assert len(load_plans([good], registry)) == 1


# -- issue 12: the turn limit and NUL characters are load-time problems ---------------------

LS = "{tool: LS, input: {path: .}}"


def test_a_turn_over_the_limit_is_located_at_its_first_call_over(
    tmp_path: Path, registry: ToolRegistry
) -> None:
    turns = write(
        tmp_path,
        "t.yaml",
        f"turns:\n  - calls: [{LS}]\n  - calls:\n" + f"      - {LS}\n" * 4,
    )
    with pytest.raises(PlanError) as info:
        load_plan(turns, registry, display="t.yaml", max_calls_per_turn=3)
    assert [str(p) for p in info.value.problems] == [
        (
            "t.yaml:7:9: turns[1].calls[3]: a turn holds at most 3 calls (toolrun.maxCallsPerTurn)"
            " and this one has 4: split it into several turns or raise the limit"
        )
    ]
    assert len(load_plan(turns, registry, max_calls_per_turn=4)) == 5


def test_the_default_turn_limit_is_64(tmp_path: Path, registry: ToolRegistry) -> None:
    ok = write(tmp_path, "ok.yaml", "calls:\n" + f"  - {LS}\n" * 64)
    assert len(load_plan(ok, registry)) == 64
    over = write(tmp_path, "over.yaml", "calls:\n" + f"  - {LS}\n" * 65)
    (problem,) = problems_of(over, registry)
    assert problem.startswith("over.yaml:66:5: calls[64]: a turn holds at most 64 calls")
    with pytest.raises(PlanError) as info:
        load_plans([ok, over], registry, display=lambda p: p.name)
    assert [str(p) for p in info.value.problems] == [problem]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("p.yaml", 'calls:\n  - {tool: Bash, input: {command: "ls \\0"}}\n', "p.yaml:2:35"),
        ("p.yaml", 'calls:\n  - {tool: Read, input: {file_path: "a\\x00"}}\n', "p.yaml:2:37"),
        (
            "p.json",
            '{"calls": [{"tool": "Read", "input": {"file_path": "\\u0000"}}]}',
            "p.json:1:52",
        ),
    ],
)
def test_a_nul_in_an_input_is_located(
    tmp_path: Path, registry: ToolRegistry, name: str, text: str, where: str
) -> None:
    (problem,) = problems_of(write(tmp_path, name, text), registry)
    assert problem.startswith(f"{where}: calls[0].input.")
    assert problem.endswith(
        "holds a NUL character (\\u0000), which no path, command or argument can"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"tool": "Read", "input": {"file_path": "a\\u0000"}}', "holds a NUL character"),
        ('{"tool": "Bash", "input": {"command": "echo \\udc00"}}', "lone surrogate"),
        ("[" * 500 + "]" * 500, "nested more than 100 levels deep"),
    ],
)
def test_a_call_line_has_the_limits_of_a_plan(
    registry: ToolRegistry, line: str, message: str
) -> None:
    from toolrun.plan.loader import call_from_json_line

    with pytest.raises(PlanError) as info:
        call_from_json_line(line, file="-", line=7, index=0, turn=0, registry=registry, seen_ids={})
    (problem,) = info.value.problems
    assert str(problem).startswith("-:7:")
    assert message in str(problem)


def _turns_of(sizes: list[int], bad: tuple[int, int] | None = None) -> str:
    turns = []
    for t, size in enumerate(sizes):
        calls = [
            f"      - {{tool: {'Nope' if (t, c) == bad else 'Read'}, input: {{file_path: f{t}{c}}}}}"
            for c in range(size)
        ]
        turns.append("  - calls:\n" + "\n".join(calls) if calls else "  - calls: []")
    return "turns:\n" + "\n".join(turns) + "\n"


def test_select_builds_only_the_turns_it_names(registry: ToolRegistry) -> None:
    from toolrun.plan.loader import plan_from_document
    from toolrun.yamlfile import parse_text

    seen: list[list[int]] = []

    def second_half(sizes: Sequence[int]) -> tuple[range, bool]:
        seen.append(list(sizes))
        return range(2, 4), False

    doc = parse_text(_turns_of([2, 0, 3, 1]), "p.yaml")
    plan = plan_from_document(doc, registry, select=second_half)
    assert seen == [[2, 0, 3, 1]]
    assert [len(t.calls) for t in plan.turns] == [0, 0, 3, 1]
    # the calls keep their place in the whole plan: indexes, ids and lines
    assert [(c.index, c.id, c.location.line) for c in plan.calls] == [
        (2, "call-3", 7), (3, "call-4", 8), (4, "call-5", 9), (5, "call-6", 11),
    ]  # fmt: skip


def test_select_still_finds_every_problem_when_asked(registry: ToolRegistry) -> None:
    from toolrun.plan.loader import plan_from_document
    from toolrun.yamlfile import parse_text

    doc = parse_text(_turns_of([2, 2], bad=(1, 0)), "p.yaml")
    with pytest.raises(PlanError) as info:
        plan_from_document(doc, registry, select=lambda sizes: (range(1), True))
    assert [str(p) for p in info.value.problems] == [
        "p.yaml:6:10: turns[1].calls[0].tool: unknown tool 'Nope'"
    ]
    # a process that leaves the problems to another one does not look at the others
    plan = plan_from_document(doc, registry, select=lambda sizes: (range(1), False))
    assert [c.id for c in plan.calls] == ["call-1", "call-2"]


def test_a_lean_document_gives_the_plan_a_whole_one_gives(
    tmp_path: Path, registry: ToolRegistry
) -> None:
    from toolrun.plan.loader import plan_from_document
    from toolrun.yamlfile import parse_text

    turns = [{"calls": [{"tool": "Read", "input": {"file_path": f"f{t}{c}"}} for c in range(t)]}
             for t in range(5)]
    text = json.dumps({"name": "n", "turns": turns}, indent=2)
    lean = parse_text(text, "p.json", json_syntax=True, lean=True)
    assert lean.lean
    whole = plan_from_document(parse_text(text, "p.json", json_syntax=True), registry)
    assert plan_from_document(lean, registry) == whole
    # with a problem: the same problems, located the same
    turns[3]["calls"][1]["tool"] = "Nope"
    text = json.dumps({"turns": turns}, indent=2)
    with pytest.raises(PlanError) as one:
        plan_from_document(parse_text(text, "p.json", json_syntax=True, lean=True), registry)
    with pytest.raises(PlanError) as two:
        plan_from_document(parse_text(text, "p.json", json_syntax=True), registry)
    assert [str(p) for p in one.value.problems] == [str(p) for p in two.value.problems]
