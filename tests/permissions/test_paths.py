"""Path patterns, normalisation, symlinks (real files), boundary and protection."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.permissions.conftest import Tree, decide
from toolrun.permissions.paths import (
    Boundary,
    ResolvedPath,
    compile_path_pattern,
    critical_reason,
    normalise,
    protected_reason,
    resolve,
)

WS = ("/w",)
HOME = ("/h",)


def matches(pattern: str, path: str, behavior: str = "deny", root: str = "/r") -> bool:
    compiled = compile_path_pattern(
        pattern,
        behavior=behavior,  # type: ignore[arg-type]
        workspace=WS,
        source_root=(root,),
        home=HOME,
    )
    return compiled.matches(path)


@pytest.mark.parametrize(
    ("pattern", "behavior", "path", "expected"),
    [
        (".env", "deny", "/w/.env", True),
        (".env", "deny", "/w/a/b/.env", True),
        (".env", "deny", "/elsewhere/.env", True),
        (".env", "allow", "/elsewhere/.env", False),
        (".env", "allow", "/w/a/.env", True),
        (".env", "deny", "/w/.envrc", False),
        ("./.env", "deny", "/w/a/.env", False),
        ("src/**", "allow", "/w/src/a/b.py", True),
        ("src/**", "allow", "/w/lib/src/a.py", False),
        ("src/**", "deny", "/w/lib/src/a.py", True),
        ("src/*.py", "deny", "/w/src/a.py", True),
        ("src/*.py", "deny", "/w/src/x/a.py", False),
        ("src/**/*.py", "allow", "/w/src/x/y/a.py", True),
        ("src/**/*.py", "allow", "/w/src/a.py", True),
        ("/cfg/*.json", "deny", "/r/cfg/a.json", True),
        ("/cfg/*.json", "deny", "/cfg/a.json", False),
        ("//etc/**", "deny", "/etc/passwd", True),
        ("//etc/**", "deny", "/w/etc/passwd", False),
        ("~/.ssh/**", "deny", "/h/.ssh/id_rsa", True),
        ("~", "deny", "/h/x", True),
        ("secret", "deny", "/w/secret/k", True),
        ("build/", "allow", "/w/a/build/x.o", True),
        ("*.pem", "deny", "/w/keys/a.pem", True),
        ("file?.txt", "deny", "/w/file1.txt", True),
        ("file[0-9].txt", "deny", "/w/file7.txt", True),
        ("file[!0-9].txt", "deny", "/w/file7.txt", False),
        ("../shared/**", "allow", "/shared/x", True),
        ("a\\*b", "deny", "/w/a*b", True),
        ("a\\*b", "deny", "/w/axb", False),
        ("**", "allow", "/w/anything/at/all", True),
        ("**", "allow", "/elsewhere", False),
    ],
)
def test_pattern(pattern: str, behavior: str, path: str, expected: bool) -> None:
    assert matches(pattern, path, behavior) is expected


def test_dotdot_after_glob_is_an_error() -> None:
    with pytest.raises(ValueError, match="wildcard"):
        matches("src/*/../x", "/w/x")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("//etc/passwd", "/etc/passwd"),
        ("/a/./b/../c", "/a/c"),
        ("///x", "/x"),
        ("/a/b/../../..", "/"),
    ],
)
def test_normalise(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


def test_resolve_relative_and_home() -> None:
    assert resolve("a/../b", "/w", "/h").link == "/w/b"
    assert resolve("~/x", "/w", "/h").link == "/h/x"
    assert resolve("~", "/w", "/h").link == "/h"


def test_resolve_symlinks(tree: Tree) -> None:
    path = resolve("link_out", str(tree.ws), str(tree.home))
    assert path.link == str(tree.ws / "link_out")
    assert path.target == str(tree.other / "secret.txt")
    assert path.via_symlink
    through_dir = resolve("srclink/a.py", str(tree.ws), str(tree.home))
    assert through_dir.target == str(tree.ws / "src" / "a.py")
    missing = resolve("escape_dir/new/file.txt", str(tree.ws), str(tree.home))
    assert missing.target == str(tree.other / "new" / "file.txt")


def test_boundary_needs_link_and_target(tree: Tree) -> None:
    boundary = Boundary.of([str(tree.ws)])
    assert boundary.contains(resolve("src/a.py", str(tree.ws), str(tree.home)))
    assert not boundary.contains(resolve("link_out", str(tree.ws), str(tree.home)))
    assert not boundary.contains(resolve("/etc/passwd", str(tree.ws), str(tree.home)))
    assert boundary.contains(resolve("link_in", str(tree.ws), str(tree.home)))


_SEGMENT = st.sampled_from(["w", "x", "w2", "a", "..", "."])
_PATH = st.lists(_SEGMENT, max_size=4).map(lambda parts: normalise("/" + "/".join(parts)))


@given(
    roots=st.lists(_PATH, min_size=1, max_size=3),
    link=_PATH,
    target=_PATH,
)
@example(roots=["/w", "/w/a"], link="/w/a/x", target="/x")
@example(roots=["/"], link="/w", target="/x")
def test_placed_is_contains_and_the_links_root(
    roots: list[str], link: str, target: str
) -> None:
    """The resolver's one look-up of where a path is gives what the two general ones give."""
    boundary = Boundary(tuple(dict.fromkeys(roots)))
    for path in (ResolvedPath(link, link, link), ResolvedPath(link, link, target)):
        assert boundary.placed(path) == (boundary.contains(path), boundary.root_of(path.link))


def test_boundary_through_symlinked_workspace(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    boundary = Boundary.of([str(tmp_path / "alias")])
    assert boundary.contains(resolve("src/a.py", str(tmp_path / "alias"), "/h"))


@pytest.mark.parametrize(
    ("path", "protected"),
    [
        ("/w/.git/config", True),
        ("/w/sub/.git/hooks/x", True),
        ("/w/.claude/settings.json", True),
        ("/w/.claude/worktrees/a/b.py", False),
        ("/w/.toolrun/runs/x", True),
        ("/w/.vscode/settings.json", True),
        ("/h/.bashrc", True),
        ("/h/.zshrc", True),
        ("/w/toolrun.yaml", True),
        ("/w/.mcp.json", True),
        ("/w/src/gitignore.py", False),
        ("/w/.github/workflows/ci.yml", False),
    ],
)
def test_protected(path: str, protected: bool) -> None:
    boundary = Boundary(("/w",))
    reason = protected_reason(resolve(path, "/", "/h"), boundary)
    assert (reason is not None) is protected


def test_protected_only_below_the_workspace_root() -> None:
    # A workspace that itself lives below a directory named like a protected one.
    boundary = Boundary(("/x/.claude/projects/p",))
    path = resolve("/x/.claude/projects/p/src/a.py", "/", "/h")
    assert protected_reason(path, boundary) is None


@pytest.mark.parametrize(
    ("path", "critical"),
    [("/", True), ("/usr", True), ("/h", True), ("/w", True), ("/w/..", True),
     ("/w/build", False), ("/h/other/x", False)],
)
def test_critical(path: str, critical: bool) -> None:
    why = critical_reason(resolve(path, "/", "/h"), home="/h", anchors=["/w"])
    assert (why is not None) is critical


# --------------------------------------------------------------------------- via the engine


def test_allow_needs_link_and_target(tree: Tree) -> None:
    # link_in -> src/a.py: both inside, both matched by Read(**): allowed.
    d = decide(tree, "Read", {"file_path": "link_in"}, allow=("Read(link_in)", "Read(src/**)"),
               mode="dontAsk")
    assert d.decision == "allow"
    # Only the link is matched: the rule does not apply (and dontAsk turns that into deny)...
    d = decide(tree, "Edit", {"file_path": "link_in"}, allow=("Edit(link_in)",),
               mode="dontAsk")
    assert d.decision == "deny"
    assert any("must match the link and its target" in r.why for r in d.rules)


def test_deny_needs_either(tree: Tree) -> None:
    assert decide(tree, "Read", {"file_path": "link_in"},
                  deny=("Read(link_in)",)).decision == "deny"
    assert decide(tree, "Read", {"file_path": "link_in"},
                  deny=("Read(src/a.py)",)).decision == "deny"


def test_boundary_trace_shows_symlink_target(tree: Tree) -> None:
    d = decide(tree, "Read", {"file_path": "link_out"})
    (check,) = d.boundary
    assert check.path == str(tree.ws / "link_out")
    assert check.resolved == str(tree.other / "secret.txt")
    assert check.inside is False


@pytest.mark.parametrize(
    "path",
    ["src/a.py", "link_out", "link_in", "srclink/a.py", "srclink", "escape_dir/new/x.txt",
     "missing/x/y", ".", "src/../link_in", "src/a.py/below"],
)
def test_realpath_below_a_known_root_matches_os(tree: Tree, path: str) -> None:
    import os

    from toolrun.permissions.paths import absolute, realpath

    Boundary.of([str(tree.ws)])  # makes the workspace a known root
    link = absolute(path, str(tree.ws), str(tree.home))
    assert realpath(link) == os.path.realpath(link)


# ---------------------------------------------------------------- gitignore, through pathspec

_SEGMENTS = ["a", "b", ".env", "x.py", "[ab]", "[!a]*", "*.py", "?", "**", "c*d", "k\\*"]
_NAMES = ["a", "b", ".env", "x.py", "y.py", "cd", "cxd", "k*", "kz", "z"]


@example(pattern=["a", "**"], path=["a"])
@given(
    pattern=st.lists(st.sampled_from(_SEGMENTS), min_size=2, max_size=4),
    path=st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5),
)
def test_anchored_patterns_match_as_gitignore_does(pattern: list[str], path: list[str]) -> None:
    """A pattern with a slash hangs from the workspace and matches what git's would,
    plus everything below a match (a denied directory denies its files)."""
    import pathspec

    text = "/".join(pattern)
    # "a/**" also covers a itself in toolrun (as "a" does), where git's reaches only below
    base = list(pattern)
    while base and base[-1] == "**":
        base.pop()
    spec = pathspec.GitIgnoreSpec.from_lines(["/" + "/".join(base)] if base else ["*"])
    rel = "/".join(path)
    by_git = any(spec.match_file("/".join(path[:n])) for n in range(1, len(path) + 1))
    assert matches(text, "/w/" + rel, behavior="allow") == by_git


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # a "]" right after "[" or "[!" belongs to the class
        ("x[]]y", "/w/x]y", True),
        ("x[!]]y", "/w/xay", True),
        ("x[!]]y", "/w/x]y", False),
        # gitignore trims a trailing space; a rule naming such a file keeps it
        ("notes ", "/w/notes ", True),
        ("notes ", "/w/notes", False),
        # "!" and "#" mean negation and comment only at the start of a .gitignore line
        ("!important", "/w/!important", True),
        ("#draft", "/w/d/#draft", True),
    ],
)
def test_classes_spaces_and_gitignore_markers(
    pattern: str, path: str, expected: bool
) -> None:
    assert matches(pattern, path) is expected
