from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from toolrun.errors import Location
from toolrun.yamlfile import (
    MAX_DEPTH,
    Document,
    DocumentError,
    _Builder,
    _Loader,
    format_path,
    load_document,
    parse_text,
)

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
        assert type(yamlfile._Loader("a: 1")) is yaml.CSafeLoader


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
    with pytest.raises(DocumentError, match=r"^b.yaml:1:8: not UTF-8 text \(byte 7\)$"):
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


# -- inputs that used to crash the loader: each is a located problem now (issue 12) ---------


def _problem(text: str, file: str = "t.yaml") -> str:
    with pytest.raises(DocumentError) as info:
        parse_text(text, file, json_syntax=file.endswith(".json"))
    return str(info.value.problem)


@pytest.mark.parametrize(
    "text",
    [
        "calls: &x\n  - *x\n",
        "a: &a {b: *a}\n",
        "a: &a [[*a]]\n",
        "- &a\n  - x: *a\n",
    ],
)
def test_a_recursive_alias_is_a_located_problem(text: str) -> None:
    assert "an alias inside its own anchor" in _problem(text)


def test_a_mapping_merged_into_itself_stays_finite() -> None:
    doc = parse_text("a: &a {<<: *a, b: 1}\n", "t.yaml")
    assert doc.data == {"a": {"b": 1}}


@pytest.mark.parametrize(
    ("text", "file", "where"),
    [
        ("[" * 1000 + "]" * 1000, "t.json", "t.json:1:101: "),
        ("[" * 101 + "]" * 101, "t.json", "t.json:1:101: "),  # valid JSON, just too deep
        (
            '{"calls": [{"tool": "Bash", "input": ' + '{"a": ' * 120 + "1" + "}" * 121 + "]}",
            "t.json",
            "t.json:1:",
        ),
        ("[" * 500 + "]" * 500, "t.yaml", "t.yaml:1:101: "),
        ("".join(" " * i + "a:\n" for i in range(2000)), "t.yaml", "t.yaml:101:101: "),
        ("".join(" " * i + "-\n" for i in range(2000)), "t.yaml", "t.yaml:101:101: "),
    ],
)
def test_nesting_deeper_than_the_limit_is_a_located_problem(
    text: str, file: str, where: str
) -> None:
    message = _problem(text, file)
    assert message.startswith(where)
    assert message.endswith(f"nested more than {MAX_DEPTH} levels deep")


def test_nesting_up_to_the_limit_is_fine() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_text(text, "t.json", json_syntax=True).data is not None
    assert parse_text(text, "t.yaml").data is not None


def test_an_alias_cannot_add_depth_beyond_the_limit() -> None:
    inner = "[" * 60 + "]" * 60
    text = f"a: &a {inner}\nb: {'[' * 50}*a{']' * 50}\n"
    assert _problem(text).endswith(f"nested more than {MAX_DEPTH} levels deep")
    assert parse_text(f"a: &a {inner}\nb: [*a]\n", "t.yaml").data["b"][0] is not None


def test_a_billion_laughs_is_refused_before_anything_expands_it() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    message = _problem("\n".join(lines) + "\n")
    assert "aliases expand to more than" in message
    assert message.startswith("t.yaml:")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("calls:\n  - tool: Bash\n    input:\n      command: !!int x\n", "4:16", "as !!int"),
        ("calls: !!float abc\n", "1:8", "as !!float"),
        ("a: !!bool maybe\n", "1:4", "as !!bool"),
        ("a: !!binary aGk=\n", "1:4", "!!binary values are not supported"),
        ("a: !!int " + "9" * 5000 + "\n", "1:4", "as !!int"),
        ("a: " + "9" * 5000 + "\n", "1:4", "as !!int"),
        ("a: !weird x\n", "1:4", "could not determine a constructor"),
    ],
)
def test_a_tag_that_cannot_be_read_is_a_located_problem(
    text: str, where: str, message: str
) -> None:
    found = _problem(text)
    assert found.startswith(f"t.yaml:{where}: ")
    assert message in found


def test_dates_stay_the_text_written() -> None:
    assert parse_text("when: 2026-11-29 10:00:00\n", "t.yaml").data == {
        "when": "2026-11-29 10:00:00"
    }


@pytest.mark.parametrize(
    "text",
    [
        '{"command": "echo \\ud800"}',
        '{"command": "echo \\udfff x"}',
        '{"\\uDBFF": 1}',
        '{"a": ["ok", "\\ud83d\\ud83d\\ude00"]}',
    ],
)
def test_a_lone_surrogate_in_json_is_a_located_problem(text: str) -> None:
    message = _problem(text, "p.json")
    assert message.startswith("p.json:1:")
    assert "lone surrogate" in message


def test_surrogate_pairs_and_escaped_backslashes_are_text() -> None:
    data = parse_text('{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}', "p.json", json_syntax=True).data
    assert data == {"a": "\U0001f600", "b": "\\ud800"}


def test_a_number_too_long_to_convert_is_a_located_problem() -> None:
    assert _problem('{"a":\n  ' + "1" * 5000 + "}", "p.json").startswith("p.json:2:3: ")


def test_json_that_yaml_cannot_read_is_located_at_the_nearest_parent() -> None:
    # U+007F is fine in a JSON string and refused by the YAML reader used to locate deep keys
    text = '{"turns": [{"calls": [\n {"tool": "Read", "input": {"file_path": 1, "x": "\x7f"}}]}]}'
    doc = parse_text(text, "p.json", json_syntax=True)
    where = doc.locate(("turns", 0, "calls", 0, "input", "file_path"))
    assert where == Location("p.json", 2, 2)


@pytest.mark.parametrize(
    ("bom", "encoding"),
    [(b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"), (b"\xff\xfe\x00\x00", "UTF-32")],
)
def test_utf16_and_utf32_files_are_named(tmp_path: Path, bom: bytes, encoding: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(bom + "calls: []\n".encode("utf-16-le"))
    with pytest.raises(DocumentError) as info:
        load_document(path, display="p.yaml")
    assert str(info.value.problem) == f"p.yaml:1:1: {encoding} text; toolrun reads UTF-8 only"


def test_a_utf8_bom_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(b'\xef\xbb\xbf{"calls": []}')
    assert load_document(path).data == {"calls": []}


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.yaml"
    os.mkfifo(fifo)
    with pytest.raises(DocumentError) as info:
        load_document(fifo, display="plan.yaml")
    assert str(info.value.problem) == "plan.yaml: is a FIFO, not a file"


def test_a_device_is_refused() -> None:
    with pytest.raises(DocumentError) as info:
        load_document(Path("/dev/zero"), display="/dev/zero")
    assert str(info.value.problem) == "/dev/zero: is a character device, not a file"


def test_a_name_with_a_nul_cannot_be_read() -> None:
    with pytest.raises(DocumentError) as info:
        load_document(Path("a\0b.yaml"), display="a.yaml")
    assert str(info.value.problem).startswith("a.yaml: cannot read: ")


@pytest.mark.parametrize(
    ("text", "where", "character"),
    [
        ('a: "\x00"\n', "1:5", "#x0000"),
        ("calls:\n  - x\x01\n", "2:6", "#x0001"),
        ("a: b\n\x7f\n", "2:1", "#x007F"),
    ],
)
def test_a_character_yaml_refuses_is_located_on_one_line(
    text: str, where: str, character: str
) -> None:
    message = _problem(text)
    assert message == (
        f"t.yaml:{where}: invalid YAML: character {character} is not allowed: "
        "control characters are not allowed"
    )


MERGE = "m: {<<: {x: 1}}\n"  # a merge key: the whole file goes through the node builder


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MERGE + "calls: &x\n  - *x\n", "an alias inside its own anchor"),
        (MERGE + "deep: " + "[" * 150 + "]" * 150 + "\n", f"nested more than {MAX_DEPTH}"),
        (
            MERGE + f"a: &a {'[' * 60}{']' * 60}\nb: {'[' * 50}*a{']' * 50}\n",
            f"nested more than {MAX_DEPTH}",
        ),
        (
            MERGE
            + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10)
            ),
            "aliases expand to more than",
        ),
        (MERGE + "a: !!int x\n", "cannot read 'x' as !!int"),
        (MERGE + "a: !!binary aGk=\n", "!!binary values are not supported"),
    ],
)
def test_the_node_builder_has_the_same_limits(text: str, message: str) -> None:
    found = _problem(text)
    assert found.startswith("t.yaml:")
    assert message in found


@pytest.mark.parametrize("syntax", ["json", "yaml"])
def test_every_call_of_a_big_plan_keeps_its_exact_place(syntax: str) -> None:
    # turns of 1, 2, 3, ... calls, each call on a line of its own after a comment line
    lines = ["{", '"turns": ['] if syntax == "json" else ["turns:"]
    where: dict[tuple[int, int], Location] = {}
    for t in range(30):
        lines.append('  {"calls": [' if syntax == "json" else "  - calls:")
        for c in range(t + 1):
            call = f'{{"tool": "Read", "input": {{"file_path": "f{t}-{c}.py"}}}}'
            indent = "    " if syntax == "json" else "      - "
            where[(t, c)] = Location("p", len(lines) + 1, len(indent) + 1)
            comma = "," if syntax == "json" and c < t else ""
            lines.append(indent + call + comma)
        if syntax == "json":
            lines.append("  ]}" + ("," if t < 29 else ""))
    lines += ["]", "}"] if syntax == "json" else []
    doc = parse_text("\n".join(lines) + "\n", "p", json_syntax=syntax == "json")
    for (t, c), location in where.items():
        assert doc.value_location(("turns", t, "calls", c)) == location
    for t in range(30):  # a list's items all at once, as the plan loader asks
        assert doc.item_locations(("turns", t, "calls")) == [where[(t, c)] for c in range(t + 1)]
    # deeper than the kept places: through the node tree, on the call's own line
    assert doc.locate(("turns", 3, "calls", 2, "input")).line == where[(3, 2)].line


def test_json_calls_share_their_key_strings() -> None:
    # one string per key for the whole document, as the C decoder makes it, not one a call
    # (a big plan's repeated keys were a quarter of its memory)
    text = json.dumps({"turns": [{"calls": [{"tool": "Read", "input": {"file_path": "a"}}]}] * 3})
    calls = [turn["calls"][0] for turn in parse_text(text, "p.json", json_syntax=True).data["turns"]]
    first, *others = [next(iter(call["input"])) for call in calls]
    assert all(key is first for key in others)


def test_items_of_a_list_not_recorded_are_asked_one_by_one() -> None:
    # an alias's list, and a document the node builder read (merge keys): no positions kept
    doc = parse_text("a: &x [1, 2]\nb: *x\n", "f.yaml")
    assert doc.item_locations(("a",)) == [Location("f.yaml", 1, 8), Location("f.yaml", 1, 11)]
    assert doc.item_locations(("b",)) is None
    merged = parse_text("base: &b {k: 1}\nc:\n  <<: *b\n  l: [5]\n", "m.yaml")
    assert merged.item_locations(("c", "l")) is None
    assert merged.value_location(("c", "l", 0)) == Location("m.yaml", 4, 7)


def test_a_lean_json_plan_leaves_each_turn_s_calls_in_the_text_until_asked() -> None:
    text = json.dumps(
        {"name": "p", "turns": [{"calls": [{"tool": "Read", "input": {"file_path": f"f{t}"}}]
                                 * (t + 1)} for t in range(3)]},
        indent=1,
    )
    doc = parse_text(text, "p.json", json_syntax=True, lean=True)
    assert doc.lean
    assert doc.data == {"name": "p", "turns": [{"calls": [None] * (t + 1)} for t in range(3)]}
    whole = json.loads(text)
    assert [doc.calls_of(t) for t in range(3)] == [turn["calls"] for turn in whole["turns"]]
    full = parse_text(text, "p.json", json_syntax=True)
    assert doc.value_location(("turns", 2, "calls", 1)) == full.value_location(
        ("turns", 2, "calls", 1)
    )


@pytest.mark.parametrize(
    "doc",
    [
        {"calls": [{"tool": "Read", "input": {}}]},  # the one-turn shorthand
        {"turns": [{"calls": []}, {"calls": [], "note": 1}]},  # a turn with another key
        {"turns": [{"calls": {}}]},  # calls that are not a list
        {"turns": [[]]},  # a turn that is not a mapping
        {"messages": []},  # another format
        [1, 2],
    ],
)
def test_json_that_is_not_plain_turns_of_calls_is_decoded_whole(doc: object) -> None:
    text = json.dumps(doc)
    lean = parse_text(text, "p.json", json_syntax=True, lean=True)
    assert not lean.lean and lean.data == json.loads(text)


@pytest.mark.parametrize("text", ['{"turns": [{"calls": []}]', '{"turns": [1,]}', "[1] x"])
def test_lean_json_is_checked_as_strictly(text: str) -> None:
    with pytest.raises(DocumentError) as lean:
        parse_text(text, "p.json", json_syntax=True, lean=True)
    with pytest.raises(DocumentError) as whole:
        parse_text(text, "p.json", json_syntax=True)
    assert str(lean.value.problem) == str(whole.value.problem)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)
# what breaks JSON where it stands: brackets, separators, quotes, escapes, words, spaces
_JSON_DAMAGE = st.sampled_from(
    ['"', "'", ",", ":", "{", "}", "[", "]", "\\", "\\u", "\\ud800", "\x00", " ", "\n", "\t",
     "\ufeff", "1", "-", "e", ".", "a", "true", "nul", "NaN", "//", ",]", ",}", "{}", "[]"]
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(
    value=st.fixed_dictionaries({"turns": st.lists(
        st.fixed_dictionaries({"calls": st.lists(_JSON_VALUES, max_size=3)}), max_size=3)})
    | _JSON_VALUES,
    indent=st.sampled_from([None, 1]),
    damage=st.lists(st.tuples(st.integers(0, 10**6), _JSON_DAMAGE, st.integers(0, 2)),
                    max_size=2),
)  # fmt: skip
def test_a_lean_plan_checked_by_its_walk_alone_answers_as_the_decoder(
    value: object, indent: int | None, damage: list[tuple[int, str, int]]
) -> None:
    """A lean JSON plan (a part of a split check) is checked by the walk of its places
    alone, not decoded first as well: for any text, valid or damaged (a character put in,
    or taken out), the walk takes only what the decoder takes, and the document or the
    problem is what checking it first gives."""
    from toolrun.yamlfile import jsondoc

    text = json.dumps(value, indent=indent)
    for at, token, cut in damage:
        at %= len(text) + 1
        text = text[:at] + token + text[at + cut :]
    if jsondoc._walked(text, "p.json") is not None:
        json.loads(text)  # (raises if the walk took what the decoder refuses)

    def outcome(lean: bool, *, walked: bool) -> object:
        real = jsondoc._walked
        if not walked:
            jsondoc._walked = lambda text, file: None  # type: ignore[assignment]
        try:
            doc = parse_text(text, "p.json", json_syntax=True, lean=lean)
        except DocumentError as exc:
            return str(exc.problem)
        finally:
            jsondoc._walked = real
        marks = doc.json_marks
        assert marks is not None
        # (the data's repr: a NaN is not equal to itself)
        return (repr(doc.data), doc.lean, doc.problems, doc.nul_possible, marks.values,
                marks.keys, {k: list(v) for k, v in marks.items.items()})  # fmt: skip

    assert outcome(True, walked=True) == outcome(True, walked=False)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(alphabet="ab:#-'\" 01yn~.\\\n", max_size=6),
    st.sampled_from(["yes", "no", "null", "~", "1.5", "0x1f", "2024-01-02", "on", "<<"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(alphabet="abk: ", min_size=1, max_size=3), inner, max_size=3),
    max_leaves=12,
)


def _paths(value: object, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*path, str(key))))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.extend(_paths(item, (*path, i)))
    return out


@settings(max_examples=300, deadline=None)
@given(
    data=st.dictionaries(st.sampled_from(["name", "turns", "k", "a b"]), _VALUES, min_size=1),
    flow=st.sampled_from([None, True, False]),
    style=st.sampled_from([None, '"', "'"]),
    dup=st.booleans(),
)
def test_the_event_builder_gives_what_the_node_builder_gives(
    data: dict[str, object], flow: bool | None, style: str | None, dup: bool
) -> None:
    # the event builder takes quoted scalars and plain values without asking the resolver
    # or going through ``build``: the data, problems and places must be the node tree's
    text = yaml.safe_dump(data, default_flow_style=flow, default_style=style, sort_keys=False)
    if dup and not flow:
        text += text.splitlines()[0] + "\n"  # a top-level key written twice
    try:
        fast = parse_text(text, "d.yaml")
    except DocumentError as exc:
        fast_error: str | None = str(exc)
    else:
        fast_error = None
    loader = _Loader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError:
            assert fast_error is not None and "invalid YAML" in fast_error
            return
        assert root is not None
        builder = _Builder(loader, "d.yaml")
        try:
            slow_data = builder.build(root, ())
        except DocumentError as exc:
            assert fast_error == str(exc)
            return
    finally:
        loader.dispose()
    assert fast_error is None
    assert fast.root is None  # (built from events)
    assert fast.data == slow_data
    assert fast.problems == tuple(builder.problems)
    slow = Document("d.yaml", slow_data, root)
    for path in _paths(slow_data) if not builder.problems else ():
        # (a key written twice is a problem: which of its places it has is not pinned)
        assert fast.locate(path) == slow.locate(path), path
        assert fast.value_location(path) == slow.value_location(path), path


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["yes", "No", "TRUE", "off", "~", "null", "Null", ".inf", "-.5", "+1",
                         "0o17", "0x1f", "1_000", "2024-01-02", "=", "Read", "src/a.py", "tool",
                         "~/x", "t", "f", "n", "y", "o", "-", "12:30", "1e3", "3.0", "!", "a~"])
        | st.text(alphabet="tfnoy01.-+~=aRs/", min_size=1, max_size=5),
        min_size=1, max_size=6,
    )
)
def test_plain_scalars_are_typed_as_pyyaml_types_them(words: list[str]) -> None:
    # the event builder answers most plain scalars without the resolver (by their first
    # character) and remembers what the resolver said for the others: PyYAML's answer stands
    text = "".join(f"- {w}\n" for w in words) + "".join(f"- {w}\n" for w in words)
    loader = _Loader(text)  # the node builder, which asks the resolver for every scalar
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError:
            return
        assert root is not None
        try:
            expected: object = _Builder(loader, "d.yaml").build(root, ())
        except DocumentError as exc:
            expected = str(exc)
    finally:
        loader.dispose()
    try:
        got: object = parse_text(text, "d.yaml").data
    except DocumentError as exc:
        got = str(exc)
    assert got == expected


@pytest.mark.parametrize("lean", [False, True])
def test_a_plans_calls_are_located_and_a_too_deep_one_is_refused_where_it_gets_too_deep(
    lean: bool,
) -> None:
    from toolrun.yamlfile.jsondoc import parse_json

    calls = ['{"tool": "Read", "input": {"file_path": "a"}}', "7", "[]", '"x"']
    text = '{"turns": [\n {"calls": [\n  ' + ",\n  ".join(calls) + "\n ]}\n]}\n"
    doc = parse_json(text, "t.json", lean=lean)
    assert [doc.value_location(("turns", 0, "calls", i)) for i in range(4)] == [
        Location("t.json", 3 + i, 3) for i in range(4)
    ]
    # the levels open around the call count: 4 (document, turns, turn, calls), the call's
    # own brace is the 5th, so the 96th `{"a": ` is the 101st: column 3 + 26 + 95 * 6
    deep = '{"tool": "Bash", "input": ' + '{"a": ' * 120 + "1" + "}" * 121
    text = '{"turns": [\n {"calls": [\n  {"tool": "Read"},\n  ' + deep + "\n ]}\n]}\n"
    with pytest.raises(DocumentError) as info:
        parse_json(text, "t.json", lean=lean)
    assert str(info.value.problem) == "t.json:4:599: nested more than 100 levels deep"


@pytest.mark.parametrize("space", ["", " ", "\n", "\t \r\n  ", "\r\n\r\n"])
def test_the_calls_of_a_turn_are_placed_whatever_lies_between_them(space: str) -> None:
    """Each call's start, whatever white space is around it (skipped inline, issue 31), and
    whatever it is (an object, a list, a string, a number: the loader says what is wrong)."""
    items = ['{"tool": "Read", "input": {"file_path": "a, b]"}}', "[1, [2, {}]]", '"c]"', "-1.5e3",
             "{}", "[]", "null"]  # fmt: skip
    text = '{"turns": [{"calls": [' + space
    starts = []
    for i, item in enumerate(items):
        starts.append(len(text))
        text += item + space + ("," + space if i < len(items) - 1 else "")
    text += "]}]}"
    doc = parse_text(text, "p.json", json_syntax=True)
    assert doc.data["turns"][0]["calls"] == json.loads(text)["turns"][0]["calls"]

    def place(offset: int) -> Location:
        line = text.count("\n", 0, offset)
        return Location("p.json", line + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1)

    assert doc.item_locations(("turns", 0, "calls")) == [place(s) for s in starts]
