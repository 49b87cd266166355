"""The one YAML/JSON entry point: data plus where it is written, so errors can name line
and column.

JSON is read by the C ``json`` scanner (:mod:`.jsondoc`); YAML by PyYAML's C parser, its
events built into data directly (:mod:`.events`), or through its node tree
(:mod:`.nodes`) for what only that reads. Positions of the shallow levels are recorded as
the file is read (:mod:`.marks`); deeper ones come from the node tree, built only when an
error needs one (:class:`.document.Document`). PyYAML is imported only for YAML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun.lazy import exports
from toolrun.yamlfile.document import Document
from toolrun.yamlfile.errors import MAX_ALIASED, MAX_DEPTH, DocumentError
from toolrun.yamlfile.files import load_document, parse_text, read_text
from toolrun.yamlfile.jsondoc import parse_json
from toolrun.yamlfile.marks import MARK_DEPTH
from toolrun.yamlfile.outline import TurnsOutline, outline_turns
from toolrun.yamlfile.paths import NUL_MESSAGE, PathPart, format_path, nul_paths

if TYPE_CHECKING:
    from toolrun.yamlfile.nodes import _Builder
    from toolrun.yamlfile.pyyaml import _Loader

# the YAML builders' own names load with PyYAML, on first use
__getattr__ = exports(__name__, {"_Builder": "nodes", "_Loader": "pyyaml"})

__all__ = [
    "MARK_DEPTH",
    "MAX_ALIASED",
    "MAX_DEPTH",
    "NUL_MESSAGE",
    "Document",
    "DocumentError",
    "PathPart",
    "TurnsOutline",
    "_Builder",
    "_Loader",
    "format_path",
    "load_document",
    "nul_paths",
    "outline_turns",
    "parse_json",
    "parse_text",
    "read_text",
]
