"""Which written files a verifier checks, and which lines an edit touched."""

from __future__ import annotations

from pathlib import Path

from toolrun.tools.builtins._diff import structured_patch
from toolrun.verify.files import matching, pattern_error, same_file, touched_lines, written


def test_added_and_changed_lines_are_touched_not_their_context() -> None:
    old = "".join(f"l{i}\n" for i in range(1, 21))
    new = old.replace("l5\n", "l5\nadded\n").replace("l15\n", "changed\n")
    # new file: line 6 is "added", line 16 (old 15) is "changed"
    assert touched_lines(structured_patch(old, new)) == {6, 16}


def test_a_removal_touches_the_line_now_in_its_place() -> None:
    old = "a\nb\nc\nd\n"
    assert touched_lines(structured_patch(old, "a\nc\nd\n")) == {2}
    assert touched_lines(structured_patch(old, "a\nb\nc\n")) == {4}  # after the last line


def test_a_new_file_is_touched_everywhere() -> None:
    assert touched_lines(structured_patch("", "x\ny\n")) == {1, 2}


def test_patterns_are_gitignore_style_relative_to_the_workspace(tmp_path: Path) -> None:
    files = [str(tmp_path / p) for p in ("a.py", "pkg/b.py", "pkg/gen/c.py", "d.txt")]
    assert matching(("*.py", "!**/gen/**"), files, tmp_path) == files[:2]
    assert matching(("/pkg/**/*.py",), files, tmp_path) == files[1:3]
    assert matching(("*.txt",), files, tmp_path) == files[3:]


def test_a_file_outside_the_workspace_is_never_matched(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    outside = [str(tmp_path / "x.py"), str(tmp_path / "wsx" / "y.py"), "/etc/z.py"]
    assert matching(("*.py", "**", "/**"), outside, ws) == []


def test_bad_patterns_are_named() -> None:
    assert pattern_error("*.py") is None
    for bad in ("", "  ", "!", "\\", "[z-a].py"):
        assert pattern_error(bad) is not None


def test_written_reads_each_tools_metadata(tmp_path: Path) -> None:
    hunks = structured_patch("a\n", "a\nb\n")
    edit = written("Edit", {"path": str(tmp_path / "a.py"), "structuredPatch": hunks}, None)
    assert edit.files == {str(tmp_path / "a.py"): {2}}
    big = written("Write", {"path": str(tmp_path / "big.py")}, None)  # no diff: every line
    assert big.files == {str(tmp_path / "big.py"): None}
    patch = written(
        "ApplyPatch",
        {
            "written": [str(tmp_path / "n.py"), str(tmp_path / "m.py")],
            "deleted": [str(tmp_path / "gone.py")],
            "patches": [
                {"filePath": "n.py", "structuredPatch": hunks},
                {"filePath": "m.py"},
                {"filePath": "gone.py", "structuredPatch": []},
            ],
        },
        lambda p: tmp_path / p,
    )
    assert patch.files == {str(tmp_path / "n.py"): {2}, str(tmp_path / "m.py"): None}


def test_reported_paths_relative_absolute_and_file_uris_meet(tmp_path: Path) -> None:
    target = str(tmp_path / "a b.py")
    for spelled in ("a b.py", "./a b.py", target, (tmp_path / "a b.py").as_uri(), "x/../a b.py"):
        assert same_file(spelled, tmp_path) == target
