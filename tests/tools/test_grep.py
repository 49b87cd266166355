"""Grep runs on ripgrep when it is installed and on pure Python otherwise.

Every behaviour test runs on both engines (the ripgrep variant is skipped only when
`rg` is missing), and `test_both_engines_agree` compares their full output on a
tree with ignore files, hidden files, globs, types, context and multiline queries.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from toolrun.errors import ToolError
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins.grep import GrepInput, GrepTool

pytestmark = pytest.mark.anyio

HAVE_RG = shutil.which("rg") is not None
needs_rg = pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not installed")


@pytest.fixture(
    params=[pytest.param(True, id="ripgrep", marks=needs_rg), pytest.param(False, id="python")]
)
def grep(request: pytest.FixtureRequest) -> GrepTool:
    return GrepTool(use_ripgrep=request.param)


@pytest.fixture
def project(ws: Path) -> Path:
    files = {
        ".gitignore": "build/\n*.log\n",
        "README.md": "# Hello project\n",
        "src/app.py": "import os\n\ndef main():\n    print('Hello')\n    return 0\n",
        "src/util.py": "def helper():\n    return 'hello world'\n",
        "src/web/index.ts": "const hello = 'hi';\n",
        "build/out.py": "hello = 1\n",
        "debug.log": "hello from the log\n",
        ".env": "hello=1\n",
        ".cache/x.py": "hello\n",
    }
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    return ws


async def search(grep: GrepTool, ctx: ToolContext, **fields: Any) -> str:
    """Run Grep; paths in the output are shown relative to the workspace."""
    fields = {key.replace("dash_", "-"): value for key, value in fields.items()}
    result = await grep.run(GrepInput.model_validate(fields), ctx)
    assert not result.is_error
    return result.output.replace(f"{ctx.workspace}/", "")


async def test_lists_matching_files_sorted_skipping_hidden_and_ignored(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    assert await search(grep, ctx, pattern="hello") == "src/util.py\nsrc/web/index.ts"


async def test_ignore_case(grep: GrepTool, project: Path, ctx: ToolContext) -> None:
    assert await search(grep, ctx, pattern="hello", dash_i=True) == (
        "README.md\nsrc/app.py\nsrc/util.py\nsrc/web/index.ts"
    )


async def test_content_shows_path_line_number_and_text(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    assert await search(grep, ctx, pattern=r"return \S", output_mode="content") == (
        "src/app.py:5:    return 0\nsrc/util.py:2:    return 'hello world'"
    )


async def test_content_without_line_numbers(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    out = await search(grep, ctx, pattern="return", output_mode="content", dash_n=False)
    assert out == "src/app.py:    return 0\nsrc/util.py:    return 'hello world'"


async def test_count_is_matching_lines_per_file(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    (project / "src/many.py").write_text("x = 1\nx = 2 + x\ny = 3\n")

    assert await search(grep, ctx, pattern="return|x", output_mode="count", path="src") == (
        "src/app.py:1\nsrc/many.py:2\nsrc/util.py:1"
    )


async def test_context_lines_use_dashes_and_groups_are_separated(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    (project / "src/gaps.py").write_text("hit\n2\n3\n4\nhit\n6\n")

    out = await search(grep, ctx, pattern="hit", output_mode="content", dash_A=1, path="src")

    assert out == "src/gaps.py:1:hit\nsrc/gaps.py-2-2\n--\nsrc/gaps.py:5:hit\nsrc/gaps.py-6-6"


async def test_context_before_and_after_across_files(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    out = await search(grep, ctx, pattern="print|helper", output_mode="content", dash_C=1)

    assert out == (
        "src/app.py-3-def main():\n"
        "src/app.py:4:    print('Hello')\n"
        "src/app.py-5-    return 0\n"
        "--\n"
        "src/util.py:1:def helper():\n"
        "src/util.py-2-    return 'hello world'"
    )


async def test_b_overrides_c_for_lines_before(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    out = await search(
        grep, ctx, pattern="print", output_mode="content", dash_C=1, dash_B=0, path="src"
    )
    assert out == "src/app.py:4:    print('Hello')\nsrc/app.py-5-    return 0"


async def test_head_limit_keeps_the_first_lines(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    result = await grep.run(GrepInput.model_validate({"pattern": "e", "head_limit": 2}), ctx)

    assert result.output.replace(f"{ctx.workspace}/", "") == "README.md\nsrc/app.py"
    assert result.metadata["truncated"] is True
    assert result.metadata["lines"] == 4


async def test_glob_keeps_matching_files_in_folders_that_are_not_ignored(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    assert await search(grep, ctx, pattern="hello", dash_i=True, glob="*.py") == (
        "src/app.py\nsrc/util.py"
    )


async def test_glob_overrides_gitignore_for_the_files_it_names(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    # As with `rg --glob`: debug.log is in .gitignore, but the glob names it.
    assert await search(grep, ctx, pattern="hello", glob="*.log") == "debug.log"


async def test_negated_braced_and_anchored_globs(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    assert await search(grep, ctx, pattern="(?i)hello", glob="!*.ts") == (
        "README.md\nsrc/app.py\nsrc/util.py"
    )
    assert await search(grep, ctx, pattern="(?i)hello", glob="*.{md,ts}") == (
        "README.md\nsrc/web/index.ts"
    )
    assert await search(grep, ctx, pattern="(?i)hello", glob="src/*.py") == (
        "src/app.py\nsrc/util.py"
    )


async def test_type_filter(grep: GrepTool, project: Path, ctx: ToolContext) -> None:
    assert await search(grep, ctx, pattern="(?i)hello", type="py") == "src/app.py\nsrc/util.py"


async def test_gitignore_files_nest_and_negate_and_apply_from_parents(
    grep: GrepTool, ws: Path, ctx: ToolContext
) -> None:
    (ws / "pkg/gen").mkdir(parents=True)
    (ws / ".gitignore").write_text("*.gen.py\n")
    (ws / "pkg/.gitignore").write_text("gen/\n*.tmp\n!keep.tmp\n")
    for name in ("pkg/a.py", "pkg/a.gen.py", "pkg/gen/b.py", "pkg/x.tmp", "pkg/keep.tmp"):
        (ws / name).write_text("needle\n")

    assert await search(grep, ctx, pattern="needle") == "pkg/a.py\npkg/keep.tmp"
    # Searching pkg/ alone still applies the workspace's .gitignore above it.
    assert await search(grep, ctx, pattern="needle", path="pkg") == "pkg/a.py\npkg/keep.tmp"


async def test_an_ignore_file_wins_over_gitignore(
    grep: GrepTool, ws: Path, ctx: ToolContext
) -> None:
    (ws / ".gitignore").write_text("*.txt\n")
    (ws / ".ignore").write_text("!wanted.txt\n")
    (ws / "wanted.txt").write_text("needle\n")
    (ws / "other.txt").write_text("needle\n")

    assert await search(grep, ctx, pattern="needle") == "wanted.txt"


async def test_a_file_named_directly_is_searched_even_if_ignored(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    out = await search(grep, ctx, pattern="hello", path="build/out.py", output_mode="content")
    assert out == "build/out.py:1:hello = 1"


async def test_binary_files_are_skipped(grep: GrepTool, ws: Path, ctx: ToolContext) -> None:
    (ws / "data.bin").write_bytes(b"needle\x00\x01\x02")
    (ws / "text.txt").write_text("needle\n")

    assert await search(grep, ctx, pattern="needle") == "text.txt"


async def test_multiline_matches_span_lines(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    out = await search(
        grep, ctx, pattern=r"main\(\):\n\s+print", multiline=True, output_mode="content"
    )
    assert out == "src/app.py:3:def main():\nsrc/app.py:4:    print('Hello')"


async def test_a_line_break_needs_multiline(
    grep: GrepTool, project: Path, ctx: ToolContext
) -> None:
    with pytest.raises(ToolError) as e:
        await search(grep, ctx, pattern=r"main\(\):\n")
    assert str(e.value) == (
        "the pattern contains a line break; set multiline to search across lines"
    )


async def test_no_matches_is_not_an_error(grep: GrepTool, project: Path, ctx: ToolContext) -> None:
    assert await search(grep, ctx, pattern="zebra") == "No matches found"


async def test_an_invalid_regex(grep: GrepTool, project: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await search(grep, ctx, pattern="(unclosed")
    assert str(e.value).startswith("invalid regex '(unclosed': ")


async def test_an_unknown_type(grep: GrepTool, project: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await search(grep, ctx, pattern="x", type="nosuchtype")
    assert str(e.value) == "unknown file type 'nosuchtype'"
    with pytest.raises(ToolError, match="unknown file type 'nosuchtype'"):
        await search(grep, ctx, pattern="x", type="nosuchtype", path="README.md")


async def test_a_missing_path(grep: GrepTool, ws: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await search(grep, ctx, pattern="x", path="nope")
    assert str(e.value) == f"{ws / 'nope'} does not exist"


async def test_metadata_names_the_engine(grep: GrepTool, project: Path, ctx: ToolContext) -> None:
    result = await grep.run(GrepInput(pattern="hello"), ctx)

    assert result.metadata["engine"] == ("ripgrep" if grep.use_ripgrep else "python")
    assert result.metadata["files"] == 2


def test_dash_options_use_their_claude_code_names() -> None:
    call = GrepInput.model_validate({"pattern": "x", "-i": True, "-n": False, "-C": 2})

    assert (call.case_insensitive, call.line_numbers, call.context) == (True, False, 2)
    assert set(GrepInput.model_json_schema()["properties"]) >= {"-i", "-n", "-A", "-B", "-C"}
    assert GrepTool().is_concurrency_safe(call)


AGREEMENT_QUERIES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "output_mode": "content"},
    {"pattern": "needle", "output_mode": "count"},
    {"pattern": "NEEDLE", "-i": True, "output_mode": "content", "-n": False},
    {"pattern": "needle", "output_mode": "content", "-C": 2},
    {"pattern": "needle", "output_mode": "content", "-A": 1, "-B": 3},
    {"pattern": "^", "output_mode": "count"},
    {"pattern": "x*", "output_mode": "content", "path": "deep"},
    {"pattern": r"\bneedle\b$", "output_mode": "content"},
    {"pattern": "needle", "glob": "*.md"},
    {"pattern": "needle", "glob": "deep/**"},
    {"pattern": "needle", "glob": "!*.txt"},
    {"pattern": "needle", "glob": "*.log"},
    {"pattern": "needle", "glob": ".*"},
    {"pattern": "needle", "glob": "*.md", "path": ".hidden"},
    {"pattern": "needle", "type": "md"},
    {"pattern": "needle", "type": "txt", "glob": "*.txt"},
    {"pattern": "needle", "path": "deep/er"},
    {"pattern": "needle", "path": "crlf.txt", "output_mode": "content"},
    {"pattern": r"one\r?\ntwo", "multiline": True, "output_mode": "content", "-C": 1},
    {"pattern": r"^needle.*?end", "multiline": True, "output_mode": "count"},
    {"pattern": r"^", "multiline": True, "output_mode": "count"},
    {"pattern": r"\n", "multiline": True, "output_mode": "content"},
    {"pattern": "needle", "head_limit": 3, "output_mode": "content"},
]


@needs_rg
@pytest.mark.parametrize("query", AGREEMENT_QUERIES, ids=lambda q: " ".join(map(str, q.values())))
async def test_both_engines_agree(ws: Path, ctx: ToolContext, query: dict[str, Any]) -> None:
    files = {
        ".gitignore": "*.log\nskip/\n",
        ".hidden/needle.md": "needle\n",
        ".dotfile": "needle\n",
        "a.md": "# needle\n\ntext\nneedle end\nmore\n",
        "b.txt": "no\nneedle\nneedle\n",
        "crlf.txt": "one\r\ntwo needle\r\n",
        "skip/x.md": "needle\n",
        "trace.log": "needle\n",
        "deep/er/c.md": "start\nneedle\nmiddle\n\nneedle multiple needle\nend",
        "deep/er/.gitignore": "*.txt\n",
        "deep/er/d.txt": "needle\n",
        "deep/empty.md": "",
        "unicode.md": "naïve needle ✓\n",
    }
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(text.encode())
    call = GrepInput.model_validate(query)

    with_rg = await GrepTool(use_ripgrep=True).run(call, ctx)
    with_python = await GrepTool(use_ripgrep=False).run(call, ctx)

    assert with_python.output == with_rg.output
    assert with_rg.output != "No matches found"
