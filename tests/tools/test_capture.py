"""What a result shows of a long output (the head and the tail) and what it keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.stored import OutputStore
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins._capture import Capture
from toolrun.tools.builtins.bash import BashInput, BashTool

pytestmark = pytest.mark.anyio


def test_without_a_store_the_middle_is_counted_and_dropped() -> None:
    capture = Capture(keep=4)
    for chunk in (b"abc", b"defgh", b"ijklm"):
        capture.add(chunk)
    capture.close()
    assert capture.text() == "abcd\n[... 5 bytes of output omitted ...]\njklm"
    assert len(capture.head) + len(capture.tail) == 8


def test_nothing_is_written_while_the_display_holds_it_all(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "run", "run", "exec_a", 1000)
    capture = Capture(store, keep=4)
    capture.add(b"abcdefgh")  # exactly head + tail
    capture.close()
    assert capture.text() == "abcdefgh"
    assert store.stored is None and not store.folder.exists()


def test_once_past_the_display_everything_goes_to_the_store(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "run", "run", "exec_a", 1000)
    capture = Capture(store, keep=4)
    for chunk in (b"abc", b"defgh", b"i", b"jklmnop"):
        capture.add(chunk)
    capture.close()
    assert (store.folder / "exec_a.out").read_bytes() == b"abcdefghijklmnop"
    assert capture.text() == (
        "abcd\n[... 8 bytes of output omitted; all of it is stored: "
        "toolrun show run exec_a --full ...]\nmnop"
    )


def test_a_cut_store_is_called_the_first_part(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "run", "run", "exec_a", 10)
    capture = Capture(store, keep=4)
    capture.add(b"x" * 30)
    capture.close()
    assert "; the first part is stored: toolrun show run exec_a --full" in capture.text()


async def test_bash_streams_a_long_output_to_the_calls_store(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "run", "run", "exec_b", 64 << 20)
    ctx = ToolContext.for_workspace(tmp_path)
    ctx = ToolContext(ctx.workspace, ctx.cwd, stored_output=store)
    result = await BashTool().run(BashInput(command="seq 1 400000"), ctx)
    expected = "".join(f"{n}\n" for n in range(1, 400001)).encode()
    assert (store.folder / "exec_b.out").read_bytes() == expected
    assert store.stored is not None and store.stored.bytes == len(expected)
    assert result.output.startswith("1\n2\n3\n") and result.output.endswith("399999\n400000\n")
