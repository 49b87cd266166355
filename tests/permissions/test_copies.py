"""Copies carry the rules of what they copy (issue 24, point 7).

``cp -r config build/cfg`` then ``cat build/cfg/.env`` showed a file
``Read(./config/.env)`` denies: the copy put it where no rule reaches. A copy, move,
link or archive of a file or a tree is a read of everything it carries, decided by the
rule covering it (a deny denies, an ask asks) in every mode; the operands are found with
each program's own option grammar (:mod:`toolrun.permissions.copies`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.permissions import PermissionEngine
from toolrun.permissions.bash import analyse
from toolrun.permissions.copies import CP, RSYNC, carried, parse

from .conftest import make_config

MODES = ["default", "acceptEdits", "bypassPermissions"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """config/.env (guarded), src/ with a link into config and one out, lib/ plain."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    for d in (ws / "config", ws / "src", ws / "lib", ws / "b", outside):
        d.mkdir(parents=True)
    (ws / "config" / ".env").write_text("SECRET=1\n")
    (ws / "config" / "app.yaml").write_text("name: app\n")
    (ws / "src" / "main.py").write_text("print()\n")
    (ws / "src" / "inner").symlink_to("../config")
    (ws / "lib" / "util.py").write_text("x = 1\n")
    (outside / "secret.txt").write_text("TOP\n")
    (ws / "src" / "out").symlink_to(outside)
    return ws


def engine(ws: Path, *, deny: tuple[str, ...] = (), ask: tuple[str, ...] = ()) -> PermissionEngine:
    return PermissionEngine(make_config(ws, deny=deny, ask=ask), memo=False)


DENY = ("Read(./config/.env)",)

# (command, source): each class first as the issue found it, then other spellings.
ATTACKS = [
    # cp of a tree
    ("cp -r config build/cfg", "issue 24 (round-3 corpus)"),
    ("cp -a config b/cfg", "issue 24"),
    ("cp -R config/ b/cfg", "GNU coreutils cp manual"),
    ("cp -rt b config", "GNU coreutils cp manual (-t DIRECTORY)"),
    ("cp --recursive --target=b config", "getopt_long: an unambiguous prefix"),
    ("cp config -r b/cfg", "getopt_long permutes: options after operands"),
    ("cp -r * b", "by hand (a glob matching config)"),
    # mv of a tree, and of the file itself
    ("mv config x", "issue 24"),
    ("mv -t b config", "GNU coreutils mv manual"),
    ("mv --target-directory=b config", "GNU coreutils mv manual"),
    ("mv -- config x", "by hand ('--' ends the options)"),
    ("mv config/.env x", "issue 24 (mv .env x)"),
    # rsync
    ("rsync -a config/ b/", "issue 24"),
    ("rsync -r config b", "rsync(1)"),
    ("rsync --archive config/ b", "rsync(1)"),
    ("rsync -av --no-perms config b/", "rsync(1) --no-OPTION"),
    ("rsync -a config host:/tmp/x", "by hand (carried off the machine)"),
    # tar
    ("tar cf x.tar config", "issue 24"),
    ("tar -czf x.tgz config", "GNU tar manual"),
    ("tar -C config -cf x.tar .", "GNU tar manual (-C applies to the members after it)"),
    ("tar --create --file=x.tar config/", "GNU tar manual"),
    ("tar cfC x.tar config .env", "GNU tar manual (traditional letters take values in order)"),
    # ln
    ("ln -s config c", "issue 24"),
    ("ln -s ../config b/c", "by hand (relative to the link's directory)"),
    ("ln --symbolic config/ c", "GNU coreutils ln manual"),
    ("ln -sf config c", "GNU coreutils ln manual"),
    ("ln config/.env e", "issue 24 (a hard link)"),
    # zip, git mv, install, dd, scp, cp --parents, ditto
    ("zip -r x.zip config", "issue 24"),
    ("zip -qr x.zip config", "Info-ZIP zip(1)"),
    ("zip -r -9 x.zip config", "Info-ZIP zip(1)"),
    ("git mv config x", "issue 24"),
    ("git -C . mv config x", "git(1) -C"),
    ("git mv -f config x", "git-mv(1)"),
    ("install -m 600 config/.env x", "issue 24"),
    ("dd if=config/.env of=x", "issue 24"),
    ("cp --parents config/.env b", "issue 24"),
    ("scp -r config host:", "by hand (scp(1))"),
    ("ditto config b/cfg", "issue 24 (macOS ditto(1))"),
    ("gzip -r config", "by hand (gzip -r: config/.env.gz is a new name)"),
    # copies that follow links: src/inner -> ../config
    ("cp -rL src b/s", "GNU coreutils cp manual (-L)"),
    ("rsync -aL src b", "rsync(1) --copy-links"),
    ("tar -chf x.tar src", "GNU tar manual (--dereference)"),
    ("zip -r x.zip src", "Info-ZIP zip(1): stores what links point to unless -y"),
]
#: The operands cannot be told: never allowed while a Read rule exists (ask, even in bypass).
UNKNOWN = [
    ("cp --frobnicate config b", "by hand (an option the table does not list)"),
    ('cp -r "$SRC" b', "by hand (known only at run time)"),
    ("tar -T list.txt -cf x.tar", "GNU tar manual (--files-from)"),
    ("rsync -a --files-from=list.txt . b", "rsync(1)"),
    ("find config | cpio -o > x.cpio", "by hand (cpio reads names from stdin)"),
    ("zip -r x.zip . -i '*.env'", "Info-ZIP zip(1) (. holds config)"),
    ("rsync -a host:config b", "by hand (a remote source)"),
]
#: Everyday copies: unchanged (acceptEdits allows the file commands, bypass the rest).
EVERYDAY = [
    ("cp -r lib build", "acceptEdits"),
    ("cp src/main.py src/app.py", "acceptEdits"),
    ("mv src/main.py src/app.py", "acceptEdits"),
    ("cp -a lib/ backup/", "acceptEdits"),
    ("mkdir -p b && cp -r lib b", "acceptEdits"),
    ("cp config/app.yaml b/", "acceptEdits"),
    ("cp -r src b", "acceptEdits"),  # links copied as links: reading through them is checked
    ("mv lib lib2", "acceptEdits"),
    ("tar czf out.tgz lib", "bypassPermissions"),
    ("tar -C lib -cf out.tar .", "bypassPermissions"),
    ("rsync -a lib/ build/", "bypassPermissions"),
    ("zip -ry out.zip src", "bypassPermissions"),
    ("ln -s lib/util.py u.py", "bypassPermissions"),
    ("git mv lib lib2", "bypassPermissions"),
    ("tar xzf out.tgz -C build", "bypassPermissions"),
    ("tar tf out.tar", "bypassPermissions"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("command", "source"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_copy_of_a_denied_path_is_denied_in_every_mode(
    ws: Path, mode: str, command: str, source: str
) -> None:
    decision = engine(ws, deny=DENY).decide("Bash", {"command": command}, cwd=ws, mode=mode)
    assert decision.decision == "deny", (source, decision.reason)
    assert "config/.env" in decision.reason


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("command", "source"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_copy_of_an_ask_path_asks_in_every_mode(
    ws: Path, mode: str, command: str, source: str
) -> None:
    decision = engine(ws, ask=DENY).decide("Bash", {"command": command}, cwd=ws, mode=mode)
    assert decision.decision == "ask", (source, decision.reason)


@pytest.mark.parametrize(("command", "source"), UNKNOWN, ids=[u[0] for u in UNKNOWN])
def test_a_copy_whose_sources_cannot_be_told_is_never_allowed(
    ws: Path, command: str, source: str
) -> None:
    for mode in MODES:
        decision = engine(ws, deny=DENY).decide("Bash", {"command": command}, cwd=ws, mode=mode)
        assert decision.decision in ("ask", "deny"), (source, mode, decision.reason)
        if mode == "bypassPermissions" and decision.decision == "ask":
            assert decision.protected  # only a person may approve it


@pytest.mark.parametrize(("command", "mode"), EVERYDAY)
def test_everyday_copies_stay_allowed(ws: Path, command: str, mode: str) -> None:
    decision = engine(ws, deny=DENY).decide("Bash", {"command": command}, cwd=ws, mode=mode)
    assert decision.decision == "allow", decision.reason


def test_a_followed_link_out_of_the_workspace_is_a_read_out_there(ws: Path) -> None:
    """`cp -rL src b` carries src/out/secret.txt (outside) into the workspace."""
    decision = engine(ws).decide("Bash", {"command": "cp -rL src b/s"}, cwd=ws,
                                 mode="acceptEdits")
    assert decision.decision == "ask"
    assert "outside the workspace" in decision.reason


def test_an_archive_written_to_a_protected_path_asks_in_bypass(ws: Path) -> None:
    for command in ("tar cf .git/hooks/pre-commit lib", "zip -r ~/.bashrc lib",
                    "rsync -a lib/ .vscode/"):
        decision = engine(ws).decide("Bash", {"command": command}, cwd=ws,
                                     mode="bypassPermissions")
        assert decision.decision == "ask" and decision.protected, (command, decision.reason)


def test_a_copy_into_a_new_tree_is_checked_again_when_the_tree_changes(ws: Path) -> None:
    """The tree check is remembered per tree until a directory in it changes."""
    e = PermissionEngine(make_config(ws, deny=DENY))
    command = {"command": "cp -r lib build"}
    assert e.decide("Bash", command, cwd=ws, mode="acceptEdits").decision == "allow"
    (ws / "lib" / ".env").write_text("x\n")
    e2 = PermissionEngine(make_config(ws, deny=("Read(./lib/.env)",)))
    assert e2.decide("Bash", command, cwd=ws, mode="acceptEdits").decision == "deny"


# ---------------------------------------------------------------------- the grammar


def _argv(command: str) -> tuple[object, ...]:
    return analyse(command).commands[0].effective


@pytest.mark.parametrize(
    ("command", "sources", "destinations"),
    [
        ("cp -rvtb config src", ["config", "src"], ["b"]),  # glued value after a bundle
        ("cp -r --target-dir=b config", ["config"], ["b"]),  # a prefix
        ("cp config b -r", ["config"], ["b"]),  # permuted
        ("cp -- -r b", ["-r"], ["b"]),  # an operand after --
        ("cp -S .orig config b", ["config"], ["b"]),  # -S takes a value
        ("ln -s config dir/", ["dir/config"], ["dir/"]),
        ("ln -sr config c", ["config"], ["c"]),  # --relative: the target as given
        ("ln config", ["config"], ["."]),
        ("install -d a b", [], ["a", "b"]),
        ("tar -C a -cf x.tar b -C /c d", ["a/b", "/c/d"], ["x.tar"]),
        ("tar cf - config", ["config"], []),
        ("tar xf x.tar -C out", [], ["out"]),
        ("tar xOf x.tar", [], []),
        ("zip -r -x '*.o' -- x.zip config", ["config"], ["x.zip"]),
        ("git -C sub mv a b", ["sub/a"], ["sub/b"]),
        ("rsync -e ssh -a config b", ["config"], ["b"]),
    ],
)
def test_operands_are_found_as_the_program_parses_them(
    command: str, sources: list[str], destinations: list[str]
) -> None:
    found = carried(analyse(command).commands[0].effective)
    assert found is not None and found.problem is None
    assert [w.text for w in found.sources] == sources
    assert [w.text for w in found.destinations] == destinations


def test_what_is_no_copy_is_none() -> None:
    for command in ("git status", "gzip config/.env", "git -c a=b mv x y"):
        assert carried(analyse(command).commands[0].effective) is None, command


def test_getopt_refuses_what_it_cannot_read() -> None:
    argv = analyse("cp --no config b").commands[0].effective  # ambiguous prefix
    assert parse(argv, CP).problem is not None
    argv = analyse("rsync --arch config b").commands[0].effective  # popt: no prefixes
    assert parse(argv, RSYNC).problem is not None
    argv = analyse("rsync --no-perms config b").commands[0].effective  # popt negation
    assert parse(argv, RSYNC).problem is None
