from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins import glob as glob_module
from toolrun.tools.builtins.glob import GlobInput, GlobTool

pytestmark = pytest.mark.anyio

glob = GlobTool()


def touch(path: Path, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    os.utime(path, (mtime, mtime))
    return path


async def test_double_star_matches_at_any_depth_newest_first(ws: Path, ctx: ToolContext) -> None:
    old = touch(ws / "setup.py", 1_000)
    new = touch(ws / "src/pkg/mod.py", 3_000)
    mid = touch(ws / "src/app.py", 2_000)
    touch(ws / "src/readme.md", 4_000)

    result = await glob.run(GlobInput(pattern="**/*.py"), ctx)

    assert result.output.splitlines() == [str(new), str(mid), str(old)]
    assert result.metadata["count"] == 3


async def test_the_pattern_is_relative_to_path(ws: Path, ctx: ToolContext) -> None:
    touch(ws / "top.py", 1_000)
    inner = touch(ws / "src/inner.py", 1_000)

    result = await glob.run(GlobInput(pattern="*.py", path="src"), ctx)

    assert result.output == str(inner)


async def test_an_absolute_pattern(ws: Path, ctx: ToolContext) -> None:
    a = touch(ws / "lib/a.ts", 2_000)
    b = touch(ws / "lib/deep/b.ts", 1_000)

    result = await glob.run(GlobInput(pattern=f"{ws}/lib/**/*.ts"), ctx)

    assert result.output.splitlines() == [str(a), str(b)]


async def test_folders_are_not_listed_hidden_files_are(ws: Path, ctx: ToolContext) -> None:
    (ws / "pkg.py").mkdir()
    hidden = touch(ws / ".config.py", 1_000)

    result = await glob.run(GlobInput(pattern="*.py"), ctx)

    assert result.output == str(hidden)


async def test_equal_times_are_ordered_by_path(ws: Path, ctx: ToolContext) -> None:
    b = touch(ws / "b.txt", 5_000)
    a = touch(ws / "a.txt", 5_000)

    result = await glob.run(GlobInput(pattern="*.txt"), ctx)

    assert result.output.splitlines() == [str(a), str(b)]


async def test_no_match(ctx: ToolContext) -> None:
    result = await glob.run(GlobInput(pattern="**/*.rs"), ctx)

    assert result.output == "No files found"
    assert not result.is_error


async def test_many_matches_are_capped(
    ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(glob_module, "MAX_RESULTS", 2)
    for n in range(4):
        touch(ws / f"f{n}.txt", 1_000 + n)

    result = await glob.run(GlobInput(pattern="*.txt"), ctx)

    assert result.output.splitlines() == [
        str(ws / "f3.txt"),
        str(ws / "f2.txt"),
        "(showing the 2 newest of 4 files; narrow the pattern or path)",
    ]
    assert result.metadata["truncated"] is True


async def test_missing_folder(ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await glob.run(GlobInput(pattern="*", path="nope"), ctx)
    assert str(e.value) == f"{ws / 'nope'} does not exist"


def test_flags_and_affected_paths(ws: Path, ctx: ToolContext) -> None:
    assert glob.is_concurrency_safe(GlobInput(pattern="*"))
    assert glob.is_read_only(GlobInput(pattern="*"))
    assert glob.is_retry_safe
    assert glob.affected_paths(GlobInput(pattern="*"), ctx) == (ws,)
    assert glob.affected_paths(GlobInput(pattern="*", path="src"), ctx) == (ws / "src",)
