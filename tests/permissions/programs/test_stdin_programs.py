"""Programs fed their program text by the command itself are not analysable (issue 24, point 5).

Each row names where the spelling comes from. The program text arrives by a here-string,
a here-doc, a pipe, ``-``, ``/dev/stdin``, ``/dev/fd/0``, ``/proc/self/fd/0`` or ``<(...)``;
exactly as ``bash <<< CMD`` and ``python -c CODE`` are, such a command is never allowed by a
rule, and under bypassPermissions it asks while a deny rule exists.
"""

from __future__ import annotations

import pytest

from tests.permissions.conftest import Tree, decide
from tests.permissions.programs.helpers import analysable
from toolrun.permissions.programs.streams import is_stream
from toolrun.permissions.words import Word

FED = [
    # (command, source)
    ("perl <<< 'unlink \"f\"'", "issue 24 corpus"),
    ("node - <<< 'require(\"fs\").unlinkSync(\"f\")'", "issue 24 corpus"),
    ("make -f /dev/stdin <<< $'x:\\n\\trm f'", "issue 24 corpus"),
    ("ruby <<< 'File.delete(\"f\")'", "by hand"),
    ("php <<< '<?php unlink(\"f\");'", "by hand (php manual: CLI reads stdin)"),
    ("perl - <<EOF\nunlink 'f'\nEOF", "by hand"),
    ("cat x | node", "by hand"),
    ("echo 'unlink q(f)' | perl", "by hand"),
    ("python3 - <<< 'import os'", "python docs: '-' reads stdin"),
    ("python3 /dev/stdin <<< 'import os'", "by hand"),
    ("pypy3 <<< 'import os'", "by hand"),
    ("python3.12 <<< 'import os'", "by hand"),
    ("perl /dev/fd/0 <<< 'unlink q(f)'", "by hand"),
    ("perl /proc/self/fd/0 <<< 'unlink q(f)'", "by hand"),
    ("perl ../../../../../../dev/stdin <<< 'unlink q(f)'", "by hand"),
    ("perl //dev/./stdin <<< 'unlink q(f)'", "by hand"),
    ("node <(echo 'x')", "by hand"),
    ("node < <(echo 'x')", "by hand"),
    ("node -r /dev/stdin app.js <<< 'x'", "node docs: --require"),
    ("lua - <<< 'os.remove(\"f\")'", "lua manual: '-' reads stdin"),
    ("lua <<< 'os.remove(\"f\")'", "lua manual: no script, stdin not a terminal"),
    ("Rscript - <<< 'file.remove(\"f\")'", "by hand"),
    ("R --no-save <<< 'file.remove(\"f\")'", "R manual: R reads commands from stdin"),
    ("R -f /dev/stdin <<< 'x'", "R manual: --file"),
    ("tclsh <<< 'file delete f'", "tclsh manual"),
    ("osascript <<< 'do shell script \"rm f\"'", "osascript man page"),
    ("deno run - <<< 'Deno.removeSync(\"f\")'", "deno docs: run -"),
    ("echo 'Deno.removeSync(\"f\")' | deno", "deno docs: the REPL"),
    ("bun run - <<< 'x'", "bun docs: run -"),
    ("julia <<< 'rm(\"f\")'", "by hand"),
    ("awk -f /dev/stdin <<< 'BEGIN{system(\"rm f\")}'", "GNU awk manual: -f"),
    ("awk -f - README.md <<< 'BEGIN{system(\"rm f\")}'", "GNU awk manual: -f"),
    ("sed -f /dev/stdin README.md <<< '1e rm f'", "GNU sed manual: e command"),
    ("sed -f - README.md <<< '1e rm f'", "GNU sed manual: -f"),
    ("make -f - <<< $'x:\\n\\trm f'", "GNU make manual: -f -"),
    ("make --file=/dev/stdin <<< 'x'", "GNU make manual: --file"),
    ("make --eval=$'x:\\n\\trm f' x", "GNU make manual: --eval"),
    ("dc <<< '!rm f'", "dc manual: ! runs a shell command"),
    ("ed README.md <<< '!rm f'", "ed manual: ! runs a shell command"),
    ("sqlite3 db <<< '.shell rm f'", "sqlite3 CLI docs: .shell"),
    ("sqlite3 db '.shell rm f'", "sqlite3 CLI docs: SQL operands"),
    ("gdb -batch <<< 'shell rm f'", "gdb manual: shell"),
    ("gdb -batch -ex 'shell rm f'", "gdb manual: -ex"),
    ("at now <<< 'rm f'", "at man page"),
    ("crontab - <<< '* * * * * rm f'", "crontab man page"),
    ("expect -c 'exec rm f'", "expect man page"),
    ("npm exec -- node <<< 'x'", "npm docs: npm exec"),
    ("npm exec -c 'rm f'", "npm docs: npm exec --call"),
    ("npx node <<< 'x'", "by hand"),
    ("yarn node <<< 'x'", "yarn docs: yarn node"),
    ("pnpm dlx node <<< 'x'", "pnpm docs: dlx"),
    ("parallel ::: 'rm f'", "GNU parallel manual"),
    ("echo 'rm f' | parallel", "GNU parallel manual"),
    ("echo '-e unlink(q(f))' | xargs perl", "GNU findutils manual: xargs"),
    ("echo '-n 1e\\ rm\\ f' | xargs sed", "GNU findutils manual: xargs"),
    ("cat cmds | xargs sh", "by hand"),
    ("echo '. -delete' | xargs find", "xargs.py docstring"),
    ("env -S 'rm f'", "GNU coreutils manual: env -S"),
    ("busybox sh <<< 'rm f'", "busybox docs"),
    ("source /dev/stdin <<< 'rm f'", "bash manual"),
    (". ../../../../../dev/stdin <<< 'rm f'", "by hand"),
    ("bash ../../../../../dev/stdin <<< 'rm f'", "by hand"),
    ("cat x | { perl; }", "by hand: a group reads the pipe"),
    ("cat x | ( node )", "by hand: a subshell reads the pipe"),
    ("{ true; perl; } < code.pl", "by hand: the group's redirection reaches every command"),
    ("cat <<EOF | perl\nunlink 'f'\nEOF", "by hand: the pipe hangs on a here-doc"),
]


@pytest.mark.parametrize(("command", "source"), FED)
def test_a_program_fed_its_text_is_not_analysable(command: str, source: str) -> None:
    assert not analysable(command), source


@pytest.mark.parametrize(("command", "source"), FED[:12])
def test_bypass_with_a_deny_rule_asks(tree: Tree, command: str, source: str) -> None:
    decision = decide(tree, "Bash", {"command": command}, deny=["Bash(rm *)"],
                      mode="bypassPermissions")
    assert decision.decision == "ask", (source, decision.reason)


EVERYDAY = [
    "python3 tool.py < data.json", "python3 -m pytest -q", "cat data | python3 tool.py",
    "node app.js", "perl script.pl <<< data", "make", "make -j4 test", "make -f build.mk all",
    "awk '{print $1}' README.md", "sed -n 1p README.md", "cat x | awk '{print $2}'",
    "ruby app.rb", "echo 1 | sed s/1/2/", "python3 --version", "node --version < /dev/null",
    "npm test", "npm run build", "yarn build", "deno fmt", "bun install", "find . | xargs grep x",
    "cat README.md | grep x | wc -l", "python3 dev/run.py",
    "crontab -l", "sqlite3 db.sqlite", "lua script.lua",
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_programs_reading_files_stay_analysable(command: str) -> None:
    assert analysable(command)


@pytest.mark.parametrize(("value", "stream"), [
    ("-", True), ("/dev/stdin", True), ("/dev/fd/0", True), ("/proc/self/fd/0", True),
    ("/proc/1234/fd/0", True), ("//dev//stdin", True), ("/tmp/../dev/stdin", True),
    ("../../../dev/stdin", True), ("x.py", False), ("dev/run.py", False), ("./-", False),
    ("/usr/bin/tool", False), ("../lib/x.pl", False),
])  # fmt: skip
def test_stream_words(value: str, stream: bool) -> None:
    assert is_stream(Word(value, value)) is stream


def test_tilde_climbs_to_a_stream() -> None:
    assert is_stream(Word("~/../../dev/stdin", "~/../../dev/stdin", tilde=True))


def test_a_word_known_only_at_run_time_may_be_a_stream() -> None:
    assert is_stream(Word("$F", None))
