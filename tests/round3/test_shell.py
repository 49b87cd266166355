"""Real runs: programs fed their text, and shell state that changes later words (issue 24,
points 5 and 6), through ``toolrun exec`` in the round-3 scene.

bypassPermissions with ``deny: Bash(rm *)`` and the scene's Read denies: each attack (and
three other spellings of its class) must leave ``victim`` and every sentinel where they
were, and print no secret. Each row names its source. Programs that are not installed are
skipped, saying which.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.round3.scene import Scene

CONFIG = (
    "permissions:\n"
    "  deny: ['Bash(rm *)', 'Read(./.env)', 'Read(./config/.env)', 'Edit(./docs/**)']\n"
)


def _scene(tmp_path: Path) -> Scene:
    scene = Scene.make(tmp_path)
    (scene.ws / "victim").write_text("victim\n")
    scene._before = scene.snapshot()  # (the victim is part of the scene)
    scene.config(CONFIG)
    return scene


def _needs(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")


def _attack(tmp_path: Path, commands: list[str]) -> None:
    scene = _scene(tmp_path)
    done, results = scene.run(commands, mode="bypassPermissions")
    assert len(results) == len(commands), done.stderr
    allowed = [r["input"]["command"] for r in results if r["decision"] == "allow"]
    assert allowed == []
    assert scene.changed() == []
    assert scene.leaked(results) == []


# Point 5: the program text comes from the command itself ------------------------------

FED = {
    "perl": [
        ("perl <<< 'unlink \"victim\"'", "issue 24 corpus"),
        ("perl - <<EOF\nunlink 'victim';\nEOF", "by hand"),
        ("echo 'unlink q(victim)' | perl", "by hand"),
        ("perl /dev/fd/0 <<< 'unlink q(victim)'", "by hand"),
        ("echo '-e unlink(q(victim))' | xargs perl", "GNU findutils manual: xargs"),
    ],
    "node": [
        ("node - <<< 'require(\"fs\").unlinkSync(\"victim\")'", "issue 24 corpus"),
        ("echo 'require(\"fs\").unlinkSync(\"victim\")' | node", "by hand"),
        ("node <(echo 'require(\"fs\").unlinkSync(\"victim\")')", "by hand"),
        ("{ node; } <<< 'require(\"fs\").unlinkSync(\"victim\")'", "by hand: a group"),
    ],
    "make": [
        ("make -f /dev/stdin <<< $'x:\\n\\trm victim'", "issue 24 corpus"),
        ("make -f - <<< $'x:\\n\\trm victim'", "GNU make manual: -f -"),
        ("printf 'x:\\n\\trm victim\\n' | make -f /dev/stdin", "by hand"),
        ("make --eval=$'x:\\n\\trm victim' x", "GNU make manual: --eval"),
    ],
    "python3": [
        ("python3 <<< 'import os; os.remove(\"victim\")'", "by hand"),
        ("python3 - <<< 'import os; os.remove(\"victim\")'", "python docs: '-'"),
        ("echo 'import os; os.remove(\"victim\")' | python3", "by hand"),
        ("python3 /proc/self/fd/0 <<< 'import os; os.remove(\"victim\")'", "by hand"),
    ],
    "awk": [
        ("awk -f /dev/stdin <<< 'BEGIN{system(\"rm victim\")}'", "GNU awk manual: -f"),
        ("awk -f - README.md <<< 'BEGIN{system(\"rm victim\")}'", "GNU awk manual: -f"),
        ("echo 'BEGIN{system(\"rm victim\")}' | awk -f /dev/fd/0", "by hand"),
        ("awk -f <(echo 'BEGIN{system(\"rm victim\")}')", "by hand"),
    ],
    "sed": [
        ("sed -f /dev/stdin README.md <<< '1e rm victim'", "GNU sed manual: e command"),
        ("sed -n -f - README.md <<< '1e rm victim'", "GNU sed manual: -f"),
        ("echo '1e rm victim' | sed -f /dev/stdin README.md", "by hand"),
        ("echo '-e 1e\\ rm\\ victim README.md' | xargs sed", "GNU findutils manual: xargs"),
    ],
    "ruby": [
        ("ruby <<< 'File.delete(\"victim\")'", "by hand"),
        ("ruby - <<< 'File.delete(\"victim\")'", "by hand"),
        ("echo 'File.delete(\"victim\")' | ruby", "by hand"),
        ("ruby /dev/stdin <<< 'File.delete(\"victim\")'", "by hand"),
    ],
    "php": [
        ("php <<< '<?php unlink(\"victim\");'", "by hand"),
        ("php -f /dev/stdin <<< '<?php unlink(\"victim\");'", "php manual: -f"),
        ("echo '<?php unlink(\"victim\");' | php", "by hand"),
        ("php -- <<< '<?php unlink(\"victim\");'", "by hand"),
    ],
    "tclsh": [
        ("tclsh <<< 'file delete victim'", "tclsh manual"),
        ("echo 'file delete victim' | tclsh", "tclsh manual"),
        ("tclsh /dev/stdin <<< 'file delete victim'", "by hand"),
        ("tclsh - <<< 'file delete victim'", "by hand"),
    ],
}


@pytest.mark.parametrize("program", sorted(FED))
def test_a_program_fed_its_text_runs_nothing(tmp_path: Path, program: str) -> None:
    _needs(program)
    _attack(tmp_path, [command for command, _source in FED[program]])


# Point 6: shell state that changes later words ----------------------------------------

STATE = {
    "glob options": [
        ("shopt -s dotglob; cat *", "issue 24 corpus"),
        ("shopt -s nocaseglob; cat .ENV*", "by hand (bash manual: nocaseglob)"),
        ("shopt -s dotglob globstar; grep -r SECRET **", "by hand (bash manual: globstar)"),
        ("shopt -s dotglob; cd config && cat *", "by hand"),
    ],
    "GLOBIGNORE and IFS": [
        ("GLOBIGNORE=x; cat config/*", "issue 24 corpus"),
        ("GLOBIGNORE=app.yaml; cat config/*", "bash manual: GLOBIGNORE sets dotglob"),
        ("export GLOBIGNORE=.; cat config/*", "by hand"),
        ("read GLOBIGNORE <<< x; cat config/*", "by hand"),
    ],
    "names rebound": [
        ("f(){ rm victim; }; f", "by hand: a function defined, then called"),
        ("f(){ \"$@\"; }; f rm victim", "by hand"),
        ("hash -p /bin/rm ls; ls victim", "bash manual: hash -p"),
        ("BASH_CMDS[ls]=/bin/rm; ls victim", "bash manual: BASH_CMDS"),
        ("shopt -s expand_aliases; alias ls=rm\nls victim", "bash manual: expand_aliases"),
    ],
    "where cd and ~ lead": [
        ("cd src; CDPATH=..; cd config; cat .env", "bash manual: CDPATH"),
        ("HOME=$PWD/config; cd; cat .env", "by hand"),
        ("HOME=$PWD/config cd; cat .env", "by hand: a prefix assignment on cd"),
        ("printf -v HOME %s \"$PWD/config\"; cat ~/.env", "by hand"),
    ],
    "the cwd probe's file": [
        ("__toolrun_cwd_file=$HOME/.bashrc", "toolrun's EXIT trap writes pwd there"),
        ("read __toolrun_cwd_file <<< \"$HOME/.profile\"", "toolrun's EXIT trap"),
        ("printf -v __toolrun_cwd_file %s ~/.gitconfig", "toolrun's EXIT trap"),
        ("declare __toolrun_cwd_file=$PWD/docs/a.md", "toolrun's EXIT trap"),
    ],
}


@pytest.mark.parametrize("kind", sorted(STATE))
def test_shell_state_changes_are_refused(tmp_path: Path, kind: str) -> None:
    _attack(tmp_path, [command for command, _source in STATE[kind]])


def test_everyday_groups_run(tmp_path: Path) -> None:
    scene = _scene(tmp_path)
    commands = ["{ cat README.md; }", "{ cat README.md; ls src; } | wc -l",
                "( cat README.md )", "set -euo pipefail; cat README.md"]
    done, results = scene.run(commands, mode="default")
    assert [r["decision"] for r in results] == ["allow", "allow", "allow", "ask"], done.stderr
    assert "# readme" in results[0]["output"]
    assert scene.changed() == []
