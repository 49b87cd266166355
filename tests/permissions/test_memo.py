"""Remembered decisions: the same call again is answered from memory, and only while
everything the decision read from the system (symlinks, glob matches, directories, git
repositories) still reads the same; otherwise it is decided afresh.

The differential test drives two engines over random rules, calls and changes to the
files: one remembers decisions, the other (``memo=False``) decides every call from
scratch. Their decisions, traces included, must be the same at every step.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.permissions.conftest import make_config
from toolrun.permissions import Decision, PermissionEngine

# {out} is a directory outside the workspace
RULES = [
    "Read(.env)", "Read(**/.env)", "Read(*.pem)", "Read(src/**)", "Read(//{out}/**)",
    "Read(lnk)", "Edit(src/**)", "Edit(lnk)", "Edit(out.txt)", "Edit(//{out}/**)",
    "Write(out.txt)", "Bash(cat *)", "Bash(grep *)", "Bash(git *)", "Bash(rm *)",
    "Bash(echo *)", "Bash(ls *)", "Bash(find *)", "Read", "Edit", "Glob", "Grep",
]  # fmt: skip
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "lnk"}),
    ("Read", {"file_path": "lnk/a.py"}),
    ("Read", {"file_path": "src/.env"}),
    ("Edit", {"file_path": "lnk", "old_string": "a", "new_string": "b"}),
    ("Write", {"file_path": "out.txt", "content": "x"}),
    ("Write", {"file_path": "src/k.pem", "content": "x"}),
    ("Glob", {"pattern": "lnk/*"}),
    ("Grep", {"pattern": "x", "path": "lnk"}),
    ("LS", {"path": "sub"}),
] + [
    ("Bash", {"command": c})
    for c in (
        "cat lnk", "cat src/*", "cat lnk/*.py", "grep -r x src", "grep -r x .", "rg x sub",
        "rm -rf lnk", "rm -rf sub/*", "echo hi > out.txt", "echo hi > lnk", "ls lnk/",
        "cat ~nosuchuser9/x", "git status", "git -C sub log", "cd sub && git diff",
        "find src -name x", "cd lnk && cat a.py", "cat < lnk", "touch src/new.py",
    )
]  # fmt: skip
#: Changes to the workspace between calls.
CHANGES = [
    "link-file", "link-env", "link-out", "link-dir", "link-outdir", "unlink", "mkdir-lnk",
    "add-env", "remove-env", "add-pem", "add-git", "remove-git", "out-link", "out-file",
]  # fmt: skip
MODES = [None, "acceptEdits", "plan", "bypassPermissions", "dontAsk"]


@contextmanager
def _workspace() -> Iterator[tuple[Path, Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        ws, out = root / "ws", root / "out"
        for d in (ws / "src", ws / "sub", out):
            d.mkdir(parents=True)
        for f in (ws / "src" / "a.py", ws / "sub" / "b.py", ws / ".env", out / "secret"):
            f.write_text("x\n")
        yield ws, out


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _change(ws: Path, out: Path, change: str) -> None:
    lnk = ws / "lnk"
    targets = {"link-file": ws / "src" / "a.py", "link-env": ws / ".env",
               "link-out": out / "secret", "link-dir": ws / "src", "link-outdir": out}
    if change in targets:
        _remove(lnk)
        lnk.symlink_to(targets[change])
    elif change == "unlink":
        _remove(lnk)
    elif change == "mkdir-lnk":
        _remove(lnk)
        lnk.mkdir()
        (lnk / "a.py").write_text("x\n")
    elif change == "add-env":
        (ws / "src" / ".env").write_text("x\n")
    elif change == "remove-env":
        _remove(ws / "src" / ".env")
    elif change == "add-pem":
        (ws / "src" / "k.pem").write_text("x\n")
    elif change == "add-git":
        (ws / "sub" / ".git").mkdir(exist_ok=True)
    elif change == "remove-git":
        _remove(ws / "sub" / ".git")
    elif change == "out-link":
        _remove(ws / "out.txt")
        (ws / "out.txt").symlink_to(out / "secret")
    elif change == "out-file":
        _remove(ws / "out.txt")
        (ws / "out.txt").write_text("x\n")


#: A step: a call of the example's few calls (so calls repeat), or a change to the files.
step_st = st.one_of(
    st.tuples(st.just("call"), st.integers(0, 2)),
    st.tuples(st.just("change"), st.sampled_from(CHANGES)),
)
call_st = st.tuples(st.integers(0, len(CALLS) - 1), st.sampled_from(MODES), st.booleans())
rules_st = st.lists(
    st.tuples(st.sampled_from(["allow", "ask", "deny"]), st.sampled_from(RULES)), max_size=8
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=rules_st,
    calls=st.lists(call_st, min_size=3, max_size=3),
    steps=st.lists(step_st, min_size=1, max_size=30),
)
def test_remembered_decisions_equal_fresh_ones(
    rules: list[tuple[str, str]],
    calls: list[tuple[int, str | None, bool]],
    steps: list[tuple[Any, ...]],
) -> None:
    with _workspace() as (ws, out):
        texts = {b: [t.format(out=str(out).lstrip("/")) for bb, t in rules if bb == b]
                 for b in ("allow", "ask", "deny")}
        config = make_config(ws, allow=texts["allow"], ask=texts["ask"], deny=texts["deny"])
        remembering = PermissionEngine(config)
        fresh = PermissionEngine(config, memo=False)
        for step in steps:
            if step[0] == "change":
                _change(ws, out, step[1])
                continue
            index, mode, in_sub = calls[step[1]]
            tool, call_input = CALLS[index]
            cwd = ws / "sub" if in_sub else None
            want = fresh.decide(tool, dict(call_input), cwd=cwd, mode=mode).to_json()
            for _ in range(2):  # (remembered from the second time on)
                got = remembering.decide(tool, dict(call_input), cwd=cwd, mode=mode).to_json()
                assert got == want, (tool, call_input, mode, cwd)


def _remembered(engine: PermissionEngine, tool: str, call_input: dict[str, Any],
                **kw: Any) -> Decision:
    """Decide a call twice: an engine remembers a decision from a call's second time on."""
    engine.decide(tool, call_input, **kw)
    return engine.decide(tool, call_input, **kw)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x\n")
    (ws / ".env").write_text("SECRET=1\n")
    return ws


def test_the_same_call_again_is_answered_from_memory(ws: Path) -> None:
    engine = PermissionEngine(make_config(ws, allow=["Bash(npm test)"]))
    first = engine.decide("Bash", {"command": "npm test"})
    second = engine.decide("Bash", {"command": "npm test"})
    assert second is not first  # a call seen once may never come again: not kept
    assert engine.decide("Bash", {"command": "npm test"}) is second
    assert _remembered(engine, "Bash", {"command": "npm test"}, mode="plan") is not second


def test_a_retargeted_symlink_is_decided_again(ws: Path) -> None:
    engine = PermissionEngine(make_config(ws, deny=["Read(.env)"], allow=["Read(src/**)"]))
    (ws / "src" / "notes").symlink_to(ws / "src" / "a.py")
    assert _remembered(engine, "Read", {"file_path": "src/notes"}).decision == "allow"
    (ws / "src" / "notes").unlink()
    (ws / "src" / "notes").symlink_to(ws / ".env")
    decision = engine.decide("Read", {"file_path": "src/notes"})
    assert decision.decision == "deny"
    assert "Read(.env)" in decision.reason


def _parent_becomes_link(ws: Path) -> None:
    (ws / "d").rmdir()
    (ws / "d").symlink_to("/etc")


def _new_build_tree(ws: Path) -> None:
    (ws / "build").mkdir()
    (ws / "build" / ".env").write_text("x\n")


@pytest.mark.parametrize(
    ("deny", "allow", "command", "change", "before", "after"),
    [
        # a directory on the way to a redirect target becomes a symlink
        (["Edit(//etc/**)"], [], "echo x > d/hosts", _parent_becomes_link, "ask", "deny"),
        # a file a glob now matches
        (["Read(*.pem)"], ["Bash(cat *)"], "cat src/*",
         lambda ws: (ws / "src" / "server.pem").write_text("key\n"), "allow", "deny"),
        # a guarded file new in a tree read recursively
        (["Read(**/.env)"], ["Bash(grep *)"], "grep -r TOKEN src",
         lambda ws: (ws / "src" / ".env").write_text("TOKEN=1\n"), "allow", "ask"),
        # `grep -r x build` reads a tree only once build is a directory
        (["Read(**/.env)"], ["Bash(grep *)"], "grep -r x build",
         _new_build_tree, "allow", "ask"),
    ],
)
def test_a_command_is_decided_again_when_its_files_change(
    ws: Path,
    deny: list[str],
    allow: list[str],
    command: str,
    change: Callable[[Path], object],
    before: str,
    after: str,
) -> None:
    (ws / "d").mkdir()
    engine = PermissionEngine(make_config(ws, deny=deny, allow=allow))
    assert _remembered(engine, "Bash", {"command": command}).decision == before
    change(ws)
    assert engine.decide("Bash", {"command": command}).decision == after


def test_a_repository_that_appears_is_decided_again(ws: Path) -> None:
    # git in another repository than the workspace's is not read-only (its config runs programs)
    (ws / "sub").mkdir()
    engine = PermissionEngine(make_config(ws))
    assert _remembered(engine, "Bash", {"command": "git status"}, cwd=ws / "sub").decision == (
        "allow"
    )
    (ws / "sub" / ".git").mkdir()
    assert engine.decide("Bash", {"command": "git status"}, cwd=ws / "sub").decision == "ask"


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "call_input",
    [
        {"file_path": ("src/a.py",)},  # a tuple is not JSON data
        {"file_path": "src/a.py", 1: "x"},  # nor is a key that is not a string
        {"file_path": "src/a.py", "content": "x" * 100_000},  # too big to keep
        {"file_path": "src/a.py", "meta": _nested(5000)},  # too deep to key
    ],
)
def test_inputs_that_are_not_json_data_are_decided_every_time(
    ws: Path, call_input: dict[Any, Any]
) -> None:
    engine = PermissionEngine(make_config(ws))
    assert _remembered(engine, "Read", call_input) is not engine.decide("Read", call_input)


def test_values_equal_in_python_are_different_calls(ws: Path) -> None:
    # True == 1 == 1.0 in Python, but a rule reads them as "true", "1" and "1.0"
    engine = PermissionEngine(make_config(ws, deny=["Mytool(count:1)"]))
    assert _remembered(engine, "Mytool", {"count": True}).decision != "deny"
    assert _remembered(engine, "Mytool", {"count": 1}).decision == "deny"
    assert engine.decide("Mytool", {"count": 1.0}).decision != "deny"


def test_the_home_directory_lookup_of_a_user_is_read_again(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pwd
    from types import SimpleNamespace

    engine = PermissionEngine(make_config(ws, deny=["Read(//etc/**)"], allow=["Bash(cat *)"]))
    call = {"command": "cat ~svc9/passwd"}
    assert _remembered(engine, "Bash", call).decision == "allow"  # no such user: a file ./~svc9

    real = pwd.getpwnam

    def getpwnam(name: str) -> Any:
        return SimpleNamespace(pw_dir="/etc") if name == "svc9" else real(name)

    monkeypatch.setattr(pwd, "getpwnam", getpwnam)
    assert engine.decide("Bash", call).decision == "deny"


def test_a_non_remembering_engine_decides_every_call(ws: Path) -> None:
    engine = PermissionEngine(make_config(ws), memo=False)
    assert _remembered(engine, "Bash", {"command": "ls"}) is not engine.decide(
        "Bash", {"command": "ls"}
    )
