"""Paths resolved as the kernel resolves them, and bash's ``cd`` as bash does it (#24).

The kernel walks ``src/link/../ws`` as link -> its target -> ``..`` of *that* -> ``ws``;
folding ``..`` on the string first (``<ws>/src/ws``) decided on a path nothing opens.
Checked three ways: against ``os.path.realpath`` and ``stat`` on random trees of
symlinks, against real bash for ``cd`` (logical, ``-P``, ``set -P``), and through the
engine for each attack class with several spellings (each row names its source).

Layout of the shared tree (``T`` is a temporary directory)::

    T/ws/                 the workspace
        .env  docs/a.md  README.md  src/main.py  a/b/
        src/link -> T/outside      (``src/link/..`` is T, ``src/link/../ws`` the workspace)
        deep -> a/b                (inside: ``deep/..`` is ws/a to the kernel, ws to cd)
        vendor/lib/.git  sub -> vendor/lib/src   (a nested repository behind a symlink)
    T/outside/secret.txt  T/outside/home/ ($HOME)
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.permissions.conftest import make_config
from toolrun.permissions import PermissionEngine
from toolrun.permissions.bash import analyse
from toolrun.permissions.paths import normalise, physical, realpath, resolve, unsettled
from toolrun.permissions.shellpaths import cd_destinations, track_places
from toolrun.permissions.wordpaths import word_path
from toolrun.permissions.words import Word
from toolrun.tools.base import ToolContext

DENY = ("Read(./.env)", "Edit(./docs/**)")


@dataclass(frozen=True)
class Scene:
    tmp: Path
    ws: Path
    outside: Path
    home: Path

    def engine(self, *deny: str) -> PermissionEngine:
        return PermissionEngine(make_config(self.ws, deny=deny or DENY))

    def decide(self, command: str, mode: str = "default", *deny: str) -> str:
        return self.engine(*deny).decide("Bash", {"command": command}, mode=mode).decision


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    tmp = tmp_path_factory.mktemp("physical").resolve()
    ws, outside = tmp / "ws", tmp / "outside"
    home = outside / "home"
    for d in (ws / "docs", ws / "src", ws / "a" / "b", ws / "vendor" / "lib" / "src", home):
        d.mkdir(parents=True)
    for f, text in ((ws / ".env", "SECRET=1\n"), (ws / "docs" / "a.md", "docs\n"),
                    (ws / "README.md", "# r\n"), (ws / "src" / "main.py", "x\n"),
                    (outside / "secret.txt", "TOP\n")):
        f.write_text(text)
    (ws / "src" / "link").symlink_to(outside)
    (ws / "deep").symlink_to("a/b")
    (ws / "sub").symlink_to("vendor/lib/src")
    for repo in (ws, ws / "vendor" / "lib"):
        subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    return Scene(tmp, ws, outside, home)


@pytest.fixture(autouse=True)
def _scene_home(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(scene.home))


# --------------------------------------------------------------------------- physical()


def test_a_dotdot_after_a_symlink_leaves_from_its_target(scene: Scene) -> None:
    # path_resolution(7): each component is looked up in the directory the previous led to
    assert physical(f"{scene.ws}/src/link/../ws") == str(scene.ws)
    assert physical(f"{scene.ws}/src/link/../ws/.env") == f"{scene.ws}/.env"
    assert physical(f"{scene.ws}/src/link/..") == str(scene.tmp)


def test_the_written_form_is_kept_where_the_string_and_the_kernel_agree(scene: Scene) -> None:
    assert physical(f"{scene.ws}/src/../README.md") == f"{scene.ws}/README.md"
    # a symlink after the last `..` stays as written: the target is realpath's business
    path = resolve("src/../src/link/secret.txt", str(scene.ws), str(scene.home))
    assert path.link == f"{scene.ws}/src/link/secret.txt"
    assert path.target == f"{scene.outside}/secret.txt"


def test_a_dotdot_after_a_missing_name_is_unsettled(scene: Scene) -> None:
    # the kernel cannot walk it now; what a command makes there decides where it leads
    assert unsettled(f"{scene.ws}/x/../ws") == f"{scene.ws}/x"
    assert unsettled(f"{scene.ws}/src/../README.md") is None
    assert unsettled(f"{scene.ws}/README.md") is None


NAMES = ["a", "b", "f", "l", "m", "..", "."]
TARGETS = ["..", "../..", "a", "a/b", "f", "../a", "nowhere", "l", "/", "ABS"]


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    links=st.lists(st.tuples(st.sampled_from(["l", "a/l", "a/b/l", "m"]),
                             st.sampled_from(TARGETS)), max_size=4),
    paths=st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=7),
                   min_size=1, max_size=6),
)
def test_resolution_is_what_the_kernel_opens(
    links: list[tuple[str, str]], paths: list[list[str]]
) -> None:
    """Random trees of directories, files and symlinks (relative, absolute, up, loops):
    the target is ``os.path.realpath`` of the path as written, and where the kernel opens
    a path, the link form and the target open the very same file."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp) + "/r"
        os.makedirs(f"{root}/a/b")
        os.makedirs(f"{tmp}/elsewhere/a")
        Path(f"{root}/f").write_text("f\n")
        Path(f"{root}/a/b/f").write_text("abf\n")
        for where, target in links:
            if not os.path.lexists(f"{root}/{where}"):
                os.symlink(f"{tmp}/elsewhere" if target == "ABS" else target, f"{root}/{where}")
        for parts in paths:
            written = root + "/" + "/".join(parts)
            path = resolve(written, "/", "/nohome")
            assert path.target == normalise(os.path.realpath(written)), written
            if ".." not in parts:
                assert path.link == normalise(written)
            try:
                opened = os.stat(written)
            except OSError:
                continue  # the kernel refuses it (missing, a loop, a file as a folder)
            for form in (path.link, path.target):
                seen = os.stat(form)
                assert (seen.st_dev, seen.st_ino) == (opened.st_dev, opened.st_ino), (
                    written, form)


# --------------------------------------------------------------------------- cd, against bash

CD_TARGETS = ["src/link/..", "src/link/../ws", "src/link/../..", "deep/..", "deep/../..",
              "src/link/../ws/src/link/..", "src/../deep/..", "a/b/../..", "src/link",
              "nowhere/..", "src/link/nowhere/..", "..", "/", "src", "deep"]


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    before=st.sampled_from(["", "set -P; ", "set -o physical; ", "set -P; set +P; ",
                            "cd src/link; ", "cd deep; ", "cd -P deep; "]),
    option=st.sampled_from(["", "-P ", "-L ", "-LP ", "-PL "]),
    target=st.sampled_from(CD_TARGETS),
)
def test_cd_goes_where_bash_goes(scene: Scene, before: str, option: str, target: str) -> None:
    """GNU bash manual (cd, set -P): ``$PWD`` after a logical or physical ``cd``, and the
    kernel's directory (``pwd -P``) is where that ``$PWD`` leads."""
    command = f"{before}cd {option}{target} && printf '%s\\n' \"$PWD\" && pwd -P"
    env = {"PATH": os.environ["PATH"], "HOME": str(scene.home)}
    done = subprocess.run(["bash", "-c", command], cwd=scene.ws, capture_output=True,
                          text=True, env=env, check=False)
    commands = analyse(command).commands
    places = track_places(commands, str(scene.ws), str(scene.home))
    predicted = places[-2].pwd  # where printf runs
    if done.returncode != 0:
        return  # cd failed: nothing after it ran, whatever toolrun thought
    pwd, kernel = done.stdout.splitlines()
    assert predicted == pwd, command
    assert realpath(predicted) == kernel


def test_a_relative_path_after_a_logical_cd_is_resolved_from_the_physical_directory(
    scene: Scene,
) -> None:
    # `cd src/link` keeps $PWD=<ws>/src/link, but `../ws` is looked up from T/outside
    commands = analyse("cd src/link; cat ../ws/.env").commands
    place = track_places(commands, str(scene.ws), str(scene.home))[1]
    assert place.pwd == f"{scene.ws}/src/link"
    path = word_path(Word("../ws/.env", "../ws/.env"), place.pwd, str(scene.home))
    assert path is not None and path.link == f"{scene.ws}/.env"


@pytest.mark.parametrize(("command", "physical_after"), [
    ("set -P", True), ("set -o physical", True), ("set -eP", True), ("set -euo physical", True),
    ("set +P", False), ("set +o physical", False), ("shopt -s -o physical", True),
    ("shopt -os physical", True), ("set -e", False), ("set -- -P", False),
    ("(set -P)", None), ("set $X", None),
])  # fmt: skip
def test_the_physical_option_is_followed(
    scene: Scene, command: str, physical_after: bool | None
) -> None:
    # GNU bash manual, The Set Builtin (-P, -o physical) and The Shopt Builtin (-o)
    commands = analyse(f"{command}; true").commands
    places = track_places(commands, str(scene.ws), str(scene.home))
    assert places[-1].physical is physical_after


@pytest.mark.parametrize("command", [
    "pushd -n src", "cd -@ src", "cd a b", "cd -", "popd", "cd $D", "(cd src); cd src/link/..",
    "source x.sh", "$CD src",
])  # fmt: skip
def test_a_cd_toolrun_cannot_follow_leaves_the_directory_unknown(
    scene: Scene, command: str
) -> None:
    commands = analyse(f"{command}; cat README.md").commands
    assert track_places(commands, str(scene.ws), str(scene.home))[-1].pwd is None


def test_a_cd_through_a_missing_name_before_dotdot_is_not_guessed(scene: Scene) -> None:
    cmd = analyse("cd newdir/../src").commands[0]
    # (logical: the `..` check fails; physical: the kernel cannot walk newdir/..)
    assert cd_destinations(cmd, str(scene.ws), str(scene.home), False) is None
    assert cd_destinations(cmd, str(scene.ws), str(scene.home), True) is None
    made = analyse("cd build").commands[0]  # mkdir -p build && cd build: as written
    assert cd_destinations(made, str(scene.ws), str(scene.home), False) == (f"{scene.ws}/build",)


CDPATH = [
    ("CDPATH=src cd link && cat ../ws/.env", "GNU bash manual (CDPATH)"),
    ("CDPATH=src; cd link; cat ../ws/.env", "by hand"),
    ("export CDPATH=src; cd link; cat ../ws/.env", "by hand"),
    ("declare -x CDPATH=$PWD/src; cd link && cat ../ws/.env", "by hand"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "source"), CDPATH)
def test_a_cd_that_cdpath_may_redirect_is_not_followed(
    scene: Scene, command: str, source: str
) -> None:
    # `cd link` goes to src/link when CDPATH=src; toolrun's shell starts without CDPATH
    assert scene.decide(command, "bypassPermissions") != "allow", source
    commands = analyse(command).commands
    assert track_places(commands, str(scene.ws), str(scene.home))[-1].pwd is None
    kept = analyse("CDPATH=src; cd ./docs; cat ../README.md").commands
    assert track_places(kept, str(scene.ws), str(scene.home))[-1].pwd == f"{scene.ws}/docs"


# --------------------------------------------------------------------------- attack classes


def _rows(template: list[tuple[str, str]], scene: Scene) -> list[tuple[str, str]]:
    return [(c.replace("<T>", scene.tmp.name), s) for c, s in template]


RM_WORKSPACE = [
    ("rm -rf src/link/../ws", "issue 24 (round-3 corpus)"),
    ("rm -rf src/link/../../<T>/ws", "by hand"),
    ("cd src/link && rm -rf ../ws", "by hand"),
    ("cd src/link; rm -rf ../ws", "by hand"),
    ("cd -P src/link/.. && rm -rf ws", "GNU bash manual (cd -P)"),
    ("set -P; cd src/link/..; rm -rf ws", "GNU bash manual (set -P)"),
    ("set -o physical; cd src/link; cd ..; rm -rf ws", "GNU bash manual (set -o physical)"),
    ("rm -rf src/*/../ws", "by hand (a glob's match holds the symlink)"),
    ("rm -rf src/l?nk/../ws/", "by hand"),
    ("ln -s ../src/link x && rm -rf x/../ws", "by hand (the symlink is made by the call)"),
    ("rm -rf src/link/../*", "destructive_command_guard (rm -rf of a parent's contents)"),
    ("rm -rf ~+/src/link/..", "GNU bash manual (tilde prefix ~+)"),
]  # fmt: skip


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_rm_of_the_workspace_through_a_symlink_is_never_approved(scene: Scene, mode: str) -> None:
    engine = scene.engine()
    for command, source in _rows(RM_WORKSPACE, scene):
        decision = engine.decide("Bash", {"command": command}, mode=mode)
        assert decision.decision != "allow", (command, source, decision.reason)
        if mode == "bypassPermissions":  # a critical path: no mode waves it through, and
            # only a person may approve it (even when the command is also unanalysable)
            assert any("rm of" in p for p in decision.protected), (command, decision.reason)


READ_DENIED = [
    ("cat src/link/../ws/.env", "issue 24 (round-3 corpus)"),
    ("cd src/link; cat ../ws/.env", "by hand"),
    ("head -n1 src/link/../../<T>/ws/.env", "by hand"),
    ("cd -P src/link/.. && cat ws/.env", "GNU bash manual (cd -P)"),
    ("set -o physical; cd src/link/..; cat ws/.env", "GNU bash manual (set -o physical)"),
    ("cat < src/link/../ws/.env", "by hand (a redirection opens it too)"),
    ("cat src/*/../ws/.env", "by hand (a glob's match)"),
    ("cat ~+/src/link/../ws/.env", "GNU bash manual (tilde prefix ~+)"),
    ("grep -r SECRET src/link/../ws", "Claude Code issue #61148 (../ traversal past a deny)"),
]  # fmt: skip
#: A recursive read over a folder holding a denied file asks rather than denies (design §4).
RECURSIVE = frozenset({"grep -r SECRET src/link/../ws"})
EDIT_DENIED = [
    ("echo x > src/link/../ws/docs/a.md", "issue 24 (round-3 corpus)"),
    ("cd src/link && echo x > ../ws/docs/a.md", "by hand"),
    ("echo x >> src/link/../../<T>/ws/docs/a.md", "by hand"),
    ("cp README.md src/link/../ws/docs/a.md", "by hand (a command's write argument)"),
    ("cd -P src/link/..; echo x > ws/docs/a.md", "GNU bash manual (cd -P)"),
    ("tee src/link/../ws/docs/a.md < README.md", "sandbox-runtime tests (writes through links)"),
]  # fmt: skip


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize("table", ["read", "edit"])
def test_a_denied_file_reached_through_a_symlink_is_denied(
    scene: Scene, mode: str, table: str
) -> None:
    engine = scene.engine()
    for command, source in _rows(READ_DENIED if table == "read" else EDIT_DENIED, scene):
        decision = engine.decide("Bash", {"command": command}, mode=mode)
        expected = "ask" if command in RECURSIVE else "deny"
        assert decision.decision == expected, (command, source, decision.reason)


def test_git_finds_its_repository_from_the_physical_directory(scene: Scene) -> None:
    # `sub` -> vendor/lib/src: git walks up from vendor/lib/src and uses the nested
    # repository, whose config (core.fsmonitor) can run programs (Claude Code advisory)
    assert scene.decide("git -C sub status") == "ask"
    assert scene.decide("git -C src status") == "allow"
    assert scene.decide("git status", "default") == "allow"


# --------------------------------------------------------------------------- no false asks

EVERYDAY = [
    "cd src && cat ../README.md", "cat src/../README.md", "ls src/..", "ls -la ./src/../docs",
    "cd src/link/.. && ls", "cd deep/.. && cat README.md", "cd a/b && ls ../..",
    "cd src; cd ..; cat README.md", "cd -P src && ls ..", "head -5 docs/../README.md",
    "wc -l src/../src/main.py", "cd docs && cat ../README.md", "grep -n r ../ws/README.md",
    "cd -L src && cat ../README.md",
]  # fmt: skip


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_dotdot_stays_allowed(scene: Scene, command: str) -> None:
    assert scene.decide(command) == "allow", command


def test_tools_open_the_path_that_was_decided(scene: Scene) -> None:
    """Read/Write/Edit fold ``..`` on the string and open exactly that path (one resolver,
    design §9): the decision and the open cannot part ways through a symlink."""
    engine = scene.engine()
    given = "src/link/../ws/.env"
    decision = engine.decide("Read", {"file_path": given})
    opened = ToolContext.for_workspace(scene.ws).resolve_text(given, "file_path")
    assert [t.target for t in decision.targets] == [opened]
    assert not os.path.exists(opened)  # <ws>/src/ws/.env: nothing there, nothing read


# --------------------------------------------------------------------------- against bash

PREFIXES = ["", "cd src/link; ", "cd src/link && ", "cd -P src/link/..; ", "cd deep; ",
            "set -P; cd src/link; cd ..; ", "pushd src/link >/dev/null; ", "cd src/link/.. && "]
SEGMENTS = ["src/link", "..", "ws", "deep", "src", "a", "."]
ACTIONS = ["cat {}/.env", "head -n1 {}/.env", "cat < {}/.env", "cat {}/*/.env",
           "echo owned > {}/docs/a.md", "cp README.md {}/docs/a.md", "rm -rf {}",
           "rm -rf {}/ws", "rm -rf {}/*"]


@settings(max_examples=80, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(prefix=st.sampled_from(PREFIXES), action=st.sampled_from(ACTIONS),
       segments=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4))
def test_what_bash_does_through_symlinks_toolrun_never_allowed(
    monkeypatch: pytest.MonkeyPatch, prefix: str, action: str, segments: list[str]
) -> None:
    """Differential, by hand: random ``cd`` prefixes and paths through ``src/link`` and
    ``deep`` run in real bash in a fresh tree. Whenever bash printed the Read-denied
    ``.env``, changed the Edit-denied ``docs/a.md`` or removed the workspace, toolrun had
    not allowed the command (default mode or bypassPermissions)."""
    command = prefix + action.format("/".join(segments))
    with tempfile.TemporaryDirectory() as tmp:
        # deep enough that no `..` of the command climbs out of the temporary directory
        tmp_root = Path(os.path.realpath(tmp)) / "1" / "2" / "3" / "4" / "5" / "6" / "7"
        ws, outside = tmp_root / "ws", tmp_root / "outside"
        for d in (ws / "docs", ws / "src", ws / "a" / "b", outside / "home"):
            d.mkdir(parents=True)
        (ws / ".env").write_text("SECRET=fuzz-sentinel\n")
        (ws / "docs" / "a.md").write_text("docs\n")
        (ws / "README.md").write_text("# r\n")
        (ws / "src" / "link").symlink_to(outside)
        (ws / "deep").symlink_to("a/b")
        with monkeypatch.context() as patch:
            patch.setenv("HOME", str(outside / "home"))
            engine = PermissionEngine(make_config(ws, deny=DENY))
            decided = {mode: engine.decide("Bash", {"command": command}, mode=mode).decision
                       for mode in ("default", "bypassPermissions")}
        env = {"PATH": os.environ["PATH"], "HOME": str(outside / "home")}
        done = subprocess.run(["bash", "-c", command], cwd=ws, capture_output=True, text=True,
                              env=env, check=False, timeout=30)
        harmed = ("fuzz-sentinel" in done.stdout
                  or not (ws / "README.md").exists()
                  or (ws / "docs" / "a.md").exists()
                  and (ws / "docs" / "a.md").read_text() != "docs\n")
        if harmed:
            assert "allow" not in decided.values(), (command, decided)
