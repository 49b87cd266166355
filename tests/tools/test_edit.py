from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.edit import EditInput, EditTool

pytestmark = pytest.mark.anyio

edit = EditTool()


async def test_replaces_the_one_occurrence(ws: Path, ctx: ToolContext) -> None:
    (ws / "app.py").write_text("def old_name():\n    return 1\n")

    result = await edit.run(
        EditInput(file_path="app.py", old_string="old_name", new_string="new_name"), ctx
    )

    assert (ws / "app.py").read_text() == "def new_name():\n    return 1\n"
    assert result.output == f"Edited {ws / 'app.py'} (1 replacement)"
    assert result.metadata["replacements"] == 1


async def test_several_occurrences_need_more_context_or_replace_all(
    ws: Path, ctx: ToolContext
) -> None:
    (ws / "a.txt").write_text("x = 1\nx = 1\nx = 1\n")

    with pytest.raises(ToolError) as e:
        await edit.run(EditInput(file_path="a.txt", old_string="x = 1", new_string="x = 2"), ctx)
    assert str(e.value) == (
        f"old_string occurs 3 times in {ws / 'a.txt'}; give more context or set replace_all"
    )
    assert (ws / "a.txt").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_replace_all(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("x = 1\nx = 1\nx = 1\n")

    result = await edit.run(
        EditInput(file_path="a.txt", old_string="1", new_string="2", replace_all=True), ctx
    )

    assert (ws / "a.txt").read_text() == "x = 2\nx = 2\nx = 2\n"
    assert result.output == f"Edited {ws / 'a.txt'} (3 replacements)"


async def test_old_string_not_found(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("hello\n")

    with pytest.raises(ToolError) as e:
        await edit.run(EditInput(file_path="a.txt", old_string="bye", new_string="ciao"), ctx)
    assert str(e.value) == f"old_string not found in {ws / 'a.txt'}"


async def test_identical_strings_change_nothing(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("hello\n")

    with pytest.raises(ToolError) as e:
        await edit.run(EditInput(file_path="a.txt", old_string="hello", new_string="hello"), ctx)
    assert str(e.value) == "old_string and new_string are identical; there is nothing to change"


async def test_missing_file(ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await edit.run(EditInput(file_path="gone.txt", old_string="a", new_string="b"), ctx)
    assert str(e.value) == f"{ws / 'gone.txt'} does not exist"


async def test_an_empty_old_string_creates_a_missing_file(ws: Path, ctx: ToolContext) -> None:
    result = await edit.run(
        EditInput(file_path="new/hello.txt", old_string="", new_string="hi\n"), ctx
    )

    assert (ws / "new/hello.txt").read_text() == "hi\n"
    assert result.output == f"Created {ws / 'new/hello.txt'}"
    assert result.metadata["created"] is True


async def test_an_empty_old_string_on_a_file_with_content(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("content\n")

    with pytest.raises(ToolError) as e:
        await edit.run(EditInput(file_path="a.txt", old_string="", new_string="x"), ctx)
    assert str(e.value) == f"old_string is empty but {ws / 'a.txt'} already has content"


async def test_crlf_files_are_matched_with_lf_and_keep_crlf(ws: Path, ctx: ToolContext) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")

    await edit.run(
        EditInput(file_path="win.txt", old_string="one\ntwo", new_string="1\n2\n2.5"), ctx
    )

    assert (ws / "win.txt").read_bytes() == b"1\r\n2\r\n2.5\r\nthree\r\n"


async def test_a_file_that_is_not_utf8_is_refused(ws: Path, ctx: ToolContext) -> None:
    (ws / "latin1.txt").write_bytes(b"caf\xe9\n")

    with pytest.raises(ToolError) as e:
        await edit.run(EditInput(file_path="latin1.txt", old_string="caf", new_string="tea"), ctx)
    assert str(e.value) == f"{ws / 'latin1.txt'} is not a UTF-8 text file"


def test_flags_and_affected_paths(ws: Path, ctx: ToolContext) -> None:
    call = EditInput(file_path="/elsewhere/x.py", old_string="a", new_string="b")

    assert not edit.is_concurrency_safe(call)
    assert not edit.is_read_only(call)
    assert not edit.is_retry_safe
    assert edit.affected_paths(call, ctx) == (Path("/elsewhere/x.py"),)
