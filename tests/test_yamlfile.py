from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from toolrun.errors import Location
from toolrun.yamlfile import DocumentError, format_path, load_document, parse_text

PLAN = """\
turns:
  - calls:
      - {tool: Read, input: {file_path: a.py}}
      - tool: Edit
        input:
          file_path: b.py
"""


def test_the_c_loader_is_used_when_present() -> None:
    from toolrun import yamlfile

    if yaml.__with_libyaml__:
        assert yamlfile._Loader is yaml.CSafeLoader


def test_locate_points_at_keys_and_items() -> None:
    doc = parse_text(PLAN, "p.yaml")
    assert doc.locate(("turns", 0, "calls", 0, "input", "file_path")) == Location("p.yaml", 3, 30)
    assert doc.locate(("turns", 0, "calls", 1, "tool")) == Location("p.yaml", 4, 9)
    assert doc.locate(("turns", 0, "calls", 1, "input", "file_path")) == Location("p.yaml", 6, 11)


def test_locate_falls_back_to_the_nearest_parent() -> None:
    doc = parse_text(PLAN, "p.yaml")
    assert doc.locate(("turns", 0, "calls", 1, "input", "old_string")) == Location("p.yaml", 5, 9)
    assert doc.locate(("turns", 7)) == Location("p.yaml", 1, 1)


def test_value_location_points_at_the_value() -> None:
    doc = parse_text(PLAN, "p.yaml")
    assert doc.value_location(("turns", 0, "calls", 1)) == Location("p.yaml", 4, 9)
    assert doc.value_location(("turns", 0, "calls", 0)) == Location("p.yaml", 3, 9)


def test_duplicate_keys_are_reported_not_silently_dropped() -> None:
    doc = parse_text("a: 1\nb: 2\na: 3\n", "d.yaml")
    assert doc.data == {"a": 3, "b": 2}
    assert [str(p) for p in doc.problems] == ["d.yaml:3:1: a: duplicate key 'a'"]


def test_yaml_syntax_error_names_line_and_column() -> None:
    with pytest.raises(DocumentError) as info:
        parse_text("calls:\n  - {tool: Read\n", "bad.yaml")
    assert str(info.value.problem).startswith("bad.yaml:3:1: invalid YAML: ")


def test_json_is_checked_strictly(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{\n  "calls": [],\n}\n')
    with pytest.raises(DocumentError) as info:
        load_document(path, display="plan.json")
    assert str(info.value.problem) == (
        "plan.json:3:1: invalid JSON: Expecting property name enclosed in double quotes"
    )


def test_json_positions_work_like_yaml(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{"calls": [\n  {"tool": "Read", "input": {"file_path": 1}}\n]}\n')
    doc = load_document(path, display="plan.json")
    assert doc.locate(("calls", 0, "input", "file_path")) == Location("plan.json", 2, 30)


def test_missing_file_and_directory_and_binary(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"^nope.yaml: no such file$"):
        load_document(tmp_path / "nope.yaml", display="nope.yaml")
    with pytest.raises(DocumentError, match=r"is a directory"):
        load_document(tmp_path, display="dir")
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"calls: \xff\xfe\n")
    with pytest.raises(DocumentError, match=r"^b.yaml:1:1: not UTF-8 text \(byte 7\)$"):
        load_document(binary, display="b.yaml")


def test_format_path() -> None:
    assert format_path(("turns", 1, "calls", 0, "input", "file_path")) == (
        "turns[1].calls[0].input.file_path"
    )
    assert format_path(()) == ""


def test_json_deep_positions_fall_back_to_the_node_tree() -> None:
    text = '{"turns": [{"calls": [\n  {"tool": "Read",\n   "input": {"file_path": 1, "x": [1, {"y": 2}]}}\n]}]}'
    doc = parse_text(text, "p.json", json_syntax=True)
    assert doc.root is None  # not built unless needed
    assert doc.value_location(("turns", 0, "calls", 0)) == Location("p.json", 2, 3)
    assert doc.locate(("turns", 0, "calls", 0, "input", "file_path")) == Location("p.json", 3, 14)
    assert doc.locate(("turns", 0, "calls", 0, "input", "x", 1, "y")) == Location("p.json", 3, 40)


def test_json_duplicate_keys_are_reported() -> None:
    doc = parse_text('{"calls": [], "name": "a",\n "name": "b"}', "d.json", json_syntax=True)
    assert doc.data == {"calls": [], "name": "b"}
    assert [str(p) for p in doc.problems] == ["d.json:2:2: name: duplicate key 'name'"]


def test_json_data_is_exactly_what_json_decodes() -> None:
    # (YAML 1.1 would read -0.5e3 as a string: JSON files never go through YAML for data)
    text = '{"a": [1, 2.5, "x\\u00e9", true, null, {"b": {"c": [[], {}]}}], "d": -0.5e3}'
    assert parse_text(text, "f.json", json_syntax=True).data == json.loads(text)


def test_yaml_is_built_from_events_without_keeping_a_node_tree() -> None:
    doc = parse_text(PLAN, "p.yaml")
    assert doc.root is None  # only shallow positions are kept; the tree is built on demand
    assert doc.value_location(("turns", 0, "calls", 1)) == Location("p.yaml", 4, 9)
    # deeper than the kept positions: located through the node tree, built now
    assert doc.locate(("turns", 0, "calls", 1, "input", "file_path")) == Location("p.yaml", 6, 11)


def test_anchors_merge_keys_and_odd_tags_still_work() -> None:
    text = "base: &b {tool: Read}\ncalls:\n  - *b\n  - {<<: *b, id: x}\nwhen: 2026-11-29\n"
    doc = parse_text(text, "a.yaml")
    assert doc.data["calls"] == [{"tool": "Read"}, {"tool": "Read", "id": "x"}]
    assert str(doc.data["when"]) == "2026-11-29"
    with pytest.raises(DocumentError, match=r"^t.yaml:1:4: invalid YAML: could not determine"):
        parse_text("a: !weird 1\n", "t.yaml")
    with pytest.raises(DocumentError, match=r"expected a single document"):
        parse_text("a: 1\n---\nb: 2\n", "m.yaml")
