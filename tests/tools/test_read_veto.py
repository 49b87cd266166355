"""Grep, Glob and LS leave out what the Read rules keep from being read (ToolContext.read_veto).

The veto comes from a real PermissionEngine built from Read deny/ask rules; the files
are real files in the test's workspace. Every Grep test runs on both engines.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind
from toolrun.permissions import PermissionEngine
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.glob import GlobInput, GlobTool
from toolrun.tools.builtins.grep import GrepInput, GrepTool
from toolrun.tools.builtins.ls import LSInput, LSTool

pytestmark = pytest.mark.anyio

HAVE_RG = shutil.which("rg") is not None
needs_rg = pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not installed")

DENY = ("Read(./.env)", "Read(secrets/**)")
ASK = ("Read(*.pem)",)
NOTE_3 = "(3 paths hidden by permission rules)"


def engine_for(
    ws: Path, *, deny: tuple[str, ...] = DENY, ask: tuple[str, ...] = ASK
) -> PermissionEngine:
    rules: list[PermissionRule] = []
    for line, (behavior, text) in enumerate(
        [*(("deny", t) for t in deny), *(("ask", t) for t in ask)], start=2
    ):
        where = SettingSource(SourceKind.TOOLRUN, ws / "toolrun.yaml", line, ws)
        rules.append(PermissionRule(behavior, text, where))  # type: ignore[arg-type]
    return PermissionEngine(Config(workspace=ws, rules=tuple(rules)))


@pytest.fixture(
    params=[pytest.param(True, id="ripgrep", marks=needs_rg), pytest.param(False, id="python")]
)
def grep(request: pytest.FixtureRequest) -> GrepTool:
    return GrepTool(use_ripgrep=request.param)


@pytest.fixture
def project(ws: Path) -> Path:
    files = {
        ".env": "SECRET=1\n",
        "app.py": "import os\nSECRET = os.environ['SECRET']\n",
        "lib.py": "def f():\n    return 'SECRET'\n",
        "secrets/prod.txt": "SECRET=prod\n",
        "keys/server.pem": "SECRET KEY\n",
        "notes.md": "nothing here\n",
    }
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    return ws


@pytest.fixture
def vctx(ws: Path) -> ToolContext:
    """A context whose read veto is a real engine's (deny .env and secrets/, ask *.pem)."""
    return dataclasses.replace(ToolContext.for_workspace(ws), read_veto=engine_for(ws).read_veto)


async def run_grep(grep: GrepTool, ctx: ToolContext, **fields: Any) -> tuple[str, dict[str, Any]]:
    fields = {key.replace("dash_", "-"): value for key, value in fields.items()}
    result = await grep.run(GrepInput.model_validate(fields), ctx)
    assert not result.is_error
    return result.output.replace(f"{ctx.workspace}/", ""), dict(result.metadata)


# ---------------------------------------------------------------------------- ToolContext


def test_the_context_has_no_veto_by_default(ws: Path) -> None:
    ctx = ToolContext.for_workspace(ws)
    assert ctx.read_veto is None
    assert not ctx.hidden(ws / ".env")


def test_hidden_asks_the_veto_and_the_context_stays_frozen(ws: Path) -> None:
    seen: list[Path] = []

    def veto(path: Path) -> str | None:
        seen.append(path)
        return "no" if path.name == "x" else None

    ctx = ToolContext(ws, ws, read_veto=veto)
    assert ctx.hidden(ws / "x")
    assert not ctx.hidden(str(ws / "y"))
    assert seen == [ws / "x", ws / "y"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.read_veto = None  # type: ignore[misc]
    assert not hasattr(ctx, "__dict__")  # still slots


# ---------------------------------------------------------------------------- Grep


async def test_without_a_veto_grep_shows_everything_it_searches(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    out, _ = await run_grep(grep, ctx, pattern="SECRET=", glob="*", output_mode="content")
    assert out == ".env:1:SECRET=1\nsecrets/prod.txt:1:SECRET=prod"


async def test_content_mode_drops_lines_of_hidden_files_and_says_so(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    out, meta = await run_grep(grep, vctx, pattern="SECRET", glob="*", output_mode="content")

    assert out == (
        f"app.py:2:SECRET = os.environ['SECRET']\nlib.py:2:    return 'SECRET'\n{NOTE_3}"
    )
    assert meta["hidden"] == 3
    assert meta["files"] == 2
    assert meta["lines"] == 2


async def test_context_lines_of_hidden_files_are_dropped_too(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    out, _ = await run_grep(
        grep, vctx, pattern="SECRET=", glob="*", output_mode="content", dash_C=3
    )
    assert out == f"No matches found\n{NOTE_3}"


async def test_files_with_matches_leaves_hidden_files_out(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    out, _ = await run_grep(grep, vctx, pattern="SECRET", glob="*")
    assert out == f"app.py\nlib.py\n{NOTE_3}"


async def test_count_mode_leaves_hidden_files_out(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    out, _ = await run_grep(grep, vctx, pattern="SECRET", glob="*", output_mode="count")
    assert out == f"app.py:1\nlib.py:1\n{NOTE_3}"


async def test_head_limit_applies_after_filtering(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    # .env sorts first: without filtering first, the one line kept would be its line.
    out, meta = await run_grep(
        grep, vctx, pattern="SECRET", glob="*", output_mode="content", head_limit=1
    )
    assert out == f"app.py:2:SECRET = os.environ['SECRET']\n{NOTE_3}"
    assert meta["lines"] == 2
    assert meta["truncated"] is True


async def test_the_note_does_not_depend_on_the_pattern(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    """A count of hidden files that *matched* would tell what a hidden file contains."""
    right, _ = await run_grep(grep, vctx, pattern="^SECRET=1$", glob="*")
    wrong, _ = await run_grep(grep, vctx, pattern="^SECRET=2$", glob="*")
    assert right == wrong == f"No matches found\n{NOTE_3}"


async def test_only_files_the_search_would_read_are_counted(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    # Without a glob, the hidden .env is not searched at all (ripgrep's default walk).
    out, meta = await run_grep(grep, vctx, pattern="SECRET", output_mode="files_with_matches")
    assert out == "app.py\nlib.py\n(2 paths hidden by permission rules)"
    assert meta["hidden"] == 2
    out, meta = await run_grep(grep, vctx, pattern="SECRET", path="notes.md")
    assert out == "No matches found"
    assert meta["hidden"] == 0


async def test_a_hidden_file_named_as_the_root_is_hidden(
    grep: GrepTool, project: Path, vctx: ToolContext
) -> None:
    out, _ = await run_grep(
        grep, vctx, pattern="SECRET", path="secrets/prod.txt", output_mode="content"
    )
    assert out == "No matches found\n(1 path hidden by permission rules)"


@needs_rg
@pytest.mark.parametrize(
    "query",
    [
        {"pattern": "SECRET", "glob": "*", "output_mode": "content", "-C": 1},
        {"pattern": "SECRET", "glob": "*", "output_mode": "count"},
        {"pattern": "SECRET"},
        {"pattern": "nothing", "glob": "*"},
        {"pattern": "SECRET", "glob": "*.{txt,pem}", "output_mode": "content"},
        {"pattern": "SECRET", "path": "secrets"},
        {"pattern": "SECRET", "glob": "*", "head_limit": 1},
    ],
)
async def test_both_engines_agree_with_a_veto(
    project: Path, vctx: ToolContext, query: dict[str, Any]
) -> None:
    rg = await GrepTool(use_ripgrep=True).run(GrepInput.model_validate(query), vctx)
    py = await GrepTool(use_ripgrep=False).run(GrepInput.model_validate(query), vctx)
    assert rg.output == py.output
    assert rg.metadata["hidden"] == py.metadata["hidden"]


# ---------------------------------------------------------------------------- Glob


async def test_glob_leaves_hidden_files_and_links_to_them_out(
    project: Path, vctx: ToolContext
) -> None:
    (project / "public.txt").symlink_to(project / ".env")

    result = await GlobTool().run(GlobInput(pattern="**/*"), vctx)

    shown = result.output.replace(f"{project}/", "").splitlines()
    assert sorted(shown[:-1]) == ["app.py", "lib.py", "notes.md"]
    assert shown[-1] == "(4 paths hidden by permission rules)"
    assert result.metadata["count"] == 3
    assert result.metadata["hidden"] == 4


async def test_glob_with_only_hidden_matches(project: Path, vctx: ToolContext) -> None:
    result = await GlobTool().run(GlobInput(pattern="**/*.pem"), vctx)
    assert result.output == "No files found\n(1 path hidden by permission rules)"


async def test_glob_without_a_veto_is_unchanged(project: Path, ctx: ToolContext) -> None:
    result = await GlobTool().run(GlobInput(pattern=".env"), ctx)
    assert result.output == str(project / ".env")
    assert "hidden" not in result.output


# ---------------------------------------------------------------------------- LS


async def test_ls_leaves_hidden_entries_out(project: Path, vctx: ToolContext) -> None:
    (project / "public.txt").symlink_to(project / ".env")

    result = await LSTool().run(LSInput(path="."), vctx)

    # .env, the link to it and secrets/ (Read(secrets/**) covers the folder too)
    assert result.output == (
        "app.py\nkeys/\nlib.py\nnotes.md\n(3 paths hidden by permission rules)"
    )
    assert result.metadata["entries"] == 4
    assert result.metadata["hidden"] == 3


async def test_ls_of_a_folder_whose_entries_are_all_hidden(
    project: Path, vctx: ToolContext
) -> None:
    result = await LSTool().run(LSInput(path="keys"), vctx)
    assert result.output == "(1 path hidden by permission rules)"


async def test_ls_of_an_empty_folder_with_a_veto(ws: Path, vctx: ToolContext) -> None:
    (ws / "empty").mkdir()
    result = await LSTool().run(LSInput(path="empty"), vctx)
    assert result.output == "(empty directory)"
    assert result.metadata["hidden"] == 0


async def test_ls_without_a_veto_shows_everything(project: Path, ctx: ToolContext) -> None:
    result = await LSTool().run(LSInput(path="."), ctx)
    assert result.output == ".env\napp.py\nkeys/\nlib.py\nnotes.md\nsecrets/"
