"""The path the permission engine decides on is the path the file tool opens.

A property test over path spellings (tildes, ``..``, whitespace, unicode spaces, NUL,
long names, symlinks in and out), then the write-time checks: a folder or file swapped
for a symlink after the decision is an error, never a write elsewhere.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolrun.config.models import Config
from toolrun.errors import ToolError
from toolrun.permissions import PermissionEngine
from toolrun.permissions.paths import PathInputError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins._files import Target, TargetChangedError
from toolrun.tools.builtins.apply_patch import ApplyPatchInput, ApplyPatchTool
from toolrun.tools.builtins.edit import EditInput, EditTool
from toolrun.tools.builtins.multiedit import EditSpec, MultiEditInput, MultiEditTool
from toolrun.tools.builtins.read import ReadInput, ReadTool
from toolrun.tools.builtins.write import WriteInput, WriteTool

pytestmark = pytest.mark.anyio


def snapshot(root: Path) -> dict[str, bytes | str | None]:
    out: dict[str, bytes | str | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            if path.is_symlink():
                out[str(path)] = os.readlink(path)
            elif path.is_file():
                out[str(path)] = path.read_bytes()
            else:
                out[str(path)] = None
    return out


class World:
    """root/home ($HOME), root/ws (the workspace) with symlinks in and out, root/outside."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.home = self.root / "home"
        self.ws = self.root / "ws"
        self.outside = self.root / "outside"
        for d in (self.home, self.ws / "dir", self.outside):
            d.mkdir(parents=True, exist_ok=True)
        (self.ws / "a.txt").write_text("alpha\n")
        (self.outside / "secret.txt").write_text("secret\n")
        links = {"link_in": self.ws / "dir", "link_out": self.outside,
                 "file_out": self.outside / "secret.txt", "dangling": self.ws / "nowhere",
                 "loop": self.ws / "loop"}
        for name, target in links.items():
            if not (self.ws / name).is_symlink():
                (self.ws / name).symlink_to(target)
        self.engine = PermissionEngine(Config(workspace=self.ws, default_mode="acceptEdits"))

    def ctx(self, decided: dict[str, str] | None = None) -> ToolContext:
        return replace(ToolContext.for_workspace(self.ws), home=str(self.home), decided=decided)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("decided")
    saved = os.environ.get("HOME")
    os.environ["HOME"] = str((root / "home").resolve())
    try:
        yield World(root)
    finally:
        if saved is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = saved


PARTS = st.sampled_from([
    "~", "~root", "~+", "~-", "~nosuchuser", "~1", "..", ".", "", "a.txt", "dir", "new",
    "b c", " lead", "trail ", "\u00a0x", "x\u2028y", "\t", "\u3000", "\u200b", "link_in",
    "link_out", "file_out", "dangling", "loop", "x\x00y", "n" * 255, "n" * 300, "é", "-rf",
])
SPELLINGS = st.one_of(
    st.lists(PARTS, min_size=1, max_size=6).map("/".join),
    st.lists(PARTS, min_size=1, max_size=5).map(lambda p: "/".join(["", "ROOT", *p])),
)


def _decided(world: World, tool: str, input: dict[str, object]) -> list[tuple[str, str]]:
    decision = world.engine.decide(tool, input)
    return [(t.target, t.resolved or t.target) for t in decision.targets
            if t.target.startswith("/")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spelling=SPELLINGS)
async def test_the_decided_path_is_the_opened_path(world: World, spelling: str) -> None:
    spelling = spelling.replace("/ROOT", str(world.root), 1)
    content = f"written {uuid.uuid4().hex}\n"  # the world persists between examples
    decided = _decided(world, "Write", {"file_path": spelling, "content": content})
    ctx = world.ctx(dict(decided))
    try:
        opened = ctx.resolve(spelling, "file_path")
    except PathInputError:
        assert decided == []  # the engine could not decide on a path either: it asks
        return
    assert [link for link, _ in decided] == [str(opened)]
    real = decided[0][1]
    assert Target.of(opened, ctx).real == real
    if not (real + "/").startswith(str(world.ws) + "/") or "\x00" in real:
        return  # outside the workspace: the engine asks; nothing is written here
    before = snapshot(world.root)
    try:
        await WriteTool().run(WriteInput(file_path=spelling, content=content), ctx)
    except (ToolError, OSError):
        # A refusal writes nothing; at most the decided path's missing folders were made.
        after = snapshot(world.root)
        changed = {p for p in after if after[p] != before.get(p)}
        assert all(real.startswith(p + "/") and after[p] is None for p in changed), changed
        return
    after = snapshot(world.root)
    changed = {p for p in after if after[p] != before.get(p)}
    assert after.get(real) == content.encode()
    assert all(real.startswith(p + "/") or p == real for p in changed), changed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spelling=SPELLINGS)
async def test_the_file_read_is_the_file_decided(world: World, spelling: str) -> None:
    spelling = spelling.replace("/ROOT", str(world.root), 1)
    decided = _decided(world, "Read", {"file_path": spelling})
    ctx = world.ctx(dict(decided))
    try:
        opened = ctx.resolve(spelling, "file_path")
    except PathInputError:
        assert decided == []
        return
    assert [link for link, _ in decided] == [str(opened)]
    real = decided[0][1]
    try:
        result = await ReadTool().run(ReadInput(file_path=spelling), ctx)
    except (ToolError, OSError):
        return
    with open(real, "rb") as f:  # noqa: ASYNC230 - a small local file in a test
        expected = f.read().decode("utf-8", "replace").splitlines()
    assert [line.split("\t", 1)[1] for line in result.output.splitlines()] == expected


async def test_glob_and_patch_paths_come_from_the_tools_own_parsers(world: World) -> None:
    patch = "*** Begin Patch\n*** Add File: \u00a0\u2028dir/new.md\n+x\n*** End Patch"
    (target,) = _decided(world, "ApplyPatch", {"patch": patch})
    assert target[0] == str(world.ws / "dir/new.md")
    assert ApplyPatchTool().affected_paths(ApplyPatchInput(patch=patch), world.ctx()) == (
        world.ws / "dir/new.md",
    )
    broken = "*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch"
    decision = world.engine.decide("ApplyPatch", {"patch": broken})
    assert decision.decision == "ask" and "cannot be analysed" in decision.reason


# ---------------------------------------------------------------------------- write time


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return ws


def decided_ctx(ws: Path, *names: str) -> ToolContext:
    """A context as the executor gives it: each path and where it led, decided now."""
    ctx = ToolContext.for_workspace(ws)
    decided = {}
    for name in names:
        path = ctx.resolve(name)
        decided[str(path)] = os.path.realpath(path)
    return replace(ctx, decided=decided)


def swap_for_symlink(folder: Path, target: Path) -> None:
    """What another plan does between the decision and the write."""
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.symlink_to(target)


async def test_a_folder_that_became_a_symlink_is_not_written_through(ws: Path) -> None:
    outside = ws.parent / "outside"
    ctx = decided_ctx(ws, "sub/new.txt", "sub/deeper/new.txt")
    swap_for_symlink(ws / "sub", outside)

    for name in ("sub/new.txt", "sub/deeper/new.txt"):
        with pytest.raises(TargetChangedError, match="target changed after the decision"):
            await WriteTool().run(WriteInput(file_path=name, content="x"), ctx)
    assert list(outside.iterdir()) == []


async def test_a_file_that_became_a_symlink_is_not_edited_or_read(ws: Path) -> None:
    outside = ws.parent / "outside"
    (outside / "victim.txt").write_text("keep\n")
    (ws / "sub" / "f.txt").write_text("keep\n")
    ctx = decided_ctx(ws, "sub/f.txt")
    (ws / "sub" / "f.txt").unlink()
    (ws / "sub" / "f.txt").symlink_to(outside / "victim.txt")

    calls = [
        (WriteTool(), WriteInput(file_path="sub/f.txt", content="pwned\n")),
        (EditTool(), EditInput(file_path="sub/f.txt", old_string="keep", new_string="pwned")),
        (MultiEditTool(), MultiEditInput(file_path="sub/f.txt", edits=[
            EditSpec(old_string="keep", new_string="pwned")])),
        (ReadTool(), ReadInput(file_path="sub/f.txt")),
        (ApplyPatchTool(), ApplyPatchInput(patch="*** Begin Patch\n*** Delete File: sub/f.txt\n"
                                                 "*** End Patch")),
    ]
    for tool, input in calls:
        with pytest.raises(TargetChangedError):
            await tool.run(input, ctx)  # type: ignore[attr-defined]
    assert (outside / "victim.txt").read_text() == "keep\n"
    assert (ws / "sub" / "f.txt").is_symlink()


async def test_a_retargeted_link_is_a_change(ws: Path) -> None:
    (ws / "real.txt").write_text("old\n")
    (ws / "other.txt").write_text("other\n")
    (ws / "link.txt").symlink_to("real.txt")
    ctx = decided_ctx(ws, "link.txt")
    (ws / "link.txt").unlink()
    (ws / "link.txt").symlink_to("other.txt")

    with pytest.raises(TargetChangedError, match=r"it led to .*real.txt, now to .*other.txt"):
        await WriteTool().run(WriteInput(file_path="link.txt", content="new\n"), ctx)
    assert (ws / "real.txt").read_text() == "old\n"
    assert (ws / "other.txt").read_text() == "other\n"


async def test_a_patch_moves_and_deletes_only_what_was_decided(ws: Path) -> None:
    outside = ws.parent / "outside"
    (ws / "sub" / "a.txt").write_text("one\n")
    patch = ("*** Begin Patch\n*** Update File: sub/a.txt\n*** Move to: sub/b/c.txt\n@@\n-one\n"
             "+two\n*** End Patch")
    ctx = decided_ctx(ws, "sub/a.txt", "sub/b/c.txt")
    (ws / "sub" / "b").symlink_to(outside)

    with pytest.raises(TargetChangedError):
        await ApplyPatchTool().run(ApplyPatchInput(patch=patch), ctx)
    assert list(outside.iterdir()) == []
    assert (ws / "sub" / "a.txt").read_text() == "one\n"


async def test_unchanged_targets_are_written_as_before(ws: Path) -> None:
    (ws / "real.txt").write_text("old\n")
    (ws / "link.txt").symlink_to("real.txt")
    ctx = decided_ctx(ws, "link.txt", "sub/new/deep.txt")

    await WriteTool().run(WriteInput(file_path="link.txt", content="new\n"), ctx)
    await WriteTool().run(WriteInput(file_path="sub/new/deep.txt", content="x"), ctx)

    assert (ws / "link.txt").is_symlink() and (ws / "real.txt").read_text() == "new\n"
    assert (ws / "sub/new/deep.txt").read_text() == "x"


async def test_a_path_the_engine_did_not_decide_on_is_refused(ws: Path) -> None:
    ctx = decided_ctx(ws, "sub/decided.txt")
    with pytest.raises(ToolError, match="did not decide on this path"):
        await WriteTool().run(WriteInput(file_path="sub/other.txt", content="x"), ctx)
    assert not (ws / "sub/other.txt").exists()


async def test_a_folder_moved_away_during_the_write_is_caught_before_the_rename(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder is opened, then moved outside before the rename: the rename is refused."""
    from toolrun.tools.builtins import _files

    outside = ws.parent / "outside"
    ctx = decided_ctx(ws, "sub/f.txt")
    opened = _files._open_dir

    def open_then_move(target: Target, directory: str, *, create: bool) -> int:
        fd = opened(target, directory, create=create)
        (ws / "sub").rename(outside / "sub")  # what a racing process does
        return fd

    monkeypatch.setattr(_files, "_open_dir", open_then_move)
    with pytest.raises(TargetChangedError, match="its folder moved"):
        await WriteTool().run(WriteInput(file_path="sub/f.txt", content="x"), ctx)
    assert list((outside / "sub").iterdir()) == []


async def test_a_patch_whose_second_file_changed_writes_neither(ws: Path) -> None:
    outside = ws.parent / "outside"
    (ws / "sub" / "b.txt").write_text("b\n")
    patch = ("*** Begin Patch\n*** Add File: first.txt\n+one\n*** Update File: sub/b.txt\n@@\n"
             "-b\n+B\n*** End Patch")
    ctx = decided_ctx(ws, "first.txt", "sub/b.txt")
    (outside / "b.txt").write_text("b\n")
    (ws / "sub" / "b.txt").unlink()
    (ws / "sub" / "b.txt").symlink_to(outside / "b.txt")

    with pytest.raises(ToolError, match="target changed after the decision.*no file was changed"):
        await ApplyPatchTool().run(ApplyPatchInput(patch=patch), ctx)
    assert not (ws / "first.txt").exists()
    assert (outside / "b.txt").read_text() == "b\n"
