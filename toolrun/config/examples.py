"""``toolrun.examples`` and ``toolrun.examplesFile``: the calls a config says its rules must
allow, ask or deny (its self-test), read with where each was written."""

from __future__ import annotations

import os
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, cast

from toolrun.config.models import MODE_ALIASES, PermissionMode, RuleExample
from toolrun.config.sources import _Loaded
from toolrun.errors import Problem
from toolrun.paths import display_path

if TYPE_CHECKING:
    from toolrun.config.schema import ExampleSpec
    from toolrun.yamlfile import Document


def _example(spec: ExampleSpec, doc: Document, where: tuple[str | int, ...]) -> RuleExample:
    from toolrun.yamlfile import format_path

    mode = MODE_ALIASES.get(spec.mode, spec.mode) if spec.mode is not None else None
    return RuleExample(
        expect=spec.expect,
        location=doc.value_location(where),
        path=format_path(where),
        call=spec.call,
        tool=spec.tool,
        input=MappingProxyType(dict(spec.input)) if spec.input is not None else None,
        mode=cast(PermissionMode | None, mode),
    )


def _collect_examples(loaded: list[_Loaded], problems: list[Problem]) -> tuple[RuleExample, ...]:
    """``toolrun.examples`` of every source, then each ``examplesFile`` (a list of examples,
    relative to its source's folder)."""
    out: list[RuleExample] = []
    for item in loaded:
        section = item.spec.toolrun
        if section is None:
            continue
        for i, spec in enumerate(section.examples or ()):
            out.append(_example(spec, item.doc, ("toolrun", "examples", i)))
        if section.examplesFile is None:
            continue
        from pydantic import TypeAdapter, ValidationError

        from toolrun.config.schema import ExampleSpec
        from toolrun.yamlfile import DocumentError, format_path, load_document

        path = Path(os.path.expanduser(section.examplesFile))
        path = path if path.is_absolute() else item.root / path
        try:
            doc = load_document(path, display=display_path(path))
        except DocumentError as exc:
            problems.append(exc.problem)
            continue
        data = doc.data
        prefix: tuple[str, ...] = ()
        if isinstance(data, dict) and "examples" in data:
            data, prefix = data["examples"], ("examples",)
        try:
            specs = TypeAdapter(list[ExampleSpec]).validate_python(data)
        except ValidationError as exc:
            for error in exc.errors():
                where = (*prefix, *error["loc"])
                problems.append(
                    Problem(doc.value_location(where), format_path(where), error["msg"])
                )
            continue
        out.extend(_example(s, doc, (*prefix, i)) for i, s in enumerate(specs))
    return tuple(out)
