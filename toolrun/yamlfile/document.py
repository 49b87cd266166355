"""A parsed file: its data, and where each part of it is written (for located errors)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolrun.errors import Location, Problem
from toolrun.yamlfile.marks import JsonMarks, json_scan
from toolrun.yamlfile.paths import PathPart

if TYPE_CHECKING:
    import yaml


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its data, its nodes (None for an empty file) and non-fatal problems.

    A JSON document is read by the C ``json`` scanner and knows the positions of
    its first few levels (``json_marks``); anything deeper is located through
    the YAML node tree, built only when an error needs it. So is a YAML document
    read without the node tree (``root`` None, its positions in ``json_marks``).
    """

    file: str
    data: Any
    root: yaml.Node | None
    problems: tuple[Problem, ...] = ()
    json_marks: JsonMarks | None = None
    # False when no string can hold a NUL (no escape writes one): callers skip looking
    nul_possible: bool = True
    # A plan's turns left in the text (``data`` holds each as {"calls": [None, ...]}):
    # ``calls_of`` decodes one turn's calls when they are needed (parse_json's ``lean``)
    lean: bool = False
    # values that aliases added (event-built YAML): a region of a plan counts only its own
    aliased: int = 0

    def calls_of(self, turn: int) -> list[Any]:
        """The calls of turn ``turn`` of a lean document, decoded now (not kept)."""
        assert self.lean and self.json_marks is not None
        marks = self.json_marks
        value = json_scan(marks.text, marks.values[("turns", turn, "calls")])[0]
        return value  # type: ignore[no-any-return]

    def _nodes(self) -> yaml.Node | None:
        if self.root is None and self.json_marks is not None:
            return self.json_marks.yaml_root()
        return self.root

    def _unlocated(self, path: Sequence[PathPart]) -> Location:
        """Where to point when there is no node tree: the nearest recorded parent."""
        if self.json_marks is not None:
            return self.json_marks.nearest(tuple(path))
        return Location(self.file, 1, 1)

    def locate(self, path: Sequence[PathPart]) -> Location:
        """Where ``path`` (keys and indexes) is written; the nearest existing parent otherwise.

        The last mapping step points at the key itself, which is where a reader
        looks for a wrong or unknown key.
        """
        marks = self.json_marks
        if marks is not None:
            found = marks.key_location(tuple(path))
            if found is not None:
                return found
        node = self._nodes()
        if node is None:
            return self._unlocated(path)
        import yaml

        mark = node.start_mark
        for part in path:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                        mark = key_node.start_mark
                        node = value_node
                        break
                else:
                    break
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if 0 <= part < len(node.value):
                    node = node.value[part]
                    mark = node.start_mark
                else:
                    break
            else:
                break
        return Location(self.file, mark.line + 1, mark.column + 1)

    def item_locations(self, path: Sequence[PathPart]) -> list[Location] | None:
        """Where each item of the list at ``path`` starts (``value_location`` of each), all
        at once; None when they are not recorded (ask ``value_location``)."""
        marks = self.json_marks
        if marks is None:
            return None
        starts = marks.items.get(tuple(path))
        if starts is None:
            return None
        return marks.locations(starts)

    def value_location(self, path: Sequence[PathPart]) -> Location:
        """Where the *value* at ``path`` starts (not its key)."""
        marks = self.json_marks
        if marks is not None:
            found = marks.value_location(tuple(path))
            if found is not None:
                return found
        node = self._nodes()
        if node is None:
            return self._unlocated(path)
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        return Location(self.file, node.start_mark.line + 1, node.start_mark.column + 1)


def _child(node: yaml.Node, part: PathPart) -> yaml.Node | None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                return value_node  # type: ignore[no-any-return]
    elif (
        isinstance(node, yaml.SequenceNode)
        and isinstance(part, int)
        and 0 <= part < len(node.value)
    ):
        return node.value[part]  # type: ignore[no-any-return]
    return None
