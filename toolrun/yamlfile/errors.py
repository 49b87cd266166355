"""The limits every document is held to, and the located errors of breaking them or the syntax.

The limits give a file the same answer wherever it is read (validate, check, exec, hooks):
beyond them the file is a located problem at load time, never a RecursionError later on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolrun.errors import Location, Problem

if TYPE_CHECKING:
    import yaml

MAX_DEPTH = 100  # mappings and lists nested in one another
MAX_ALIASED = 1_000_000  # values that YAML aliases may add to a document ("billion laughs")


class DocumentError(Exception):
    """The file cannot be read or parsed; ``problem`` says where."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def check_depth(file: str, mark: Any, levels: int) -> None:
    if levels > MAX_DEPTH:
        raise DocumentError(
            Problem(
                Location(file, int(mark.line) + 1, int(mark.column) + 1),
                "",
                f"nested more than {MAX_DEPTH} levels deep",
            )
        )


def too_many_aliased(file: str, mark: Any) -> DocumentError:
    return DocumentError(
        Problem(
            Location(file, int(mark.line) + 1, int(mark.column) + 1),
            "",
            f"aliases expand to more than {MAX_ALIASED:,} values",
        )
    )


def at_offset(text: str, file: str, index: int, message: str) -> DocumentError:
    """The error ``message`` at character ``index`` of ``text``."""
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    return DocumentError(Problem(Location(file, line + 1, column + 1), "", message))


def syntax_problem(file: str, exc: yaml.YAMLError, text: str) -> Problem:
    import yaml

    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        at = max(0, min(int(exc.position), len(text)))
        line = text.count("\n", 0, at)
        column = at - (text.rfind("\n", 0, at) + 1)
        message = f"invalid YAML: character #x{int(exc.character):04X} is not allowed: {exc.reason}"
        return Problem(Location(file, line + 1, column + 1), "", message)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}"
    if context:
        message += f" ({context})"
    if mark is None:
        return Problem(Location(file, 1, 1), "", message)
    return Problem(Location(file, mark.line + 1, mark.column + 1), "", message)
