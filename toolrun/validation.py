"""Turning pydantic validation errors into located, readable problems.

pydantic is imported only where a model is validated: a plain plan's start-up never
loads it (about 50 ms), and :class:`Invalid` can be caught without it.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from toolrun.errors import Problem
from toolrun.yamlfile import Document, PathPart, format_path

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound="BaseModel")


class Invalid(ValueError):
    """A pydantic ValidationError (``error``), raised as a class one catches without
    importing pydantic. Its text is the error's own."""

    def __init__(self, error: ValidationError) -> None:
        super().__init__()
        self.error = error

    def __str__(self) -> str:
        return str(self.error)


def validate(model: type[M], data: object) -> M:
    """``model.model_validate(data)``; :class:`Invalid` when ``data`` is not valid."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise Invalid(exc) from None


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` or an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        if word.lower() in lowered:
            close = [lowered[word.lower()]]
    return f" (did you mean {close[0]!r}?)" if close else ""


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The first BaseModel class found in an annotation (unwrapping Optional, list, dict)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is None:
        return None
    args = typing.get_args(annotation)
    if origin in (dict, typing.Mapping) or (isinstance(origin, type) and issubclass(origin, dict)):
        args = args[1:]
    for arg in args:
        found = _model_in(arg)
        if found is not None:
            return found
    if origin in (typing.Union, types.UnionType):
        return None
    return None


def keys_at(model: type[BaseModel], loc: Sequence[PathPart]) -> list[str]:
    """The keys (aliases where set) a mapping at ``loc`` inside ``model`` may hold."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return []
        if isinstance(part, int):
            continue
        field = None
        for name, info in current.model_fields.items():
            if part in (name, info.alias):
                field = info
                break
        if field is None:
            # a dict key or a union tag: stay on the same model when that looks right
            continue
        current = _model_in(field.annotation)
    if current is None:
        return []
    return [info.alias or name for name, info in current.model_fields.items()]


def problems_from_validation(
    exc: ValidationError,
    doc: Document,
    *,
    prefix: Sequence[PathPart] = (),
    model: type[BaseModel] | None = None,
) -> list[Problem]:
    """One Problem per pydantic error, located in ``doc`` under ``prefix``."""
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
        full = (*prefix, *loc)
        kind = err["type"]
        message = err["msg"]
        if kind == "extra_forbidden" and loc:
            key = str(loc[-1])
            allowed = keys_at(model, loc[:-1]) if model is not None else []
            message = f"unknown key {key!r}{did_you_mean(key, allowed)}"
        elif kind == "missing" and loc:
            message = f"missing required key {str(loc[-1])!r}"
        elif kind in ("value_error", "assertion_error"):
            message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        problems.append(Problem(doc.locate(full), format_path(full), message))
    # pydantic orders errors by field definition; readers expect file order.
    problems.sort(key=lambda p: (p.location.line, p.location.column) if p.location else (0, 0))
    return problems
