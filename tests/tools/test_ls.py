from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.ls import LSInput, LSTool

pytestmark = pytest.mark.anyio

ls = LSTool()


async def test_lists_sorted_entries_with_slashes_on_folders(ws: Path, ctx: ToolContext) -> None:
    (ws / "src").mkdir()
    (ws / "src/app.py").write_text("")
    (ws / "README.md").write_text("")
    (ws / ".gitignore").write_text("")
    (ws / "docs").mkdir()

    result = await ls.run(LSInput(path=str(ws)), ctx)

    assert result.output == ".gitignore\nREADME.md\ndocs/\nsrc/"
    assert result.metadata["entries"] == 4


async def test_ignore_patterns_leave_entries_out(ws: Path, ctx: ToolContext) -> None:
    for name in ("a.py", "a.pyc", "b.pyc"):
        (ws / name).write_text("")
    (ws / "__pycache__").mkdir()

    result = await ls.run(LSInput(path=".", ignore=["*.pyc", "__pycache__"]), ctx)

    assert result.output == "a.py"


async def test_an_empty_folder(ws: Path, ctx: ToolContext) -> None:
    (ws / "empty").mkdir()

    result = await ls.run(LSInput(path="empty"), ctx)

    assert result.output == "(empty directory)"
    assert result.metadata["entries"] == 0


async def test_a_file_is_not_a_folder(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("")

    with pytest.raises(ToolError) as e:
        await ls.run(LSInput(path="a.txt"), ctx)
    assert str(e.value) == f"{ws / 'a.txt'} is not a directory; use Read for a file"


async def test_a_missing_path(ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await ls.run(LSInput(path="nope"), ctx)
    assert str(e.value) == f"{ws / 'nope'} does not exist"


def test_flags_and_affected_paths(ws: Path, ctx: ToolContext) -> None:
    call = LSInput(path="src")
    assert ls.is_concurrency_safe(call)
    assert ls.is_read_only(call)
    assert ls.affected_paths(call, ctx) == (ws / "src",)
