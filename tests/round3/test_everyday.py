"""Everyday read-only commands stay allowed (issue 24, point 10): no false asks.

Each row is a command agents run all day, from a peer suite's allow list or Claude Code's
read-only list (the source is named per row), decided in default mode with the round-3
scene's deny rules by the real engine; a sample runs for real through ``toolrun exec`` and
must print what bash prints.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.permissions.conftest import make_config
from tests.round3.scene import Scene
from toolrun.permissions import PermissionEngine

CC = "Claude Code read-only commands"
SN = "claude-code-safety-net allow list"
DG = "destructive_command_guard safe patterns"
HAND = "by hand (glued/bundled spelling)"

EVERYDAY: list[tuple[str, str]] = [
    ("ls", CC), ("ls -la", CC), ("ls -l src", CC), ("ls -A", SN), ("ls -1", SN),
    ("ls -lh docs", SN), ("ls -lah", HAND), ("ls -ltr", HAND), ("ls -d */", SN),
    ("ls --color=never", SN), ("ls -R src", SN), ("ls -la --group-directories-first", HAND),
    ("cat README.md", CC), ("cat -n README.md", CC), ("cat src/main.py config/app.yaml", SN),
    ("cat -A README.md", HAND), ("head README.md", CC), ("head -n 5 README.md", CC),
    ("head -n5 README.md", HAND), ("head -5 README.md", HAND), ("head -c 10 README.md", SN),
    ("head --lines=3 src/main.py", SN), ("tail README.md", CC), ("tail -n 20 README.md", CC),
    ("tail -n +2 README.md", SN), ("tail -5 README.md", HAND), ("tail -n5 README.md", HAND),
    ("tail -c 4 README.md", SN), ("wc -l README.md", CC), ("wc -lw README.md", HAND),
    ("wc README.md src/main.py", CC), ("wc -c docs/a.md", SN), ("grep -n readme README.md", CC),
    ("grep -rn print src", CC), ("grep -rn 'def ' --include='*.py' src", SN),
    ("grep -i README README.md", CC), ("grep -c . README.md", SN),
    ("grep -l print -r src", HAND), ("grep -e readme -e app README.md", SN),
    ("grep -E 'a|b' README.md", SN), ("grep -v '^#' config/app.yaml", SN),
    ("grep -A2 -B1 readme README.md", HAND), ("grep -C 3 print src/main.py", SN),
    ("grep -w name config/app.yaml", SN), ("grep -o 'rea[a-z]*' README.md", SN),
    ("grep --color=auto readme README.md", SN), ("grep -Hn print src/main.py", HAND),
    ("grep -rl name config/app.yaml docs", HAND), ("grep -F '(' src/main.py", SN),
    ("grep -q readme README.md", SN), ("grep -x '# readme' README.md", SN),
    ("grep -m1 readme README.md", HAND), ("grep -Ei 'APP|name' config/app.yaml", HAND),
    ("sed -n 1,5p README.md", CC), ("sed -n '1p' README.md", CC), ("sed 's/a/b/' README.md", SN),
    ("sed -n '/readme/p' README.md", SN), ("sed -e 's/x/y/' -e 's/a/b/' README.md", SN),
    ("sed -E 's/(a)/\\1/' README.md", SN), ("sed -n '$p' README.md", SN),
    ("sed 1d README.md", SN), ("sed -ne 1p README.md", HAND), ("sed --quiet 2p README.md", HAND),
    ("awk '{print $1}' README.md", SN), ("awk -F: '{print $1}' config/app.yaml", SN),
    ("awk 'NR==1' README.md", SN), ("awk 'END {print NR}' README.md", SN),
    ("awk -F ':' '{print $2}' config/app.yaml", SN), ("cut -d: -f1 config/app.yaml", HAND),
    ("cut -c1-3 README.md", SN), ("cut -d ' ' -f 2 README.md", SN), ("sort README.md", CC),
    ("sort -rn README.md", HAND), ("sort -u README.md", SN), ("sort -k2 -t: config/app.yaml", SN),
    ("sort -n -r README.md", SN), ("sort -t, -k1,1 README.md", HAND), ("uniq README.md", CC),
    ("uniq -c README.md", SN), ("sort README.md | uniq -c | sort -rn", SN),
    ("nl README.md", SN), ("nl -ba src/main.py", HAND), ("tac README.md", SN),
    ("diff README.md docs/a.md", CC), ("diff -u README.md docs/a.md", HAND),
    ("diff -q README.md docs/a.md", SN), ("diff -y README.md docs/a.md", SN),
    ("diff --brief src docs", SN), ("stat README.md", CC), ("stat -c %s README.md", SN),
    ("stat --format=%n README.md", SN), ("du -sh src", HAND), ("du -h docs", SN),
    ("du -s .", SN), ("du -d1 .", HAND), ("du --max-depth=1 -h .", SN), ("pwd", CC),
    ("pwd -P", SN), ("echo hello", CC), ("echo -n hi", SN), ("printf '%s\\n' a b", SN),
    ("basename src/main.py", SN), ("basename -s .py src/main.py", SN), ("dirname src/main.py", SN),
    ("realpath README.md", SN), ("realpath -e src", HAND), ("readlink -f README.md", SN),
    ("readlink -f src/main.py", SN), ("uname -a", CC), ("uname -sr", HAND), ("whoami", CC),
    ("nproc", CC), ("nproc --all", SN), ("which git", CC), ("which -a ls", SN),
    ("base64 README.md", SN), ("base64 -w0 README.md", HAND), ("base64 -d README.md", SN),
    ("find src -name '*.py'", CC), ("find src -type f", CC), ("find docs -maxdepth 1 -type d", SN),
    ("find docs -name '*.md' -print", SN), ("true", CC), ("false", CC),
    ("test -f README.md", CC), ("[ -d src ]", CC), ("sleep 0", CC), ("cd src && ls", CC),
    ("cd docs && cat a.md", SN), ("ls | head -3", SN), ("cat README.md | wc -l", SN),
    ("grep -rn print src | head -5", SN), ("head -1 README.md && tail -1 README.md", SN),
    ("git status", CC), ("git log --oneline -5", CC), ("git diff", CC),
]

#: A sample run for real: what toolrun exec prints is what bash prints.
REAL = [
    "ls -la src", "cat -n README.md", "head -n5 README.md", "tail -n +1 README.md",
    "wc -l README.md", "grep -rn print src", "grep -c . README.md", "sed -n 1,5p README.md",
    "awk '{print $1}' README.md", "cut -d: -f1 config/app.yaml", "sort -rn README.md",
    "uniq -c README.md", "nl -ba src/main.py", "diff -u README.md docs/a.md", "stat -c %s README.md",
    "du -s docs", "basename -s .py src/main.py", "realpath -e src", "base64 -w0 README.md",
    "find src -name '*.py'", "tac README.md", "grep -e readme -e app README.md",
]


def test_the_table_is_big_enough() -> None:
    assert len(EVERYDAY) >= 120
    assert len({c for c, _ in EVERYDAY}) == len(EVERYDAY)


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = Scene.make(tmp_path_factory.mktemp("everyday"))
    scene.config()
    return scene


@pytest.mark.parametrize(("command", "source"), EVERYDAY, ids=[c for c, _ in EVERYDAY])
def test_everyday_commands_are_allowed(scene: Scene, command: str, source: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(scene.home))
    config = make_config(scene.ws, deny=["Read(./.env)", "Read(./config/.env)",
                                         "Edit(./docs/**)"])
    decision = PermissionEngine(config).decide("Bash", {"command": command}, cwd=scene.ws)
    assert decision.decision == "allow", (source, decision.reason)


def test_a_sample_runs_for_real_and_prints_what_bash_prints(scene: Scene) -> None:
    _done, results = scene.run(REAL)
    assert [r["decision"] for r in results[-len(REAL):]] == ["allow"] * len(REAL), results
    for command, result in zip(REAL, results[-len(REAL):], strict=True):
        bash = subprocess.run(["bash", "-c", command], cwd=scene.ws, env=scene.env(),
                              capture_output=True, text=True, check=False)
        assert bash.stdout and result["output"] == bash.stdout, (command, bash.stdout, result)
    assert scene.changed() == []
