"""Red team of issue 24 (points 2, 3, 5, 6, 7, 8), run for real through ``toolrun exec`` in
the round-3 scene: the spellings that got through, and others of the same class.

Each class runs once for real (the disk must not change, no secret may be printed) and
each row is decided by the engine. Every row names its public source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.permissions.conftest import make_config
from tests.round3.scene import Scene
from toolrun.permissions import PermissionEngine

DENY = ["Read(./.env)", "Read(./config/.env)", "Edit(./docs/**)"]
DENY_RM = DENY + ["Bash(rm *)"]


def _yaml(deny: list[str]) -> str:
    return "permissions:\n  deny: [" + ", ".join(f"'{d}'" for d in deny) + "]\n"


@pytest.fixture
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scene:
    made = Scene.make(tmp_path)
    monkeypatch.setenv("HOME", str(made.home))
    return made


def _engine(scene: Scene, mode: str, deny: list[str]) -> PermissionEngine:
    return PermissionEngine(make_config(scene.ws, deny=deny, mode=mode))


def _attack(scene: Scene, rows: list[tuple[str, str]], mode: str, deny: list[str]) -> None:
    """Every row is not allowed by the engine, and running them all changes and prints
    nothing."""
    scene.config(_yaml(deny))
    engine = _engine(scene, mode, deny)
    commands = [c.format(ws=scene.ws) for c, _ in rows]
    for command, (_, source) in zip(commands, rows, strict=True):
        decision = engine.decide("Bash", {"command": command}, cwd=scene.ws)
        assert decision.decision != "allow", (command, source, decision.reason)
    _done, results = scene.run(commands, mode=mode)
    assert len(results) >= len(commands), results
    assert scene.leaked(results) == []
    assert scene.changed() == []


# -- point 5: a program fed its program by the command ----------------------------------
FED = [
    ("make -f- <<< $'all:\\n\\t@rm -f README.md'", "by hand: getopt glues -f's value"),
    ("make --mak=/dev/stdin <<< $'all:\\n\\t@rm -f README.md'",
     "GNU make manual: --makefile, a getopt_long prefix"),
    ("make -sf - <<< $'all:\\n\\t@rm -f README.md'", "by hand: a bundle, then -f"),
    ("python3 -m code <<< 'import os; os.remove(\"README.md\")'",
     "Python docs: the code module's console reads stdin"),
    ("vim -es <<< '!rm README.md'", "vim manual: -e -s, Ex mode from stdin"),
    ("bash -O extglob <<< 'rm README.md'", "GNU bash manual: -O takes a value"),
    ("bash +o posix <<< 'rm README.md'", "GNU bash manual: +o takes a value"),
]


def test_programs_fed_their_program_do_not_run_under_bypass(scene: Scene) -> None:
    _attack(scene, FED, "bypassPermissions", DENY_RM)


# -- a file command behind a deny-only wrapper (env, exec, sudo, setsid, ...) ------------
WRAPPED = [
    ("env cat .env", "by hand: env runs its operands (coreutils manual)"),
    ("exec cat config/.env", "GNU bash manual: exec"),
    ("env -i head -n1 .env", "coreutils manual: env -i"),
    ("setsid -w sed -n p config/.env", "util-linux setsid(1): -w waits"),
    ("exec sort -o ~/.bashrc README.md", "by hand: sort -o behind exec"),
    ("env tee -a ~/.profile < README.md", "by hand: tee behind env"),
]


def test_wrapped_file_commands_keep_the_rules_under_bypass(scene: Scene) -> None:
    _attack(scene, WRAPPED, "bypassPermissions", DENY)


# -- point 7: a compressor carries the file to a name no Read rule covers -----------------
COMPRESSED = [
    ("zstd -rq config", "zstd(1): -r; then `zstd -dc config/.env.zst` prints it"),
    ("zstd --recursive -q --rm config", "zstd(1): --recursive, --rm"),
    ("zstd -q config/.env", "by hand: one file, config/.env.zst beside it"),
    ("zstd -qc .env", "zstd(1): -c to stdout"),
]


def test_compressors_do_not_carry_a_denied_file(scene: Scene) -> None:
    _attack(scene, COMPRESSED, "acceptEdits", DENY)


# -- point 8: the twins of the shell rc files, written in bypassPermissions ---------------
TWINS = [
    ("mkdir -p ~/.config/fish && echo 'rm -rf ~' > ~/.config/fish/config.fish",
     "fish docs: config.fish runs at start"),
    ("echo 'alias ls=\"rm -rf\"' >> ~/.bash_aliases", "Debian's ~/.bashrc sources it"),
    ("sort -o ~/.kshrc README.md", "ksh(1): ~/.kshrc"),
    ("echo '-o ~/.bashrc' | tee ~/.curlrc", "curl manual: ~/.curlrc"),
]


def test_protected_twins_are_not_written_under_bypass(scene: Scene) -> None:
    _attack(scene, TWINS, "bypassPermissions", DENY)


# -- point 10: more everyday commands that must stay allowed (no false asks) --------------
SN = "claude-code-safety-net allow list"
DG = "destructive_command_guard safe patterns"
CC = "Claude Code read-only commands"
MORE_EVERYDAY = [
    ("sort -u README.md", SN), ("sort -t: -k2 -n config/app.yaml", SN),
    ("sort -rn README.md", DG), ("uniq -c README.md", SN), ("cut -d: -f1 config/app.yaml", SN),
    ("cut -c1-10 README.md", SN), ("nl -ba README.md", DG), ("tac README.md", DG),
    ("diff -u README.md src/main.py", CC), ("diff --brief src docs", SN),
    ("find src -maxdepth 1 -type f -name '*.py'", CC), ("tree -L 2 src", SN),
    ("tree -a -I node_modules src", SN), ("du -sh src", CC), ("du -h --max-depth=1 src", SN),
    ("stat README.md", CC), ("realpath src", SN), ("basename src/main.py", CC),
    ("dirname src/main.py", CC), ("which python3", CC), ("pwd", CC), ("whoami", SN),
    ("uname -a", SN), ("echo $HOME", SN), ("git status --short", CC),
    ("git log --oneline -5", CC), ("git diff --stat", CC), ("git branch -a", CC),
    ("rg -n print src", CC), ("awk -F: '{print $1}' config/app.yaml", SN),
    ("sed -n '1,5p' README.md", CC), ("base64 README.md", DG), ("ls -la | grep main", SN),
    ("cat README.md | head -5", CC), ("grep -rn TODO src | wc -l", SN),
    ("test -f README.md && echo yes", DG), ("[ -d src ] && ls src", DG),
]


@pytest.mark.parametrize(("command", "source"), MORE_EVERYDAY, ids=[c for c, _ in MORE_EVERYDAY])
def test_more_everyday_commands_stay_allowed(scene: Scene, command: str, source: str) -> None:
    decision = _engine(scene, "default", DENY).decide("Bash", {"command": command},
                                                      cwd=scene.ws)
    assert decision.decision == "allow", (source, decision.reason)
