from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.multiedit import MultiEditInput, MultiEditTool

pytestmark = pytest.mark.anyio

multi = MultiEditTool()


def call(path: str, *edits: dict[str, object]) -> MultiEditInput:
    return MultiEditInput.model_validate({"file_path": path, "edits": list(edits)})


async def test_edits_apply_in_order_each_to_the_previous_result(ws: Path, ctx: ToolContext) -> None:
    (ws / "app.py").write_text("name = 'a'\nprint(name)\n")

    result = await multi.run(
        call(
            "app.py",
            {"old_string": "name = 'a'", "new_string": "title = 'a'"},
            {"old_string": "print(name)", "new_string": "print(title)"},
            {"old_string": "title", "new_string": "label", "replace_all": True},
        ),
        ctx,
    )

    assert (ws / "app.py").read_text() == "label = 'a'\nprint(label)\n"
    assert result.output == f"Applied 3 edits to {ws / 'app.py'} (4 replacements)"


async def test_one_failing_edit_writes_nothing_and_names_its_index(
    ws: Path, ctx: ToolContext
) -> None:
    (ws / "app.py").write_text("a = 1\nb = 2\n")

    with pytest.raises(ToolError) as e:
        await multi.run(
            call(
                "app.py",
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "c = 3", "new_string": "c = 30"},
            ),
            ctx,
        )

    assert str(e.value) == (
        f"edits[1]: old_string not found in {ws / 'app.py'}; no edit was applied"
    )
    assert (ws / "app.py").read_text() == "a = 1\nb = 2\n"


async def test_a_later_edit_sees_the_text_of_earlier_ones(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("x\n")

    with pytest.raises(ToolError) as e:
        await multi.run(
            call(
                "a.txt",
                {"old_string": "x", "new_string": "y y"},
                {"old_string": "y", "new_string": "z"},
            ),
            ctx,
        )

    assert str(e.value) == (
        f"edits[1]: old_string occurs 2 times in {ws / 'a.txt'}; give more context or set "
        "replace_all; no edit was applied"
    )


async def test_creates_a_file_when_the_first_old_string_is_empty(
    ws: Path, ctx: ToolContext
) -> None:
    await multi.run(
        call(
            "new.txt",
            {"old_string": "", "new_string": "hello world\n"},
            {"old_string": "world", "new_string": "there"},
        ),
        ctx,
    )

    assert (ws / "new.txt").read_text() == "hello there\n"


async def test_missing_file(ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await multi.run(call("gone.txt", {"old_string": "a", "new_string": "b"}), ctx)
    assert str(e.value) == f"edits[0]: {ws / 'gone.txt'} does not exist; no edit was applied"


def test_at_least_one_edit_is_required() -> None:
    with pytest.raises(ValidationError):
        call("a.txt")
    with pytest.raises(ValidationError):
        call("a.txt", {"old_string": "a", "new_string": "b", "extra": 1})


def test_affected_paths(ws: Path, ctx: ToolContext) -> None:
    edits = call("src/a.py", {"old_string": "a", "new_string": "b"})
    assert multi.affected_paths(edits, ctx) == (ws / "src/a.py",)
    assert not multi.is_concurrency_safe(edits)
