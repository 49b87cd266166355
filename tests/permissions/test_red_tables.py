"""Red team of issue 24 (points 2, 3, 5, 6, 7, 8): spellings the first tests did not have.

Each class is the spelling that got through, plus other spellings of the same attack, each
row naming its public source. The engine must never allow them; the everyday rows beside
them must stay allowed (no false asks).
"""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide
from tests.permissions.programs.helpers import analysable

# -- point 5: programs fed their program text -------------------------------------------
# (command, source). Under bypassPermissions with `deny: Bash(rm *)` each one asks.
FED_PROGRAMS = [
    ("make -f- <<< $'all:\\n\\trm -f f'", "by hand: getopt glues -f's value (GNU make manual)"),
    ("make -sf - <<< 'x'", "by hand: a bundle, then -f's value"),
    ("make --mak=/dev/stdin <<< 'x'", "GNU make manual: --makefile, a getopt_long prefix"),
    ("make -f/dev/stdin <<< 'x'", "by hand: glued /dev/stdin"),
    ("python3 -m code <<< 'import os'", "Python docs: code module, an interactive console"),
    ("python3 -m pdb x.py <<< '!import os'", "Python docs: pdb reads commands from stdin"),
    ("python3 -um asyncio <<< 'x'", "Python docs: python -m asyncio REPL, bundled -u"),
    ("python3 -mcode <<< 'x'", "by hand: glued -m value"),
    ("vim -es <<< '!rm f'", "vim manual: -e -s Ex mode reads stdin"),
    ("vi -e README.md <<< '!rm f'", "vim manual: -e Ex mode"),
    ("nvim --headless -s - <<< 'x'", "neovim manual: -s scriptin"),
    ("vim -s /dev/stdin README.md <<< 'x'", "vim manual: -s {scriptin}"),
    ("emacs --script /dev/stdin <<< 'x'", "GNU Emacs manual: --script FILE"),
    ("emacs -batch -l /dev/stdin <<< 'x'", "GNU Emacs manual: -l FILE"),
    ("pwsh -Command - <<< 'x'", "PowerShell docs: -Command - reads stdin"),
    ("pwsh -File - <<< 'x'", "PowerShell docs: -File -"),
    ("tcsh <<< 'rm f'", "by hand: a shell toolrun did not name"),
    ("ksh93 -s <<< 'rm f'", "by hand: ksh93 -s"),
    ("yash <<< 'rm f'", "yash manual: reads commands from stdin"),
    ("bash -O extglob <<< 'rm f'", "GNU bash manual: -O shopt_option takes a value"),
    ("bash +O extglob <<< 'rm f'", "GNU bash manual: +O unsets, still takes a value"),
    ("bash -o posix <<< 'rm f'", "GNU bash manual: -o option-name"),
    ("bash +x <<< 'rm f'", "GNU bash manual: + turns an option off"),
    ("sh --rcfile x <<< 'rm f'", "GNU bash manual: --rcfile file"),
    ("gdb -batch -x /dev/stdin <<< 'shell rm f'", "GDB manual: -x file, one-dash words"),
    ("ipython <<< 'import os'", "by hand: a REPL reads stdin"),
    ("guile <<< '(system \"rm f\")'", "by hand: a REPL reads stdin"),
    ("gnuplot <<< 'system \"rm f\"'", "gnuplot manual: system"),
    ("cmake -P /dev/stdin <<< 'x'", "CMake docs: -P script"),
    ("sftp host <<< '!rm f'", "OpenSSH sftp(1): !command runs a local shell"),
    ("echo '!rm f' | ftp", "ftp(1): ! runs a local shell"),
    ("lldb -s /dev/stdin <<< 'x'", "LLDB docs: -s source file"),
]
INLINE_CODE = [
    ("man -P 'rm -rf x' ls", "man-db man(1): -P pager runs through sh"),
    ("man --pager='rm f' ls", "man-db man(1): --pager=pager"),
    ("man -H'rm f' ls", "man-db man(1): -H browser"),
]
STILL_ANALYSABLE = [
    "make -f build.mk all", "make -sf build.mk", "python3 -m json.tool < x.json",
    "python3 -m pytest -q", "python3 -W ignore tool.py < data", "vim README.md",
    "gdb -batch ./prog", "bash script.sh", "bash -o errexit script.sh", "cmake -P build.cmake",
    "man ls", "man -k printf",
]


@pytest.mark.parametrize(("command", "source"), FED_PROGRAMS + INLINE_CODE)
def test_fed_and_inline_programs_are_not_analysable(command: str, source: str) -> None:
    assert not analysable(command), source


@pytest.mark.parametrize(("command", "source"), FED_PROGRAMS + INLINE_CODE)
def test_fed_programs_ask_in_bypass_with_a_deny_rule(tree: Tree, command: str, source: str
                                                     ) -> None:
    decision = decide(tree, "Bash", {"command": command}, deny=["Bash(rm *)"],
                      mode="bypassPermissions")
    assert decision.decision == "ask", (source, decision.reason)


@pytest.mark.parametrize("command", STILL_ANALYSABLE)
def test_programs_given_a_file_stay_analysable(command: str) -> None:
    assert analysable(command)


# -- points 2/3: a file command behind a deny-only wrapper opens its files all the same ----
WRAPPED_FILES = [
    ("env cat .env", "by hand: env runs its operands (coreutils manual)"),
    ("exec cat .env", "GNU bash manual: exec replaces the shell with the command"),
    ("sudo cat src/.env", "sudo(8)"),
    ("env -i X=1 head -n1 .env", "coreutils manual: env -i, NAME=VALUE"),
    ("env grep -f .env README.md", "by hand: an option's file behind env"),
    ("setsid -w sed -n p .env", "util-linux setsid(1)"),
]
WRAPPED_WRITES = [
    ("exec sort -o ~/.bashrc README.md", "by hand: sort -o behind exec"),
    ("env tee ~/.bashrc", "by hand: tee behind env"),
    ("sudo find . -fprint ~/.bashrc", "findutils manual -fprint, behind sudo"),
    ("env X=1 cp README.md .git/config", "by hand: cp behind env"),
]


@pytest.mark.parametrize(("command", "source"), WRAPPED_FILES + WRAPPED_WRITES)
def test_wrapped_file_commands_are_checked_in_bypass(tree: Tree, command: str, source: str
                                                     ) -> None:
    decision = decide(tree, "Bash", {"command": command}, deny=["Read(./.env)",
                      "Read(./src/.env)"], mode="bypassPermissions")
    assert decision.decision != "allow", (source, decision.reason)


@pytest.mark.parametrize("command", ["env LC_ALL=C sort README.md", "sudo ls src",
                                     "exec cat README.md"])
def test_wrapped_everyday_reads_are_not_refused(tree: Tree, command: str) -> None:
    decision = decide(tree, "Bash", {"command": command}, deny=["Read(./.env)"],
                      mode="bypassPermissions")
    assert decision.decision == "allow", decision.reason


# -- point 7: compressors carry what they compress to a new name --------------------------
CARRIED = [
    ("zstd -rq src", "zstd(1): -r operates recursively on directories"),
    ("zstd --recursive src", "zstd(1): --recursive"),
    ("zstd -qr --rm .", "by hand: a bundle with r, the workspace"),
    ("lz4 -r src", "lz4(1): -r recursive"),
    ("zstd src/.env", "by hand: a single file becomes src/.env.zst"),
    ("zstd -c .env", "zstd(1): -c writes to stdout"),
]


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize(("command", "source"), CARRIED)
def test_compressors_are_reads_of_what_they_carry(tree: Tree, command: str, source: str,
                                                  mode: str) -> None:
    decision = decide(tree, "Bash", {"command": command},
                      deny=["Read(./.env)", "Read(./src/.env)"], mode=mode)
    assert decision.decision != "allow", (source, decision.reason)


# -- point 8: twins of the protected files ------------------------------------------------
TWINS = [
    ("echo x > ~/.config/fish/config.fish", "fish docs: config.fish runs at start"),
    ("echo x > ~/.config/fish/conf.d/x.fish", "fish docs: conf.d snippets"),
    ("echo x >> ~/.bash_aliases", "Debian's ~/.bashrc sources ~/.bash_aliases"),
    ("sort -o ~/.kshrc README.md", "ksh(1): $ENV, ~/.kshrc"),
    ("cp README.md ~/.mkshrc", "mksh(1): ~/.mkshrc"),
    ("echo x | tee ~/.cshrc", "csh(1): ~/.cshrc"),
    ("echo x > ~/.tcshrc", "tcsh(1): ~/.tcshrc"),
    ("echo '-o x' > ~/.curlrc", "curl manual: ~/.curlrc holds command-line options"),
    ("echo 'output_document=x' > ~/.wgetrc", "GNU wget manual: wgetrc commands"),
]


@pytest.mark.parametrize(("command", "source"), TWINS)
def test_protected_twins_ask_even_in_bypass(tree: Tree, command: str, source: str) -> None:
    decision = decide(tree, "Bash", {"command": command}, mode="bypassPermissions")
    assert decision.decision == "ask", (source, decision.reason)


def test_a_name_that_only_starts_like_a_twin_is_not_protected(tree: Tree) -> None:
    decision = decide(tree, "Bash", {"command": "echo x > ~/.config/fishy"},
                      mode="bypassPermissions")
    assert decision.decision == "allow", decision.reason
