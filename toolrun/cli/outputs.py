"""``-o FILE`` in exec and check: repeatable, each file's report chosen by its suffix.

``.json`` the JSON report, ``.jsonl`` one result a line, ``.xml`` JUnit, ``.sarif`` (or
``.sarif.json``) SARIF 2.1.0, ``.md`` the Markdown summary. A name with another suffix is
a usage error (exit 2) before anything is decided or run, so a typo never leaves a job
green with no report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: suffix → report kind
SUFFIXES = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".xml": "junit",
    ".sarif": "sarif",
    ".md": "summary",
}
_SHOWN = ".json, .jsonl, .xml (JUnit), .sarif (SARIF), .md (summary)"


@dataclass(frozen=True, slots=True)
class Output:
    """One ``-o`` file and the report it gets."""

    path: Path
    kind: str  # json | jsonl | junit | sarif | summary | github (--report-format only)


def output_option(what: str) -> Callable[[F], F]:
    """``-o/--output FILE``, repeatable."""
    return click.option(
        "-o",
        "--output",
        "outputs",
        type=click.Path(dir_okay=False, path_type=Path),
        multiple=True,
        metavar="FILE",
        help=f"Also write {what} here, in the format its name ends in: {_SHOWN}; "
        "repeatable (each file gets its own report).",
    )


def kind_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".sarif.json"):  # the other name GitHub's upload-sarif takes
        return "sarif"
    return SUFFIXES.get(path.suffix.lower())


def resolve(
    outputs: Sequence[Path], report_format: str | None = None, hint: str = ""
) -> tuple[Output, ...]:
    """Each ``-o`` file with its report: ``report_format`` when given, else its suffix.
    click.BadParameter (exit 2) naming ``-o`` for a name of no known suffix, or a file
    named twice."""
    seen: set[Path] = set()
    out = []
    for path in outputs:
        key = Path(path).expanduser().absolute()
        if key in seen:
            raise click.BadParameter(f"{str(path)!r} is given twice", param_hint="'-o'")
        seen.add(key)
        kind = report_format or kind_of(path)
        if kind is None:
            raise click.BadParameter(
                f"cannot tell the report format from the name {str(path)!r}: name the file "
                f"{_SHOWN}{hint}",
                param_hint="'-o'",
            )
        out.append(Output(path, kind))
    return tuple(out)


def write(output: Output, chunks: Iterable[str]) -> str | None:
    """Write one report (its folder made if need be); why it cannot be written, else None."""
    try:
        output.path.parent.mkdir(parents=True, exist_ok=True)
        with output.path.open("w", encoding="utf-8", errors="backslashreplace") as fh:
            for chunk in chunks:
                fh.write(chunk)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
