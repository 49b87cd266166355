"""Edit, MultiEdit, Write and ApplyPatch results carry what they changed: a unified diff
and Claude Code's structuredPatch hunks, checked against the real files and `diff -u`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from toolrun.tools.base import ToolContext
from toolrun.tools.builtins._diff import MAX_DIFF_BYTES, structured_patch
from toolrun.tools.builtins.apply_patch import ApplyPatchInput, ApplyPatchTool
from toolrun.tools.builtins.edit import EditInput, EditTool
from toolrun.tools.builtins.multiedit import MultiEditInput, MultiEditTool
from toolrun.tools.builtins.write import WriteInput, WriteTool

pytestmark = pytest.mark.anyio
LINES = "".join(f"line {i}\n" for i in range(1, 21))


def diff_u(old: Path, new: Path, label: str) -> str:
    """What GNU `diff -u` says, with both labels set to ``label``."""
    done = subprocess.run(
        ["diff", "-u", "--label", label, "--label", label, str(old), str(new)],
        capture_output=True, text=True, check=False,
    )
    return done.stdout


async def test_edit_diff_is_what_diff_u_prints(ws: Path, ctx: ToolContext, tmp_path_factory: pytest.TempPathFactory) -> None:
    (ws / "a.txt").write_text(LINES)
    before = tmp_path_factory.mktemp("before") / "a.txt"
    shutil.copy(ws / "a.txt", before)
    result = await EditTool().run(
        EditInput(file_path="a.txt", old_string="line 10\n", new_string="line ten\nline 10.5\n"),
        ctx,
    )
    assert result.metadata["diff"] == diff_u(before, ws / "a.txt", "a.txt")
    assert result.metadata["structuredPatch"] == [
        {
            "oldStart": 7,
            "oldLines": 7,
            "newStart": 7,
            "newLines": 8,
            "lines": [
                " line 7", " line 8", " line 9", "-line 10", "+line ten", "+line 10.5",
                " line 11", " line 12", " line 13",
            ],
        }
    ]


async def test_multiedit_two_far_apart_edits_are_two_hunks(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text(LINES)
    result = await MultiEditTool().run(
        MultiEditInput.model_validate(
            {
                "file_path": "a.txt",
                "edits": [
                    {"old_string": "line 2\n", "new_string": "line two\n"},
                    {"old_string": "line 19\n", "new_string": ""},
                ],
            }
        ),
        ctx,
    )
    hunks = result.metadata["structuredPatch"]
    assert [(h["oldStart"], h["oldLines"], h["newStart"], h["newLines"]) for h in hunks] == [
        (1, 5, 1, 5),
        (16, 5, 16, 4),
    ]
    assert result.metadata["diff"].count("\n@@ ") == 2


async def test_write_over_a_file_and_a_new_file(ws: Path, ctx: ToolContext) -> None:
    (ws / "cfg.ini").write_text("a=1\nb=2\n")
    updated = await WriteTool().run(WriteInput(file_path="cfg.ini", content="a=1\nb=3\n"), ctx)
    assert updated.metadata["diff"] == "--- cfg.ini\n+++ cfg.ini\n@@ -1,2 +1,2 @@\n a=1\n-b=2\n+b=3\n"
    created = await WriteTool().run(WriteInput(file_path="new.txt", content="x\n"), ctx)
    assert created.metadata["structuredPatch"] == [
        {"oldStart": 0, "oldLines": 0, "newStart": 1, "newLines": 1, "lines": ["+x"]}
    ]


async def test_writing_the_same_text_has_an_empty_diff(ws: Path, ctx: ToolContext) -> None:
    (ws / "same.txt").write_text("x\n")
    result = await WriteTool().run(WriteInput(file_path="same.txt", content="x\n"), ctx)
    assert result.metadata["structuredPatch"] == [] and result.metadata["diff"] == ""


@pytest.mark.parametrize("old", [b"\xff\xfe binary \x00", b"x" * (MAX_DIFF_BYTES + 1)])
async def test_write_over_binary_or_huge_text_still_writes_without_a_diff(
    ws: Path, ctx: ToolContext, old: bytes
) -> None:
    (ws / "blob").write_bytes(old)
    result = await WriteTool().run(WriteInput(file_path="blob", content="text\n"), ctx)
    assert (ws / "blob").read_text() == "text\n"
    assert "diff" not in result.metadata and not result.is_error


async def test_apply_patch_diffs_every_file(ws: Path, ctx: ToolContext) -> None:
    (ws / "keep.py").write_text("a = 1\nb = 2\n")
    (ws / "gone.py").write_text("old\n")
    (ws / "moved.py").write_text("x = 1\n")
    patch = (
        "*** Begin Patch\n"
        "*** Add File: new.py\n+hello\n"
        "*** Delete File: gone.py\n"
        "*** Update File: keep.py\n@@\n a = 1\n-b = 2\n+b = 3\n"
        "*** Update File: moved.py\n*** Move to: there.py\n@@\n-x = 1\n+x = 2\n"
        "*** End Patch\n"
    )
    result = await ApplyPatchTool().run(ApplyPatchInput(patch=patch), ctx)
    patches = {p["filePath"]: p for p in result.metadata["patches"]}
    assert set(patches) == {"new.py", "gone.py", "keep.py", "there.py"}
    assert patches["new.py"]["structuredPatch"][0]["lines"] == ["+hello"]
    assert patches["gone.py"]["structuredPatch"][0]["lines"] == ["-old"]
    assert patches["keep.py"]["diff"] == "--- keep.py\n+++ keep.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
    assert patches["there.py"]["diff"].startswith("--- moved.py\n+++ there.py\n")
    assert result.metadata["diff"] == "".join(patches[p]["diff"] for p in patches)


def test_structured_patch_of_crlf_text_compares_lines_not_endings() -> None:
    assert structured_patch("a\r\nb\r\n", "a\r\nc\r\n")[0]["lines"] == [" a", "-b", "+c"]
