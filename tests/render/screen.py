"""Reading toolrun's terminal tables back, as a person reads them: the columns from the
header's rule, a row from each line that starts at the left edge, a cell's text joined
from its lines; cards from their labelled fields. Independent of toolrun's own code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cli.terminal import environment_without_size, open_terminal, read_to_end

ANSI = re.compile(r"\x1b\[[0-9;]*m")
WORKTREE = str(Path(__file__).resolve().parents[2])


def at_terminal(cwd: Path, columns: int, *argv: str, home: Path) -> tuple[str, int]:
    """toolrun's whole output (colour codes removed) under a real pseudo-terminal
    ``columns`` wide, COLUMNS unset, and its exit code."""
    ours, theirs = open_terminal(columns)
    env = {k: v for k, v in environment_without_size().items() if k != "NO_COLOR"}
    env |= {"HOME": str(home), "PYTHONPATH": WORKTREE}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", *argv],
        cwd=cwd, stdin=theirs, stdout=theirs, stderr=theirs, close_fds=True, env=env,
    )  # fmt: skip
    os.close(theirs)
    seen = read_to_end(ours)
    code = proc.wait(timeout=120)
    os.close(ours)
    return ANSI.sub("", seen.decode().replace("\r\n", "\n")), code


def piped(cwd: Path, *argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**environment_without_size(), "HOME": str(home), "PYTHONPATH": WORKTREE}
    return subprocess.run(
        [sys.executable, "-m", "toolrun", *argv],
        cwd=cwd, capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip


def unwrapped(text: str) -> str:
    """A cell's text with every space and line break gone: what wrapping cannot change."""
    return "".join(text.split())


def table_rows(lines: list[str]) -> list[dict[str, str]]:
    """The rows of a table (its header, its rule, its rows), each cell's lines joined
    with spaces; or, when ``lines`` holds cards, each card's fields."""
    rule = next((i for i, line in enumerate(lines) if re.fullmatch(r"-+( +-+)*", line)), None)
    if rule is None:
        return card_rows(lines)
    spans = [m.span() for m in re.finditer(r"-+", lines[rule])]
    names = [lines[rule - 1][a:b].strip() for a, b in spans]
    rows: list[dict[str, list[str]]] = []
    for line in lines[rule + 1 :]:
        cells = [
            line[a : (spans[i + 1][0] if i + 1 < len(spans) else len(line))].strip()
            for i, (a, _) in enumerate(spans)
        ]
        if cells[0]:
            rows.append({n: [] for n in names})
        for name, cell in zip(names, cells, strict=True):
            if cell:
                rows[-1][name].append(cell)
    return [{n: " ".join(parts) for n, parts in row.items()} for row in rows]


def card_rows(lines: list[str]) -> list[dict[str, str]]:
    """Cards: a line at the left edge (status, id, call), the call's continuation
    indented, then ``    label: value`` lines with the value's continuation under it."""
    rows: list[dict[str, list[str]]] = []
    field = "head"
    for line in lines:
        if not line.startswith(" "):
            rows.append({"head": [line.strip()]})
            field = "head"
            continue
        labelled = re.match(r"    ([a-z][a-z #]*): (.*)$", line)
        if labelled:
            field = labelled[1]
            rows[-1][field] = [labelled[2].strip()]
        else:
            rows[-1].setdefault(field, []).append(line.strip())
    return [{n: " ".join(parts) for n, parts in row.items()} for row in rows]
