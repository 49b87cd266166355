"""Differential test against real bash (issue 9 point 9): whenever bash ran the marker,
toolrun did not allow the command under ``deny: ["Bash(marker *)"]`` (default mode,
bypassPermissions, and with allow rules for every other program the grammar uses). A
bounded run; ``bench/differential_bash.py --count N`` runs longer."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.permissions.shell_grammar import commands, make_bin, run_one
from toolrun.permissions import PermissionEngine

_counter = itertools.count()


@pytest.fixture(scope="module")
def bindir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bin(tmp_path_factory.mktemp("marker"))


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=commands)
def test_bash_never_runs_the_marker_when_toolrun_allowed(
    command: str, bindir: Path, tmp_path: Path
) -> None:
    outcome = run_one(command, tmp_path / f"s{next(_counter)}", bindir)
    assert not outcome.unsafe, outcome


@pytest.mark.parametrize("command", [
    "marker a", "\\marker", "m'ark'er", "echo hi\n\\marker", "{marker,}", "$'\\x6darker'",
    "echo x | sed '1e marker'", "trap marker EXIT", "cat <<EOF | marker\nx\nEOF",
    "env marker", "x='a[$(marker)]'; [[ $x -eq 1 ]]", "find . -maxdepth 0 -exec marker \\;",
    # a process substitution in the word of an unquoted ${...}: tree-sitter reads it as a
    # plain word, bash runs it (found by the generated test above; `wait`: it runs in the
    # background, and the harness looks for its mark once bash has exited)
    "(copro}c echo ${x:-$<(env A=1 \\marker)}; wait)", "echo ${x:-<(marker)}; wait",
    "echo ${x:=<(marker)}; wait", "x=1; echo ${x:+>(marker)}; wait",
    "echo ${x-$<(marker a)}; wait",
])  # fmt: skip
def test_the_marker_really_runs_and_is_never_allowed(
    command: str, bindir: Path, tmp_path: Path
) -> None:
    outcome = run_one(command, tmp_path, bindir)
    assert outcome.ran_marker, command  # the harness sees bash run it
    assert not outcome.unsafe, outcome


def test_safe_commands_are_still_allowed(bindir: Path, tmp_path: Path) -> None:
    outcome = run_one("echo hi && ls", tmp_path, bindir)
    assert not outcome.ran_marker and outcome.default == "allow"


# ------------------------------------------------------------------ the round-3 scene
# Commands read as bash and the kernel run them, in a workspace with a symlink out
# (``src/link -> ../outside``, so ``src/link/../ws`` is the workspace), a git repository
# with a committed secret, and glued option spellings: whenever toolrun allowed one
# (default mode, ``deny: Read(./.env), Read(./config/.env)``), bash printed no secret.
# Sources: issue 24 (the third corpus's classes), GNU grep/sed/diff manuals (glued and
# long options, prefixes), by hand (the other spellings).

_SECRET = "ws-dotenv-sentinel"
_OUT_SECRET = "TOP-SECRET"
_PATHS = (".env", "./.env", "config/.env", "config/../.env", "src/link/../ws/.env",
          "src/link/../ws/config/.env", "src/link/secret.txt", "src/../.env", "src/main.py",
          "README.md")  # fmt: skip
_READERS = (
    "cat {p}", "head -n5 {p}", "tail -n1 {p}", "grep -e. {p}", "grep --regexp=. {p}",
    "grep -hn . {p}", "sed -n -ep {p}", "sed -np {p}", "wc -c {p}", "sort {p}",
    "diff --from-file={p} README.md", "diff --from={p} README.md", "grep -d recurse S .",
    "grep --directories=recurse S .", "grep -rn S config", "cut -c1- {p}", "nl {p}",
    "git show HEAD:.env", "git log -p -- .env", "git grep SECRET", "git blame .env",
    "git diff --no-index /dev/null {p}", "cat -- {p}", "tac {p}",
)  # fmt: skip


def _round3(root: Path) -> tuple[Path, PermissionEngine]:
    import subprocess

    from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind

    ws, outside = root / "ws", root / "outside"
    for d in (ws / "config", ws / "src", outside / "home"):
        d.mkdir(parents=True, exist_ok=True)
    (ws / ".env").write_text(f"SECRET={_SECRET}\n")
    (ws / "config" / ".env").write_text("SECRET=config-dotenv-sentinel\n")
    (ws / "src" / "main.py").write_text("print('S')\n")
    (ws / "README.md").write_text("# readme S\n")
    (outside / "secret.txt").write_text(f"{_OUT_SECRET} sentinel\n")
    (ws / "src" / "link").symlink_to(outside)
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(outside / "home"), "PATH": "/usr/bin:/bin",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)
    source = SettingSource(SourceKind.TOOLRUN, ws / "toolrun.yaml", 1, ws)
    rules = tuple(PermissionRule("deny", r, source)
                  for r in ("Read(./.env)", "Read(./config/.env)"))  # fmt: skip
    return ws, PermissionEngine(Config(workspace=ws, rules=rules), memo=False)


def _leaks(command: str, ws: Path) -> bool:
    import subprocess

    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws.parent / "outside" / "home"), "LANG": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat"}  # fmt: skip
    try:
        done = subprocess.run(["bash", "-c", command], cwd=ws, env=env, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=5, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    out = done.stdout + done.stderr
    return any(s.encode() in out for s in (_SECRET, "config-dotenv-sentinel", _OUT_SECRET))


@pytest.fixture(scope="module")
def round3(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PermissionEngine]:
    return _round3(tmp_path_factory.mktemp("round3"))


_reads = st.builds(lambda r, p: r.format(p=p), st.sampled_from(_READERS), st.sampled_from(_PATHS))
_scene_commands = st.one_of(
    _reads,
    st.builds(lambda a, b: f"{a} && {b}", _reads, _reads),
    st.builds(lambda d, r: f"cd {d} && {r}", st.sampled_from(("src", "config", "src/link/..")),
              _reads),
)


# TOOLRUN_FUZZ_EXAMPLES raises the count for a long run by hand (1500 passed once; the space is small).
@settings(max_examples=int(os.environ.get("TOOLRUN_FUZZ_EXAMPLES", "80")), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(command=_scene_commands)
def test_no_secret_is_printed_by_a_command_toolrun_allowed(
    command: str, round3: tuple[Path, PermissionEngine]
) -> None:
    ws, engine = round3
    if engine.decide("Bash", {"command": command}, cwd=ws).decision == "allow":
        assert not _leaks(command, ws), command


def test_the_round3_scene_leaks_when_read_for_real(
    round3: tuple[Path, PermissionEngine],
) -> None:
    """The oracle sees a leak (so the fuzz test above can fail) and toolrun denies it."""
    ws, engine = round3
    assert _leaks("cat .env", ws) and _leaks("cat src/link/secret.txt", ws)
    assert engine.decide("Bash", {"command": "cat .env"}, cwd=ws).decision == "deny"
    assert engine.decide("Bash", {"command": "cat README.md"}, cwd=ws).decision == "allow"
