"""Transcripts and call streams as plans: every format, detection, located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.check.helpers import FIXTURES, fixture, write
from toolrun.cli import main
from toolrun.errors import Location, PlanError
from toolrun.plan.importers import FORMATS, Imported, load_input
from toolrun.tools import default_registry


def load(path: Path, source_format: str | None = None) -> Imported:
    return load_input(path, default_registry(), display=path.name, source_format=source_format)


def summary(imported: Imported) -> list[tuple[int, str, str, int, int]]:
    """(turn, id, tool, line, column) of every call."""
    return [(c.turn, c.id, c.tool, c.location.line, c.location.column) for c in imported.plan.calls]


def column_of(path: Path, line: int, text: str) -> int:
    return path.read_text().splitlines()[line - 1].index(text) + 1


def test_anthropic_messages_conversation() -> None:
    imported = load(FIXTURES / "anthropic.json")
    assert imported.format == "anthropic"
    assert summary(imported) == [
        (0, "toolu_01A09q90qw90lq917835lq9", "Read", 11, 9),
        (0, "toolu_01B8Nm2xk4Hq1Rz3Tn5Wy7Pc", "Grep", 12, 9),
        (1, "toolu_01C4kQ9wVt2Lm8Xr6Zs3Ny1D", "Edit", 25, 9),
        (2, "toolu_01D7pR5tYu8Io2Mn4Bv6Cx9E", "Bash", 36, 9),
        (2, "toolu_01E2wS6gHj3Kl9Po5Qa8Zx4F", "Bash", 37, 9),
    ]
    assert [len(t.calls) for t in imported.plan.turns] == [2, 1, 2]
    assert imported.plan.turns[2].calls[0].input == {
        "command": "pytest -q",
        "description": "Run the tests",
    }
    assert imported.plan.file == "anthropic.json"


def test_anthropic_conversation_as_a_bare_list() -> None:
    imported = load(FIXTURES / "anthropic-list.json")
    assert imported.format == "anthropic"
    assert summary(imported) == [(0, "toolu_01Xy", "Read", 6, 7)]


def test_openai_chat_completions_conversation() -> None:
    imported = load(FIXTURES / "openai.json")
    assert imported.format == "openai"
    assert summary(imported) == [
        (0, "call_9pXz3kLmQ2", "Glob", 10, 9),
        (0, "call_4rTy8uIoP1", "Read", 11, 9),
        (1, "call_7aSd5fGh3J", "Bash", 20, 9),
        (1, "call_2zXc6vBn8M", "Bash", 21, 9),
    ]
    # arguments are a JSON string in the file, an object in the call
    assert imported.plan.turns[1].calls[1].input == {
        "command": "npm run test:unit",
        "timeout": 120000,
    }


def test_claude_code_session_transcript() -> None:
    path = FIXTURES / "claude-code.jsonl"
    imported = load(path)
    assert imported.format == "claude-code"
    block = '{"type":"tool_use"'
    # the two tool_use events of message msg_01QmVx7b are one turn, though a text event
    # and tool results sit around them
    assert summary(imported) == [
        (0, "toolu_01Hk2", "Read", 4, column_of(path, 4, block)),
        (0, "toolu_01Hk3", "Grep", 5, column_of(path, 5, block)),
        (1, "toolu_01Hk4", "Edit", 8, column_of(path, 8, block)),
        (2, "toolu_01Hk5", "Bash", 10, column_of(path, 10, block)),
    ]


def test_jsonl_call_stream_in_turns_as_exec_reads_a_piped_file(tmp_path: Path) -> None:
    imported = load(FIXTURES / "calls.jsonl")
    assert imported.format == "jsonl"
    assert summary(imported) == [
        (0, "call-1", "Read", 1, 1),
        (0, "status", "Bash", 2, 1),
        (0, "call-3", "Bash", 4, 1),
        (0, "call-4", "Write", 5, 1),
    ]
    assert [c.timeout for c in imported.plan.calls] == [None, None, 60.0, None]
    # consecutive lines form turns of up to the turn limit
    many = write(tmp_path / "many.jsonl", '{"tool": "LS", "input": {"path": "."}}\n' * 5)
    small = load_input(many, default_registry(), display="many.jsonl", max_calls_per_turn=2)
    assert [len(t.calls) for t in small.plan.turns] == [2, 2, 1]
    assert [c.turn for c in small.plan.calls] == [0, 0, 1, 1, 2]


def test_detection_from_content_not_name(tmp_path: Path) -> None:
    session = write(tmp_path / "session.log", (FIXTURES / "claude-code.jsonl").read_text())
    assert load(session).format == "claude-code"
    stream = write(tmp_path / "calls.txt", (FIXTURES / "calls.jsonl").read_text())
    assert load(stream).format == "jsonl"
    one_call = write(tmp_path / "one.json", '{"tool": "Read", "input": {"file_path": "a"}}\n')
    assert summary(load(one_call)) == [(0, "call-1", "Read", 1, 1)]
    openai_yaml = write(
        tmp_path / "chat.yaml",
        "messages:\n  - role: assistant\n    tool_calls:\n"
        '      - {id: c1, type: function, function: {name: LS, arguments: \'{"path": "."}\'}}\n',
    )
    assert load(openai_yaml).format == "openai"
    assert summary(load(openai_yaml)) == [(0, "c1", "LS", 4, 9)]
    plan = write(tmp_path / "plan.json", '{"calls": [{"tool": "LS", "input": {"path": "."}}]}')
    assert load(plan).format == "toolrun"


def test_from_names_the_format(tmp_path: Path) -> None:
    stream = write(tmp_path / "calls.log", '{"tool": "Read", "input": {"file_path": "a"}}\n')
    assert load(stream, "jsonl").format == "jsonl"
    with pytest.raises(PlanError) as err:
        load(FIXTURES / "claude-code.jsonl", "jsonl")
    assert str(err.value.problems[0]) == "claude-code.jsonl:1:1: tool: missing required key 'tool'"
    with pytest.raises(ValueError, match="unknown input format 'xml'"):
        load(stream, "xml")


def test_the_cli_format_choices_match_the_importers() -> None:
    from toolrun.cli.options import INPUT_FORMATS

    assert INPUT_FORMATS == FORMATS


@pytest.mark.parametrize(
    ("name", "problems"),
    [
        (
            "anthropic-malformed.json",
            [
                (
                    "anthropic-malformed.json:7:9: messages[1].content[0].name: "
                    "missing required key 'name'"
                ),
                (
                    "anthropic-malformed.json:8:73: messages[1].content[1].input: "
                    "must be an object, not a string"
                ),
            ],
        ),
        (
            "openai-malformed.json",
            [
                (
                    "openai-malformed.json:8:88: messages[1].tool_calls[0].function.arguments: "
                    "not valid JSON: Expecting ',' delimiter (at character 22 of the string)"
                ),
                (
                    "openai-malformed.json:9:88: messages[1].tool_calls[1].function.arguments: "
                    "must encode a JSON object, not a list"
                ),
            ],
        ),
        (
            "calls-malformed.jsonl",
            [
                "calls-malformed.jsonl:2:1: tool: missing required key 'tool'",
                "calls-malformed.jsonl:2:2: tol: unknown key 'tol' (did you mean 'tool'?)",
                "calls-malformed.jsonl:3:44: invalid JSON: Expecting ',' delimiter",
                "calls-malformed.jsonl:4:1: Input should be a valid dictionary or instance of CallSpec",
                "calls-malformed.jsonl:5:18: input.command: missing required key 'command'",
                (
                    "calls-malformed.jsonl:5:28: input.commnd: unknown key 'commnd' "
                    "(did you mean 'command'?)"
                ),
                (
                    "calls-malformed.jsonl:7:2: id: duplicate id 'status' "
                    "(first used at calls-malformed.jsonl:6:1)"
                ),
            ],
        ),
    ],
)
def test_malformed_inputs_give_located_errors_and_exit_3(
    runner: CliRunner, ws: Path, name: str, problems: list[str]
) -> None:
    fixture(ws, name)
    fixture(ws, "calls.jsonl", "valid.jsonl")
    result = runner.invoke(main, ["check", name, "valid.jsonl"])
    assert result.exit_code == 3
    assert result.stderr == "".join(f"{p}\n" for p in problems) + (
        "sources: none (built-in defaults)\n"
    )
    n = len(problems)
    assert result.stdout.splitlines()[0] == (
        f"{name}: invalid, not checked ({n} problem{'s' if n != 1 else ''})"
    )
    # the valid input beside it is still checked
    assert result.stdout.splitlines()[1].startswith("valid.jsonl (jsonl): 1 turn, 4 calls")


ASSISTANT_CALLS = [
    {
        "role": "assistant",
        "tool_calls": [
            {"id": "a", "function": {"name": "LS", "arguments": '{"path": "."}'}},
            {"id": "a", "function": {"name": "LS", "arguments": '{"path": "src"}'}},
        ],
    }
]


@pytest.mark.parametrize(
    ("text", "source_format", "marker", "problem"),
    [
        ('{"messages": 3}', "anthropic", "3", "messages: must be a list of messages, not a number"),
        (
            '{"model": "m"}',
            "openai",
            "{",
            'an OpenAI Chat Completions conversation is a list of messages or {"messages": [...]}',
        ),
        ('[{"content": "hi"}]', None, '{"content"', "[0].role: missing required key 'role'"),
        ('[3, {"role": "user"}]', None, "3", "[0]: a message must be an object, not a number"),
        (
            (
                '[{"role": "assistant", "content": [{"type": "tool_use", "id": 7, "name": "LS", '
                '"input": {}}]}]'
            ),
            None,
            "7",
            "[0].content[0].id: must be a string, not a number",
        ),
        (
            '[{"role": "assistant", "content": 5}]',
            "anthropic",
            "5",
            "[0].content: must be a string or a list of content blocks, not a number",
        ),
        (
            '[{"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "custom": {}}]}]',
            None,
            '"custom",',
            (
                "[0].tool_calls[0].type: unsupported tool call type 'custom' (only 'function' calls "
                "name a tool)"
            ),
        ),
        (
            '[{"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}]',
            None,
            '{"id"',
            "[0].tool_calls[0].function: missing required key 'function'",
        ),
        (
            json.dumps(ASSISTANT_CALLS),
            None,
            '"id": "a", "function": {"name": "LS", "arguments": "{\\"path\\": \\"src',
            "[0].tool_calls[1].id: duplicate id 'a' (first used at x.json:1:{first})",
        ),
    ],
)
def test_conversation_shape_errors(
    tmp_path: Path, text: str, source_format: str | None, marker: str, problem: str
) -> None:
    path = write(tmp_path / "x.json", text)
    with pytest.raises(PlanError) as err:
        load(path, source_format)
    first = text.index('{"id": "a"') + 1 if "{first}" in problem else 0
    expected = f"x.json:1:{text.index(marker) + 1}: " + problem.replace("{first}", str(first))
    assert [str(p) for p in err.value.problems] == [expected]


def test_claude_code_events_without_a_message_are_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl",
        json.dumps({"type": "summary", "summary": "x"})
        + "\n"
        + json.dumps({"type": "assistant", "uuid": "u1"})
        + "\n"
        + json.dumps({"type": "assistant", "message": "hi"})
        + "\n",
    )
    with pytest.raises(PlanError) as err:
        load(path)
    assert [str(p) for p in err.value.problems] == [
        "s.jsonl:2:1: message: missing required key 'message'",
        "s.jsonl:3:34: message: must be an object, not a string",
    ]


def test_calls_keep_their_file_and_line_in_reports(runner: CliRunner, ws: Path) -> None:
    write(ws / "toolrun.yaml", "permissions:\n  deny: ['Bash(git push *)']\n")
    fixture(ws, "anthropic.json")
    result = runner.invoke(main, ["check", "anthropic.json", "--format", "github"])
    assert result.exit_code == 4
    # (the Edit that would ask comes first, as a ::warning since #14)
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert errors[0] == (
        "::error file=anthropic.json,line=37,col=9,title=toolrun%3A Bash call "
        "toolu_01E2wS6gHj3Kl9Po5Qa8Zx4F would be denied::Bash(git push origin main): denied: "
        "deny rule Bash(git push *) (toolrun.yaml:2) matches `git push origin main`"
    )


def test_location_type() -> None:
    imported = load(FIXTURES / "anthropic-list.json")
    assert next(iter(imported.plan.calls)).location == Location("anthropic-list.json", 6, 7)


@pytest.mark.parametrize("source_format", [None, "jsonl", "claude-code", "anthropic"])
def test_unreadable_inputs_say_why(tmp_path: Path, source_format: str | None) -> None:
    with pytest.raises(PlanError) as err:
        load(tmp_path / "gone.jsonl", source_format)
    assert [str(p) for p in err.value.problems] == ["gone.jsonl: no such file"]
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"tool": "Read", "input": {"file_path": "caf\xe9"}}\n')
    with pytest.raises(PlanError) as err:
        load(latin, source_format)
    assert [str(p) for p in err.value.problems] == ["latin.jsonl:1:45: not UTF-8 text (byte 44)"]


def test_a_transcripts_own_tools_are_decided_not_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code sessions call TodoWrite, Task, WebSearch...: toolrun cannot run them, but
    rules decide them by name, so a CI check of a real session is not 'invalid input'."""
    from click.testing import CliRunner

    from toolrun.cli import main

    monkeypatch.chdir(tmp_path)
    session = [
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": []}},
            {"type": "tool_use", "id": "t2", "name": "WebSearch", "input": {"query": "x"}},
        ]}},
    ]
    (tmp_path / "session.jsonl").write_text("\n".join(json.dumps(e) for e in session) + "\n")
    (tmp_path / "toolrun.yaml").write_text("permissions: {allow: [TodoWrite], deny: [WebSearch]}\n")
    result = CliRunner().invoke(main, ["check", "session.jsonl", "--format", "json"])
    assert result.exit_code == 4, result.output
    report = json.loads(result.stdout)
    decisions = [(r["tool"], r["decision"]) for r in report["results"]]
    assert decisions == [("TodoWrite", "allow"), ("WebSearch", "deny")]


# -- transcripts that used to crash the importers (issue 12) --------------------------------


def _problems(path: Path, source_format: str | None = None) -> list[str]:
    with pytest.raises(PlanError) as err:
        load(path, source_format)
    return [str(p) for p in err.value.problems]


@pytest.mark.parametrize("source_format", [None, "jsonl"])
def test_a_line_nested_too_deep_is_located_at_its_line(
    tmp_path: Path, source_format: str | None
) -> None:
    path = write(
        tmp_path / "t.jsonl",
        '{"tool": "LS", "input": {"path": "."}}\n' + "[" * 1000 + "]" * 1000 + "\n",
    )
    found = _problems(path, source_format)
    assert found[-1].startswith("t.jsonl:2:101: ")
    assert "nested more than 100 levels deep" in found[-1]


def test_a_session_line_nested_too_deep_is_skipped_where_it_is(tmp_path: Path) -> None:
    """A session log is append-only: one bad line is skipped, located (issue 18)."""
    path = write(
        tmp_path / "t.jsonl",
        '{"type": "user", "message": {}}\n' + "[" * 1000 + "]" * 1000 + "\n",
    )
    imported = load_input(
        path, default_registry(), display=path.name, source_format="claude-code", allow_empty=True
    )
    (warning,) = imported.warnings
    assert str(warning).startswith("t.jsonl:2:101: skipped: ")
    assert "nested more than 100 levels deep" in str(warning)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (json.dumps({"command": "ls"})[:-1] + ', "x": "\\ud800"}', "lone surrogate"),
        ("[" * 1000, "nested more than 100 levels deep"),
        ('{"command": "ls", "n": ' + "7" * 5000 + "}", "more than 4300 digits"),
        ('{"command": "ls \\u0000"}', "NUL character"),
    ],
)
def test_openai_arguments_are_read_with_the_loaders_limits(
    tmp_path: Path, arguments: str, message: str
) -> None:
    chat = [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "Bash", "arguments": arguments},
                }
            ],
        }
    ]
    path = write(tmp_path / "chat.json", json.dumps(chat))
    (found,) = _problems(path)
    assert found.startswith("chat.json:1:")
    assert message in found


def test_a_claude_code_tool_use_with_a_nul_is_refused(tmp_path: Path) -> None:
    event = {
        "type": "assistant",
        "message": {
            "id": "m1",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a\0"}}
            ],
        },
    }
    path = write(tmp_path / "s.jsonl", json.dumps(event) + "\n")
    (found,) = _problems(path)
    assert found.startswith("s.jsonl:1:")
    assert "message.content[0].input.file_path: holds a NUL character" in found
