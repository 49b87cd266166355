"""A hypothesis grammar of shell constructs around a marker program, run under real bash.

Used by ``test_differential.py`` (a bounded run in the normal suite) and by
``bench/differential_bash.py`` (a long run with ``--count``). Each generated command
is decided by toolrun under ``deny: ["Bash(marker *)"]`` (default mode,
bypassPermissions, and default mode with allow rules for every other program used) and then really run by bash in a scratch directory with ``marker``
on PATH; whenever bash ran the marker, toolrun must not have allowed the command.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind
from toolrun.permissions import PermissionEngine

MARKER = "marker"
DENY = f"Bash({MARKER} *)"
_SCRIPT = '#!/bin/sh\necho "$0 $*" >> "$MARKER_LOG"\n'

# ------------------------------------------------------------------ the grammar

_args = st.lists(
    st.sampled_from(["a", "-x", "--y", "1", "'q r'", '"s"', "$HOME", "*", "."]), max_size=2
).map(" ".join)
#: Ways to spell the marker's name that bash resolves to it.
_names = st.sampled_from([
    MARKER, f"\\{MARKER}", f"'{MARKER}'", f'"{MARKER}"', "mar''ker", 'm"ark"er', "ma\\rker",
    f"${{M:-{MARKER}}}", f"$(echo {MARKER})", f"`echo {MARKER}`", f"{{{MARKER},}}",
    "mark{e,}r", f"$'{MARKER}'", "$'\\x6darker'", f"/scratchbin/{MARKER}", f"{MARKER}\\\n",
    f"M={MARKER}; $M", "m${E}arker", "marke[r]", "ma?ker",
])  # fmt: skip
_wrappers = st.sampled_from([
    "", "command ", "builtin ", "env ", "env A=1 ", "nice ", "nice -n 1 ", "nohup ",
    "timeout 5 ", "time ", "stdbuf -o0 ", "A=1 ", "A=$(true) ", "exec ", "eval ", "sudo -n ",
    "xargs ", "LD_PRELOAD= ", "env -- ", "command -p ", "\\command ",
])  # fmt: skip
_safe = st.sampled_from([
    "true", "echo hi", "ls", "cat /dev/null", "pwd", "echo $HOME", "printf x", ": ok",
    "echo -n", "test -f x", "[ -d . ]", "echo a > out.txt", "ls *.txt", "cat < /dev/null",
])  # fmt: skip


@st.composite
def _marker_call(draw: st.DrawFn) -> str:
    return f"{draw(_wrappers)}{draw(_names)} {draw(_args)}".rstrip()


@st.composite
def _code_string(draw: st.DrawFn) -> str:
    """The marker run from inside a string some program or builtin executes."""
    inner = draw(_marker_call())
    quoted = shlex.quote(inner)
    return draw(st.sampled_from([
        f"bash -c {quoted}", f"sh -c {quoted}", f"eval {quoted}", f"trap {quoted} EXIT",
        f"awk 'BEGIN{{system(\"{MARKER}\")}}'", f"echo x | sed '1e {MARKER}'",
        f"echo x | sed 's/.*/{MARKER}/e'", f"find . -maxdepth 0 -exec {MARKER} \\;",
        f"find . -maxdepth 0 -execdir {MARKER} {{}} +", f"echo a | xargs {MARKER}",
        f"echo a | xargs -I{{}} {MARKER} {{}}", f"echo {MARKER} | bash",
        f"bash <<< {quoted}", f"x='a[$({MARKER})]'; [[ $x -eq 1 ]]",
        f"test -v 'a[$({MARKER})]'", f"printf -v 'a[$({MARKER})]' x",
        f"y='$({MARKER})'; echo ${{y@P}}", f"echo ${{z=$({MARKER})}}",
        f"python3 -c 'import os; os.system(\"{MARKER}\")'", f"watch -n 1 -g {MARKER}",
        f"env -S {quoted}", f"timeout 5 sh -c {quoted}", f"command eval {quoted}",
        f"source /dev/stdin <<< {quoted}",
    ]))  # fmt: skip


_leaf = st.one_of(_marker_call(), _safe, _code_string())


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: f"{p[0]}; {p[1]}"),
        pair.map(lambda p: f"{p[0]} && {p[1]}"),
        pair.map(lambda p: f"{p[0]} || {p[1]}"),
        pair.map(lambda p: f"{p[0]} | {p[1]}"),
        pair.map(lambda p: f"{p[0]} |& {p[1]}"),
        pair.map(lambda p: f"{p[0]}\n{p[1]}"),
        pair.map(lambda p: f"{p[0]} &\n{p[1]}; wait"),
        pair.map(lambda p: f"{p[0]} \\\n&& {p[1]}"),
        children.map(lambda c: f"({c})"),
        children.map(lambda c: f"{{ {c}; }}"),
        children.map(lambda c: f"echo $({c})"),
        children.map(lambda c: f'echo "$({c})"'),
        children.map(lambda c: f"echo `{c}`"),
        children.map(lambda c: f"cat <({c})"),
        children.map(lambda c: f"! {c}"),
        children.map(lambda c: f"if true; then {c}; fi"),
        children.map(lambda c: f"for i in 1; do {c}; done"),
        children.map(lambda c: f"f() {{ {c}; }}; f"),
        children.map(lambda c: f"{c} > /dev/null 2>&1"),
        children.map(lambda c: f"{c} <<< x"),
        children.map(lambda c: f"cat <<EOF\n$({c})\nEOF"),
        children.map(lambda c: f"cat <<EOF | {c}\nx\nEOF"),
        children.map(lambda c: f"echo hi\n\\{c}"),
        children.map(lambda c: f"{c} # comment"),
        children.map(lambda c: f"bash -c {shlex.quote(c)}"),
        children.map(lambda c: f"echo {{a,b}} && {c}"),
        children.map(lambda c: f"case x in x) {c};; esac"),
        children.map(lambda c: f"while false; do :; done; {c}"),
        children.map(lambda c: f"echo x > >({c})"),
        children.map(lambda c: f"((1)) && {c}"),
        children.map(lambda c: f"[[ -n x ]] && {c}"),
        children.map(lambda c: f"{{ {c}; }} 2>&1 | cat"),
        children.map(lambda c: f"coproc {c}"),
        children.map(lambda c: f"cat <<'EOF'\n$({c})\nEOF\n{c}"),
        children.map(lambda c: f"echo a\t;\t{c}"),
        children.map(lambda c: f"cat <<EOF\n`{c}`\nEOF"),
        children.map(lambda c: f'echo "${{x:-`{c}`}}"'),
        children.map(lambda c: f"echo ${{x:-$({c})}}"),
        children.map(lambda c: f"echo a\r\n{c}"),
    )


_structured = st.recursive(_leaf, _combine, max_leaves=4)
_NOISE = ["\\\n", "\n", ";", "'", '"', "\\", " ", "#", "\t", "{", "}", "(", ")", "&", "|",
          "`", "$", "<", ">", "\r"]  # fmt: skip


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    """A structured command with a few shell metacharacters spliced in anywhere: the
    places where tree-sitter's recovery and bash's tokenizer part ways."""
    text = draw(_structured)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(_NOISE)) + text[at:]
    return text


commands = st.one_of(_structured, _mutated())


# ------------------------------------------------------------------ running it


@dataclass(frozen=True)
class Outcome:
    command: str
    ran_marker: bool
    default: str
    bypass: str
    allowing: str = "ask"

    @property
    def unsafe(self) -> bool:
        return self.ran_marker and "allow" in (self.default, self.bypass, self.allowing)


def make_bin(root: Path) -> Path:
    """A directory holding the marker program (and ``/scratchbin`` is not needed: the
    absolute spelling is rewritten to this directory)."""
    bindir = root / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    marker = bindir / MARKER
    marker.write_text(_SCRIPT)
    marker.chmod(marker.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return bindir


#: Allow rules for every other program the grammar uses: the deny must still win.
ALLOWING = tuple(
    f"Bash({p} *)"
    for p in ("echo", "ls", "cat", "printf", "find", "sed", "awk", "xargs", "env", "timeout",
              "nice", "command", "true", "test", "pwd", "wait", "tee", "bash", "sh", "trap")
)  # fmt: skip


def engines(workspace: Path) -> tuple[PermissionEngine, PermissionEngine, PermissionEngine]:
    source = SettingSource(SourceKind.TOOLRUN, workspace / "toolrun.yaml", 1, workspace)
    rules = (PermissionRule("deny", DENY, source),)
    default = PermissionEngine(Config(workspace=workspace, rules=rules))
    bypass = PermissionEngine(
        Config(workspace=workspace, rules=rules, default_mode="bypassPermissions")
    )
    allows = tuple(PermissionRule("allow", text, source) for text in ALLOWING)
    allowing = PermissionEngine(Config(workspace=workspace, rules=rules + allows))
    return default, bypass, allowing


def run_one(command: str, scratch: Path, bindir: Path) -> Outcome:
    """Decide ``command`` as toolrun would, then run it under bash in ``scratch``."""
    command = command.replace("/scratchbin/", f"{bindir}/")
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "home").mkdir(exist_ok=True)
    default_engine, bypass_engine, allowing_engine = engines(scratch)
    default = default_engine.decide("Bash", {"command": command}).decision
    bypass = bypass_engine.decide("Bash", {"command": command}).decision
    allowing = allowing_engine.decide("Bash", {"command": command}).decision
    log = scratch / "marker.log"
    env = {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "MARKER_LOG": str(log),
        "HOME": str(scratch / "home"),
        "LANG": "C",
    }
    try:
        subprocess.run(
            ["bash", "-c", command],
            cwd=scratch,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=5,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pass
    ran = log.exists()
    if ran:
        os.unlink(log)
    return Outcome(command, ran, default, bypass, allowing)
