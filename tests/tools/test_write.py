from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.write import WriteInput, WriteTool

pytestmark = pytest.mark.anyio

write = WriteTool()


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_creates_the_file_and_its_folders(ws: Path, ctx: ToolContext) -> None:
    result = await write.run(WriteInput(file_path="docs/notes/a.md", content="# Notes\n"), ctx)

    target = ws / "docs/notes/a.md"
    assert target.read_text() == "# Notes\n"
    assert result.output == f"Created {target} (8 bytes)"
    # (a result also carries its diff since #14: tests/tools/test_edit_diffs.py)
    assert {k: result.metadata[k] for k in ("path", "created", "bytes")} == {
        "path": str(target),
        "created": True,
        "bytes": 8,
    }
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()


async def test_replaces_a_file_and_keeps_its_mode(ws: Path, ctx: ToolContext) -> None:
    script = ws / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)

    result = await write.run(WriteInput(file_path=str(script), content="echo new\n"), ctx)

    assert script.read_text() == "echo new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert result.output == f"Updated {script} (9 bytes)"
    assert listing(ws) == ["run.sh"]  # no temp file left


async def test_writes_through_a_symlink(ws: Path, ctx: ToolContext) -> None:
    (ws / "real.txt").write_text("old")
    (ws / "link.txt").symlink_to("real.txt")

    await write.run(WriteInput(file_path="link.txt", content="new"), ctx)

    assert (ws / "link.txt").is_symlink()
    assert (ws / "real.txt").read_text() == "new"


async def test_unicode_is_written_as_utf8(ws: Path, ctx: ToolContext) -> None:
    await write.run(WriteInput(file_path="u.txt", content="naïve ✓"), ctx)

    assert (ws / "u.txt").read_bytes() == "naïve ✓".encode()


async def test_a_directory_cannot_be_written(ws: Path, ctx: ToolContext) -> None:
    (ws / "src").mkdir()

    with pytest.raises(ToolError) as e:
        await write.run(WriteInput(file_path="src", content="x"), ctx)
    assert str(e.value) == f"{ws / 'src'} is a directory, not a file"


async def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
    ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "keep.txt").write_text("original")

    def broken_replace(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        await write.run(WriteInput(file_path="keep.txt", content="new"), ctx)

    assert (ws / "keep.txt").read_text() == "original"
    assert listing(ws) == ["keep.txt"]


def test_flags_and_affected_paths(ws: Path, ctx: ToolContext) -> None:
    call = WriteInput(file_path="a.txt", content="")

    assert not write.is_concurrency_safe(call)
    assert not write.is_read_only(call)
    assert write.affected_paths(call, ctx) == (ws / "a.txt",)
