"""#27 items 5 and 8: a file edit's diff is bounded, and an edit that was made is never
reported as an error. Diffs of lines that repeat (quadratic and worse under difflib) are
aligned by Myers' algorithm on the part that differs, within a step budget (past it: one
correct change, said to be so); the bench (bench/diff.py) has the times."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from tests.faults.support_a import results, toolrun, write_plan
from toolrun.tools.builtins._align import MAX_ALIGN_STEPS
from toolrun.tools.builtins._diff import MAX_DIFF_BYTES, diff_metadata, structured_patch


def apply(old: str, hunks: list[dict[str, object]]) -> list[str]:
    """``old``'s lines with ``hunks`` applied, checking every context and removed line."""
    lines, out, at = old.splitlines(), [], 0
    for h in hunks:
        start = int(h["oldStart"]) - (1 if h["oldLines"] else 0)  # type: ignore[call-overload]
        out += lines[at:start]
        at = start
        for line in h["lines"]:  # type: ignore[attr-defined]
            if line[0] in " -":
                assert lines[at] == line[1:]
                at += 1
            if line[0] in " +":
                out.append(line[1:])
    return out + lines[at:]


IDENTICAL = {
    "200 KB": "x\n" * 100_000,
    "600 KB": "x\n" * 300_000,
    "blank lines": "\n" * 300_000,
    "CRLF": "same\r\n" * 100_000,
}


@pytest.mark.parametrize("name", list(IDENTICAL))
def test_a_one_token_edit_among_identical_lines_is_one_small_hunk(name: str) -> None:
    old = IDENTICAL[name]
    middle = len(old) // 2
    new = old[:middle] + "token" + old[middle:]
    meta = diff_metadata("f", old, new)
    (hunk,) = meta["structuredPatch"]
    assert len(hunk["lines"]) <= 2 * 3 + 3 and "diff_note" not in meta
    assert apply(old, meta["structuredPatch"]) == new.splitlines()


@pytest.mark.parametrize("every", [2, 7, 10])
def test_changes_all_over_identical_lines_stay_correct_past_the_budget(every: int) -> None:
    old = "x\n" * 60_000
    new = "".join("y\n" if i % every == 0 else "x\n" for i in range(60_000))
    hunks = structured_patch(old, new)
    assert apply(old, hunks) == new.splitlines()


def test_past_the_budget_the_diff_says_it_is_not_the_shortest() -> None:
    count = MAX_ALIGN_STEPS // 10
    old = "".join(f"a{i}\n" for i in range(count))
    new = "".join(f"b{i}\n" if i % 2 else f"a{i}\n" for i in range(count))
    meta = diff_metadata("f", old, new)
    assert "not the shortest diff" in meta.get("diff_note", "") or "diff_omitted" in meta
    if "structuredPatch" in meta:
        assert apply(old, meta["structuredPatch"]) == new.splitlines()


def test_a_diff_longer_than_the_cap_is_omitted_with_a_note() -> None:
    old = "".join(f"{i}\n" for i in range(MAX_DIFF_BYTES // 4))
    meta = diff_metadata("f", old, old.replace("1", "one"))
    assert meta == {"diff_omitted": "it is over 1 MiB"}


@pytest.mark.parametrize("dry", [False, True], ids=["exec", "dry-run"])
def test_a_one_token_edit_in_600_kb_of_identical_lines_runs_with_its_diff(
    tmp_path: Path, dry: bool
) -> None:
    half = "x\n" * 150_000
    (tmp_path / "same.txt").write_text(half + "token\n" + half)
    write_plan(tmp_path, [{"id": "e", "tool": "Edit", "input": {"file_path": "same.txt", "old_string": "token", "new_string": "TOKEN"}}])
    args = ["exec", "plan.json", "--mode", "acceptEdits", "--diff", "--quiet"]
    done = toolrun(tmp_path, *args, *(["--dry-run"] if dry else []))
    assert done.returncode == 0, done.stderr
    assert "@@ -147,7 +147,7 @@" in done.stdout or "-token\n+TOKEN" in done.stdout
    assert "-token\n+TOKEN\n" in done.stdout
    assert (tmp_path / "same.txt").read_text().count("TOKEN") == (0 if dry else 1)


def limit_memory(megabytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))


@pytest.mark.parametrize(
    "call",
    [
        {"tool": "Edit", "input": {"file_path": "big.txt", "old_string": "ab", "new_string": "cd", "replace_all": True}},
        {"tool": "MultiEdit", "input": {"file_path": "big.txt", "edits": [{"old_string": "ab", "new_string": "cd", "replace_all": True}]}},
        {"tool": "Edit", "input": {"file_path": "big.txt", "old_string": "ab\n", "new_string": "c\nd\n", "replace_all": True}},
        {"tool": "Write", "input": {"file_path": "big.txt", "content": "cd\n" * 3_500_000}},
    ],
    ids=["edit-replace-all", "multiedit", "edit-more-lines", "write"],
)
def test_a_made_edit_is_ok_under_ulimit_v_with_its_diff_omitted(tmp_path: Path, call: dict[str, object]) -> None:
    (tmp_path / "big.txt").write_text("ab\n" * 3_500_000)  # 10 MB, 3.5 million lines
    write_plan(tmp_path, [{"id": "e", **call}])
    done = toolrun(
        tmp_path, "exec", "plan.json", "--mode", "acceptEdits", "--format", "json", "--no-journal",
        preexec=lambda: limit_memory(400),
    )
    assert "Traceback" not in done.stderr, done.stderr
    (result,) = results(done)
    assert (result["status"], result["error"]) == ("ok", None)
    assert "diff omitted:" in result["output"]
    assert (tmp_path / "big.txt").read_text().startswith("c")  # it was made
