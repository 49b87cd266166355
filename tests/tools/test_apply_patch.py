from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.apply_patch import (
    ApplyPatchInput,
    ApplyPatchTool,
    PatchSyntaxError,
    parse_patch,
)

pytestmark = pytest.mark.anyio

apply_patch = ApplyPatchTool()


def patch(*lines: str) -> ApplyPatchInput:
    return ApplyPatchInput(patch="\n".join(["*** Begin Patch", *lines, "*** End Patch"]))


async def test_add_update_and_delete_in_one_patch(ws: Path, ctx: ToolContext) -> None:
    (ws / "app.py").write_text("import os\n\ndef main():\n    print('hi')\n    return 0\n")
    (ws / "old.txt").write_text("bye\n")

    result = await apply_patch.run(
        patch(
            "*** Add File: docs/new.md",
            "+# New",
            "+",
            "+text",
            "*** Update File: app.py",
            "@@ def main():",
            "-    print('hi')",
            "+    print('hello')",
            "     return 0",
            "*** Delete File: old.txt",
        ),
        ctx,
    )

    assert result.output == (
        "Success. Updated the following files:\nA docs/new.md\nM app.py\nD old.txt"
    )
    assert (ws / "docs/new.md").read_text() == "# New\n\ntext\n"
    assert (ws / "app.py").read_text() == (
        "import os\n\ndef main():\n    print('hello')\n    return 0\n"
    )
    assert not (ws / "old.txt").exists()


async def test_codex_input_field_name_is_accepted(ws: Path, ctx: ToolContext) -> None:
    call = ApplyPatchInput.model_validate(
        {"input": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"}
    )

    await apply_patch.run(call, ctx)

    assert (ws / "a.txt").read_text() == "a\n"


async def test_move_to_renames_while_updating(ws: Path, ctx: ToolContext) -> None:
    (ws / "src").mkdir()
    (ws / "src/old_name.py").write_text("VALUE = 1\n")

    result = await apply_patch.run(
        patch(
            "*** Update File: src/old_name.py",
            "*** Move to: src/new_name.py",
            "@@",
            "-VALUE = 1",
            "+VALUE = 2",
        ),
        ctx,
    )

    assert not (ws / "src/old_name.py").exists()
    assert (ws / "src/new_name.py").read_text() == "VALUE = 2\n"
    assert result.output.endswith("\nM src/new_name.py")


async def test_the_at_at_header_picks_which_block_to_change(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("def one():\n    return 0\n\ndef two():\n    return 0\n")

    await apply_patch.run(
        patch("*** Update File: a.py", "@@ def two():", "-    return 0", "+    return 2"), ctx
    )

    assert (ws / "a.py").read_text() == "def one():\n    return 0\n\ndef two():\n    return 2\n"


async def test_hunks_apply_in_order_with_several_at_at_lines(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("x\nx\nx\nx\n")

    await apply_patch.run(
        patch("*** Update File: a.txt", "@@", "-x", "+first", "@@", " x", "-x", "+third"), ctx
    )

    assert (ws / "a.txt").read_text() == "first\nx\nthird\nx\n"


async def test_trailing_whitespace_differences_still_match(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("keep   \nold\t\n")

    await apply_patch.run(patch("*** Update File: a.txt", "@@", " keep", "-old", "+new"), ctx)

    assert (ws / "a.txt").read_text() == "keep   \nnew\n"


async def test_end_of_file_prefers_the_last_occurrence(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("end\nmiddle\nend\n")

    await apply_patch.run(
        patch("*** Update File: a.txt", "@@", "-end", "+END", "*** End of File"), ctx
    )

    assert (ws / "a.txt").read_text() == "end\nmiddle\nEND\n"


async def test_a_pure_insertion_goes_after_its_header(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("import os\nimport sys\n\nprint(1)\n")

    await apply_patch.run(patch("*** Update File: a.py", "@@ import sys", "+import re"), ctx)

    assert (ws / "a.py").read_text() == "import os\nimport sys\nimport re\n\nprint(1)\n"


async def test_a_trailing_blank_hunk_line_the_file_lacks_is_tolerated(
    ws: Path, ctx: ToolContext
) -> None:
    (ws / "a.txt").write_text("a\nb\n")

    await apply_patch.run(patch("*** Update File: a.txt", "@@", " a", "-b", "+c", ""), ctx)

    assert (ws / "a.txt").read_text() == "a\nc\n"


async def test_crlf_files_stay_crlf(ws: Path, ctx: ToolContext) -> None:
    (ws / "win.txt").write_bytes(b"a\r\nb\r\n")

    await apply_patch.run(patch("*** Update File: win.txt", "@@", " a", "-b", "+c"), ctx)

    assert (ws / "win.txt").read_bytes() == b"a\r\nc\r\n"


async def test_a_failing_hunk_writes_nothing_and_names_file_and_hunk(
    ws: Path, ctx: ToolContext
) -> None:
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\ngamma\n")

    with pytest.raises(ToolError) as e:
        await apply_patch.run(
            patch(
                "*** Update File: a.txt",
                "@@",
                "-alpha",
                "+ALPHA",
                "*** Add File: c.txt",
                "+new",
                "*** Update File: b.txt",
                "@@",
                "-beta",
                "+BETA",
                "@@",
                "-delta",
                "+DELTA",
            ),
            ctx,
        )

    assert str(e.value) == (
        "b.txt: hunk 2 does not match the file; expected these lines:\n  delta; no file was changed"
    )
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert (ws / "b.txt").read_text() == "beta\ngamma\n"
    assert not (ws / "c.txt").exists()


async def test_a_missing_header_line_is_reported(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("x = 1\n")

    with pytest.raises(ToolError) as e:
        await apply_patch.run(
            patch("*** Update File: a.py", "@@ def gone():", "-x = 1", "+x = 2"), ctx
        )
    assert str(e.value) == (
        "a.py: hunk 1: the @@ line 'def gone():' is not in the file; no file was changed"
    )


async def test_updating_or_deleting_a_missing_file(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await apply_patch.run(patch("*** Update File: nope.py", "@@", "-a", "+b"), ctx)
    assert str(e.value) == "nope.py: nope.py does not exist; no file was changed"

    with pytest.raises(ToolError) as e:
        await apply_patch.run(patch("*** Delete File: gone.txt"), ctx)
    assert str(e.value) == "gone.txt: gone.txt does not exist; no file was changed"


async def test_a_file_changed_twice_is_refused(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("a\n")

    with pytest.raises(ToolError) as e:
        await apply_patch.run(
            patch("*** Update File: a.txt", "@@", "-a", "+b", "*** Delete File: a.txt"), ctx
        )
    assert str(e.value) == "a.txt: the patch changes this file more than once"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "*** Add File: a\n+x\n*** End Patch",
            "line 1: the patch must start with '*** Begin Patch'",
        ),
        ("*** Begin Patch\n*** Add File: a\n+x", "line 3: the patch must end with '*** End Patch'"),
        ("*** Begin Patch\n*** End Patch", "line 1: the patch changes no files"),
        (
            "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
            "line 3: lines of an added file start with '+', got 'no plus'",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch",
            "line 4: hunk lines start with ' ', '-' or '+', got '?x'",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "line 3: '*** Update File: a' has no hunks",
        ),
        (
            "*** Begin Patch\n*** Rename File: a\n*** End Patch",
            (
                "line 2: expected '*** Add File:', '*** Delete File:' or '*** Update File:', "
                "got '*** Rename File: a'"
            ),
        ),
    ],
)
async def test_syntax_errors_name_the_line(ctx: ToolContext, text: str, message: str) -> None:
    with pytest.raises(PatchSyntaxError) as e:
        await apply_patch.run(ApplyPatchInput(patch=text), ctx)
    assert str(e.value) == f"invalid patch: {message}"


def test_parse_patch_accepts_a_heredoc_wrapper_and_unified_ranges() -> None:
    parsed = parse_patch(
        "<<'EOF'\n*** Begin Patch\n*** Update File: a.py\n@@ -1,2 +1,2 @@\n-a\n+b\n"
        "*** End Patch\nEOF\n"
    )

    (change,) = parsed.changes
    assert parsed.paths() == ["a.py"]
    assert change.hunks[0].headers == ()  # type: ignore[union-attr]


def test_affected_paths_include_move_destinations(ws: Path, ctx: ToolContext) -> None:
    call = patch(
        "*** Add File: new.txt",
        "+x",
        "*** Update File: src/a.py",
        "*** Move to: lib/a.py",
        "@@",
        "-a",
        "+b",
        "*** Delete File: /abs/old.txt",
    )

    assert apply_patch.affected_paths(call, ctx) == (
        ws / "new.txt",
        ws / "src/a.py",
        ws / "lib/a.py",
        Path("/abs/old.txt"),
    )
    assert not apply_patch.is_concurrency_safe(call)


def test_affected_paths_of_a_malformed_patch_raise_value_error(ctx: ToolContext) -> None:
    """The caller must treat such a call as not analysable, never as touching nothing."""
    with pytest.raises(ValueError, match="invalid patch: line 1"):
        apply_patch.affected_paths(ApplyPatchInput(patch="not a patch"), ctx)
