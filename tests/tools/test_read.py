from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from toolrun.errors import ToolError
from toolrun.tools.base import Tool, ToolContext
from toolrun.tools.builtins import BUILTIN_TOOLS
from toolrun.tools.builtins.read import ReadInput, ReadTool

pytestmark = pytest.mark.anyio

read = ReadTool()


async def test_lines_are_numbered_like_cat_n(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\n")

    result = await read.run(ReadInput(file_path="a.txt"), ctx)

    assert result.output == "     1\talpha\n     2\tbeta"
    assert not result.is_error
    assert result.metadata["lines"] == 2
    assert result.metadata["more"] is False


async def test_offset_and_limit_select_a_window(ws: Path, ctx: ToolContext) -> None:
    (ws / "ten.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))

    result = await read.run(ReadInput(file_path="ten.txt", offset=3, limit=2), ctx)

    assert result.output == "     3\tline 3\n     4\tline 4"
    assert result.metadata["more"] is True


async def test_default_limit_is_2000_lines(ws: Path, ctx: ToolContext) -> None:
    (ws / "long.txt").write_text("x\n" * 2500)

    result = await read.run(ReadInput(file_path=str(ws / "long.txt")), ctx)

    assert result.metadata["lines"] == 2000
    assert result.output.splitlines()[-1] == "  2000\tx"
    assert result.metadata["more"] is True


async def test_a_last_line_without_newline_and_crlf_endings(ws: Path, ctx: ToolContext) -> None:
    (ws / "dos.txt").write_bytes(b"one\r\ntwo")

    result = await read.run(ReadInput(file_path="dos.txt"), ctx)

    assert result.output == "     1\tone\n     2\ttwo"


async def test_lines_over_2000_characters_are_cut(ws: Path, ctx: ToolContext) -> None:
    (ws / "wide.txt").write_text("y" * 2500 + "\nshort\n")

    result = await read.run(ReadInput(file_path="wide.txt"), ctx)

    first, second = result.output.split("\n")
    assert first == "     1\t" + "y" * 2000 + "… [line truncated]"
    assert second == "     2\tshort"
    assert result.metadata["truncated_lines"] == 1


async def test_an_empty_file_reads_as_nothing(ws: Path, ctx: ToolContext) -> None:
    (ws / "empty.txt").write_text("")

    result = await read.run(ReadInput(file_path="empty.txt"), ctx)

    assert result.output == ""
    assert result.metadata["lines"] == 0


async def test_bytes_that_are_not_utf8_are_replaced(ws: Path, ctx: ToolContext) -> None:
    (ws / "latin1.txt").write_bytes(b"caf\xe9\n")

    result = await read.run(ReadInput(file_path="latin1.txt"), ctx)

    assert result.output == "     1\tcaf\ufffd"


async def test_missing_file(ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await read.run(ReadInput(file_path="nope.txt"), ctx)
    assert str(e.value) == f"{ws / 'nope.txt'} does not exist"


async def test_a_directory_points_to_ls(ws: Path, ctx: ToolContext) -> None:
    (ws / "src").mkdir()

    with pytest.raises(ToolError) as e:
        await read.run(ReadInput(file_path="src"), ctx)
    assert str(e.value) == f"{ws / 'src'} is a directory, use LS to list it"


async def test_a_binary_file_is_refused(ws: Path, ctx: ToolContext) -> None:
    (ws / "img.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

    with pytest.raises(ToolError) as e:
        await read.run(ReadInput(file_path="img.bin"), ctx)
    assert str(e.value) == f"{ws / 'img.bin'} is a binary file; Read shows text files only"


async def test_an_offset_past_the_end(ws: Path, ctx: ToolContext) -> None:
    (ws / "three.txt").write_text("a\nb\nc\n")

    with pytest.raises(ToolError) as e:
        await read.run(ReadInput(file_path="three.txt", offset=7), ctx)
    assert str(e.value) == f"offset 7 is beyond the end of {ws / 'three.txt'} (3 lines)"


def test_flags_and_affected_paths(ws: Path, ctx: ToolContext) -> None:
    call = ReadInput(file_path="src/../a.py")

    assert read.is_concurrency_safe(call)
    assert read.is_read_only(call)
    assert read.is_retry_safe
    assert read.affected_paths(call, ctx) == (ws / "a.py",)


def test_input_uses_claude_code_field_names_and_rejects_others() -> None:
    assert ReadInput.model_validate({"file_path": "a", "offset": 2, "limit": 5}).limit == 5
    with pytest.raises(ValidationError):
        ReadInput.model_validate({"path": "a"})
    with pytest.raises(ValidationError):
        ReadInput.model_validate({"file_path": "a", "limit": 0})


def test_builtin_tools_satisfy_the_tool_protocol() -> None:
    names = [tool.name for tool in BUILTIN_TOOLS]

    assert names == [
        "Bash", "Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "WebFetch", "ApplyPatch"
    ]  # fmt: skip
    assert all(isinstance(tool, Tool) for tool in BUILTIN_TOOLS)
    assert all(tool.description and tool.input_model.model_json_schema() for tool in BUILTIN_TOOLS)


@pytest.mark.parametrize(
    "content",
    [b"", b"one", b"one\n", b"a\r\nb\r\n", b"x\n\n\ny", "\u00e9\u00e8\n".encode(), b"l\n" * 50],
)
@pytest.mark.parametrize(("start", "limit"), [(1, 2000), (2, 1), (3, 10), (49, 5)])
def test_the_small_file_fast_path_reads_exactly_like_the_streaming_path(
    tmp_path: Path, content: bytes, start: int, limit: int
) -> None:
    from toolrun.errors import ToolError
    from toolrun.tools.builtins.read import _read, _read_small

    path = tmp_path / "f.txt"
    path.write_bytes(content)

    def outcome(fn: object) -> object:
        try:
            out = fn(path, start, limit)  # type: ignore[operator]
        except ToolError as exc:
            return str(exc)
        return (out.output, dict(out.metadata))

    assert outcome(_read_small) == outcome(_read)
