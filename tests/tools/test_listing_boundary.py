"""Glob, Grep and LS show nothing outside the boundary, through any symlink or pattern."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.glob import GlobInput, GlobTool
from toolrun.tools.builtins.grep import GrepInput, GrepTool
from toolrun.tools.builtins.ls import LSInput, LSTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """ws/ with a folder link, a file link and a nested link to tmp/outside."""
    root = tmp_path.resolve()
    ws, outside = root / "ws", root / "outside"
    (ws / "src").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("needle outside\n")
    (outside / "deep" / "key.pem").write_text("needle key\n")
    (ws / "src" / "a.txt").write_text("needle inside\n")
    (ws / "link_out").symlink_to(outside)
    (ws / "src" / "nested_out").symlink_to(outside / "deep")
    (ws / "file_out.txt").symlink_to(outside / "secret.txt")
    (ws / "src" / "link_in").symlink_to(ws / "src" / "a.txt")
    return ws


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext.for_workspace(ws)


@pytest.mark.parametrize(
    "pattern",
    ["link_out/*", "link_out/**/*", "**/*", "**/*.pem", "*/*", "src/*/*", "**/secret.txt",
     "link_out/../link_out/*", "*", "*.txt"],
)
async def test_glob_shows_only_what_is_inside(ws: Path, ctx: ToolContext, pattern: str) -> None:
    result = await GlobTool().run(GlobInput(pattern=pattern), ctx)

    shown = [line for line in result.output.splitlines() if line.startswith("/")]
    assert all(line.startswith(str(ws) + "/") for line in shown), shown
    assert not any(name in result.output for name in ("secret.txt", "key.pem", "file_out"))
    assert "nested_out" not in result.output and "link_out/" not in result.output


async def test_glob_inside_links_still_show(ws: Path, ctx: ToolContext) -> None:
    result = await GlobTool().run(GlobInput(pattern="src/*"), ctx)

    assert result.output.splitlines()[:2] == sorted(
        [str(ws / "src" / "a.txt"), str(ws / "src" / "link_in")], key=result.output.find
    )


@pytest.mark.parametrize("pattern", ["*/../../outside/*", "**/..", "src/*/../../.."])
async def test_glob_refuses_dotdot_after_a_wildcard(ctx: ToolContext, pattern: str) -> None:
    with pytest.raises(ToolError, match="'..' after a wildcard"):
        await GlobTool().run(GlobInput(pattern=pattern), ctx)


async def test_ls_leaves_out_links_that_lead_outside(ws: Path, ctx: ToolContext) -> None:
    result = await LSTool().run(LSInput(path="."), ctx)
    assert result.output.splitlines() == ["src/", "(2 paths hidden by permission rules)"]

    result = await LSTool().run(LSInput(path="src"), ctx)
    assert result.output.splitlines() == [
        "a.txt", "link_in", "(1 path hidden by permission rules)"
    ]


@pytest.mark.parametrize("use_ripgrep", [True, False], ids=["ripgrep", "python"])
@pytest.mark.parametrize("glob", [None, "link_out/**", "**/*.pem", "*.txt"])
async def test_grep_finds_nothing_outside(
    ws: Path, ctx: ToolContext, use_ripgrep: bool, glob: str | None
) -> None:
    result = await GrepTool(use_ripgrep=use_ripgrep).run(
        GrepInput(pattern="needle", glob=glob, output_mode="content"), ctx
    )

    assert "outside" not in result.output and "key" not in result.output


async def test_a_folder_outside_shows_once_the_permission_check_decided_on_it(
    ws: Path, ctx: ToolContext
) -> None:
    outside = ws.parent / "outside"
    approved = replace(ctx, decided={str(ws / "link_out"): str(outside), str(ws): str(ws)})

    result = await GlobTool().run(GlobInput(pattern="link_out/*"), approved)

    assert result.output.splitlines() == [str(ws / "link_out" / "secret.txt")]
