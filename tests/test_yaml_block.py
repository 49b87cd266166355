"""The line builder (toolrun.yamlfile.block) answers exactly as the event builder, or not at all."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from toolrun.errors import Location
from toolrun.yamlfile import DocumentError, parse_text
from toolrun.yamlfile.block import DEFAULT_TYPED_STARTS, DEFAULT_WORDS, parse_block
from toolrun.yamlfile.document import Document
from toolrun.yamlfile.events import parse_events, typed_starts
from toolrun.yamlfile.nodes import parse_nodes

PLAN = """\
name: reads
turns:
- calls:
  - tool: Read
    input:
      file_path: src/a.py
  - {"tool": "Edit", "input": {"file_path": "b.py", "old_string": "x", "new_string": "y"}}
-   calls:
      - tool: Bash
        input: {"command": "git log -n 3 --oneline"}
"""


def _old(text: str) -> Document:
    """What parse_text gave before the line builder: events, else the node tree."""
    return parse_events(text, "f.yaml") or parse_nodes(text, "f.yaml")


def _same(block: Document, text: str) -> None:
    events = parse_events(text, "f.yaml")
    assert events is not None, "the line builder read what the event builder leaves"
    assert block.data == events.data
    assert type(block.data) is type(events.data)
    assert block.problems == events.problems == ()
    assert block.root is None and block.aliased == events.aliased == 0
    assert block.nul_possible == events.nul_possible
    mine, theirs = block.json_marks, events.json_marks
    assert mine is not None and theirs is not None
    assert mine.values == theirs.values
    assert mine.keys == theirs.keys
    assert {k: list(v) for k, v in mine.items.items()} == {
        k: list(v) for k, v in theirs.items.items()
    }


def test_a_plan_in_block_style_is_read_line_by_line_as_the_events_read_it() -> None:
    doc = parse_block(PLAN, "f.yaml")
    assert doc is not None
    _same(doc, PLAN)
    assert doc.data["turns"][1]["calls"][0]["input"] == {"command": "git log -n 3 --oneline"}
    # positions: a call's start, a key, and deeper (through the node tree, built on demand)
    assert doc.item_locations(("turns", 0, "calls")) == [
        Location("f.yaml", 4, 5), Location("f.yaml", 7, 5)
    ]
    assert doc.locate(("turns", 1, "calls")) == Location("f.yaml", 8, 5)
    assert doc.locate(("turns", 0, "calls", 0, "input", "file_path")) == Location("f.yaml", 6, 7)


def test_parse_text_takes_the_line_builder_first() -> None:
    doc = parse_text(PLAN, "f.yaml")
    assert doc.root is None and doc.json_marks is not None
    assert doc.data == yaml.safe_load(PLAN)


def _python(code: str, plan: Path) -> str:
    """What ``code`` prints in a fresh interpreter, given ``plan``'s path."""
    done = subprocess.run(
        [sys.executable, "-c", code, str(plan)], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_a_plan_of_strings_is_read_without_importing_pyyaml(tmp_path: Path) -> None:
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN + "mode: default\nstrict: true\nnote: ~/x\nmax: 64\nratio: 0.5\n")
    code = (
        "import sys\nfrom pathlib import Path\nfrom toolrun.yamlfile import load_document\n"
        "doc = load_document(Path(sys.argv[1]))\n"
        "assert doc.data['strict'] is True and doc.data['note'] == '~/x', doc.data\n"
        "print('yaml' in sys.modules)\n"
    )
    assert _python(code, plan).strip() == "False"


@given(st.text(max_size=40) | st.text(st.characters(max_codepoint=0x7F), max_size=40))
def test_the_ascii_check_of_a_line_is_the_whole_check(text: str) -> None:
    # an ASCII text is checked against the ASCII part of the class of what a line may hold
    from toolrun.yamlfile.block import _OUTSIDE_PATTERN, _outside

    assert _outside(text) == (re.search(_OUTSIDE_PATTERN, text) is not None)


def test_an_ascii_file_never_compiles_the_whole_class(tmp_path: Path) -> None:
    # compiling the class of every character a line may hold took 10 ms of each start
    # that read a YAML config: an ASCII file (nearly every one) does without it
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN)
    code = (
        "import sys\nfrom pathlib import Path\nfrom toolrun.yamlfile import load_document\n"
        "from toolrun.yamlfile import block\n"
        "load_document(Path(sys.argv[1]))\n"
        "print(block._outside_any.cache_info().currsize)\n"
        "print(block._outside('caf\\u00e9\\t'), block._outside_any.cache_info().currsize)\n"
    )
    assert _python(code, plan).split() == ["0", "True", "1"]


def test_the_defaults_it_assumes_are_pyyaml_s() -> None:
    assert typed_starts(yaml.CSafeLoader) == DEFAULT_TYPED_STARTS
    assert typed_starts(yaml.SafeLoader) == DEFAULT_TYPED_STARTS
    for word, value in DEFAULT_WORDS.items():
        assert yaml.safe_load(f"a: {word}") == {"a": value}, word
        assert yaml.safe_load(f"{word}: a") == {value: "a"}, word


@pytest.mark.parametrize(
    "text",
    [
        # each line of a class the line builder leaves to the event builder, four spellings
        "a:\tb\n", "a: b\t\n", "a:\n\t- b\n", "- a\t#c\n",  # tabs
        "a: &x 1\nb: *x\n", "- &a {x: 1}\n- *a\n", "a: !!str 1\n", "a: !t x\n",  # anchors, tags
        "a: |\n  x\n", "a: >\n  x\n", "a: |-\n  x\n", "- >+\n  x\n",  # block scalars
        "a: b\n  c\n", "- b\n  c\n", "a:\n  b\n", "- a: b\n    c\n",  # multi-line plain scalars
        '"a": 1\n', "'a': 1\n", "? a\n: 1\n", "a b: 1\n",  # keys it does not read
        'a: "x\\ty"\n', 'a: "\\u00e9"\n', 'a: "\\x41"\n', 'a: ["\\n"]\n',  # escapes
        "a: 1\na: 2\n", "- x: 1\n  x: 2\n", "on: 1\ntrue: 2\n", "k:\n  - {}\n  - {\"a\": 1, \"a\": 2}\n",  # duplicates
        "a:\n  b: 1\n c: 2\n", "a:\n    - 1\n  - 2\n", "  a: 1\nb: 2\n", "- 1\n - 2\n",  # dedents
        "a:\nb: 1\n", "a:\n", "- \n- 1\n", "a: # c\nb: 1\n",  # a null written as nothing
        "x:\n  y:\n    z:\n      - [NaN]\n", "x:\n  y:\n    z:\n      - [1e5]\n",
        "x:\n  y:\n    z:\n      - [1.0E+3]\n", "x:\n  y:\n    z:\n      - [Infinity]\n",  # not JSON's numbers
        "a: 1\n---\nb: 2\n", "--- a: 1\n", "%YAML 1.1\n---\na: 1\n", "a: 1\n...\n",  # markers
        "a: b: c\n", "- a: b: c\n", "a: x:\n", "a: - b\n",  # a mapping inside a value
        "# only a comment\n", "", "\n\n", "---\n",  # no content
        "a: !!int x\n", "a: =\n", "<<: {a: 1}\n", "a: 0x_\n",  # what a constructor refuses
        "a: \x07\n", "a: b\r\nc: d\r\n", "a: \u2028\n", "a: \ufeff\n",  # characters and breaks
        "a: {b: 1}\n", "a: [x, y]\n", "a: [1, 2,]\n", 'a: {"b": 1,}\n',  # flows JSON does not read
    ],
)
def test_what_it_does_not_read_is_left_to_the_event_builder(text: str) -> None:
    assert parse_block(text, "f.yaml") is None
    try:
        expected: object = _old(text)
    except DocumentError as exc:
        expected = str(exc)
    try:
        got: object = parse_text(text, "f.yaml")
    except DocumentError as exc:
        got = str(exc)
    if isinstance(expected, Document):
        assert isinstance(got, Document)
        assert (got.data, got.problems) == (expected.data, expected.problems)
    else:
        assert got == expected


@pytest.mark.parametrize(
    "text",
    [
        'permissions:\n  allow: ["Bash(npm test)", "Read(src/**)"]\n  deny: []\n',
        'a: {"b": [1, {"c": ["d", 2.5]}], "e": {}}  # c\n',
        '- ["x", ["y", {"z": null}]]\n- {"k":"v","n":[true,false]}\n',
        'hooks:\n  PreToolUse:\n    - {"matcher": "Bash", "hooks": [{"type": "command"}]}\n',
    ],
)
def test_json_flows_at_shallow_levels_keep_the_places_inside_them(text: str) -> None:
    doc = parse_block(text, "f.yaml")
    assert doc is not None
    _same(doc, text)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("tool: Read\ntool: Edit\n", "f.yaml:2:1: tool: duplicate key 'tool'"),
        ("- tool: Read\n  tool: Edit\n", "f.yaml:2:3: [0].tool: duplicate key 'tool'"),
        ("a:\n  on: 1\n  On: 2\n", "f.yaml:3:3: a.True: duplicate key True"),
        ("a:\n  b:\n    c:\n      - {\"x\": 1, \"x\": 2}\n", "f.yaml:4:18: a.b.c[0].x: duplicate key 'x'"),
    ],
)
def test_a_duplicate_key_is_still_a_located_problem(text: str, where: str) -> None:
    assert parse_block(text, "f.yaml") is None
    assert [str(p) for p in parse_text(text, "f.yaml").problems] == [where]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("a: 1\n b: 2\n", "f.yaml:2:3: "),  # a dedent to no block's column
        ("- a\nb: 1\n", "f.yaml:2:1: "),  # a key where the list's items are
        ("a:\n  - 1\n - 2\n", "f.yaml:3:2: "),  # an item left of its list
        ("a: b: c\n", "f.yaml:1:5: "),  # a mapping inside a value
    ],
)
def test_bad_yaml_keeps_its_line_and_column(text: str, where: str) -> None:
    with pytest.raises(DocumentError) as info:
        parse_text(text, "f.yaml")
    with pytest.raises(DocumentError) as old:
        _old(text)
    assert str(info.value.problem) == str(old.value.problem)
    assert str(info.value.problem).startswith(where + "invalid YAML: ")


def test_a_resolver_someone_added_is_obeyed(tmp_path: Path) -> None:
    # a process that registered its own resolver gets PyYAML's answer, not the defaults
    code = textwrap.dedent(
        """
        import re, yaml
        from toolrun.yamlfile import parse_text
        yaml.add_implicit_resolver(
            "tag:yaml.org,2002:int", re.compile(r"^seven$"), list("s"), Loader=yaml.CSafeLoader
        )
        yaml.CSafeLoader.add_constructor("tag:yaml.org,2002:int", lambda l, n: 7)
        print(parse_text("a: seven\\nb: read\\nc: 12\\n", "f.yaml").data)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "{'a': 7, 'b': 'read', 'c': 7}"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.integers(-(10**30), 10**30).map(str)
        | st.floats(allow_nan=False, allow_infinity=False).map(repr)
        | st.sampled_from(["0", "-0", "00", "01", "1_000", "1.", ".5", "-.5", "1.5e3", "0x1f",
                           "1:30", "2024-01-02", "+1", "-", "1.0.0", "10.2.3.4", "-x", "9" * 4400]),
        min_size=1, max_size=5,
    )
)
def test_numbers_are_typed_as_pyyaml_types_them(words: list[str]) -> None:
    text = "".join(f"k{i}: {w}\n" for i, w in enumerate(words))
    try:
        expected: object = _old(text).data
    except DocumentError as exc:
        expected = str(exc)
    try:
        got: object = parse_text(text, "f.yaml").data
    except DocumentError as exc:
        got = str(exc)
    assert got == expected
    if isinstance(got, dict):
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]  # type: ignore[union-attr]


# -- generated files: whatever it reads, it reads as the event builder does ---------------

# keys PyYAML writes plain, and (rarer) those it quotes, which the line builder leaves
_KEYS = st.sampled_from(
    ["tool", "input", "calls", "a", "x.y", "k-2", "é", "a/b", "_", "file_path", "Null_x", "on1"]
) | st.sampled_from(["on", "No", "null", "1", "y", "a b"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(alphabet="ab:#-'\" 01yn~.é[]{},&*!|>%@`?\\\t", max_size=6),
    st.text(alphabet="abxyNOT/._-01 é~", max_size=8),
    st.text(alphabet="abxyNOT/._-01 é~", max_size=8),
    st.sampled_from(["yes", "no", "null", "~", "1.5", "0x1f", "2024-01-02", "on", "<<", "-x"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=14,
)


@settings(max_examples=400, deadline=None)
@given(
    data=st.dictionaries(_KEYS, _VALUES, min_size=1) | st.lists(_VALUES, min_size=1),
    indent=st.sampled_from([2, 3, 4]),
    start=st.booleans(),
    style=st.sampled_from([None, '"', "'"]),
)
def test_dumped_yaml_reads_as_the_events_read_it(
    data: object, indent: int, start: bool, style: str | None
) -> None:
    text = yaml.safe_dump(
        data, default_flow_style=False, indent=indent, explicit_start=start,
        default_style=style, sort_keys=False, allow_unicode=True, width=1000,
    )  # fmt: skip
    doc = parse_block(text, "f.yaml")
    if doc is not None:
        _same(doc, text)


def _flow_plan(calls: list[dict[str, object]], compact: bool) -> str:
    lines = ["turns:", "  - calls:"]
    separators = (",", ":") if compact else (", ", ": ")
    lines += [
        f"      - {json.dumps(call, ensure_ascii=False, separators=separators)}" for call in calls
    ]
    lines.append(f"  - calls: {json.dumps(calls, separators=separators)}")  # shallow: places
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "call", ['{"tool": "Read", "input": {"file_path": "src/d1e5/m1e.py"}}',
             '{"tool": "X", "input": {"a": 1.5, "b": -0.25, "c": [0.0, 12]}}'],
)  # fmt: skip
def test_a_json_call_with_no_exponent_in_a_number_is_read_by_the_line_builder(call: str) -> None:
    # a float with an exponent is a string to YAML 1.1 (left to the event builder); "1e" in
    # a string, or a number without one, is what it is in JSON (only numbers are asked)
    text = f"turns:\n  - calls:\n      - {call}\n"
    doc = parse_block(text, "f.yaml")
    assert doc is not None
    _same(doc, text)
    if "1.5" in call:  # with an exponent: the event builder's
        assert parse_block(text.replace("1.5", "1.5e0"), "f.yaml") is None


@settings(max_examples=200, deadline=None)
@given(
    calls=st.lists(
        st.dictionaries(_KEYS, _VALUES), max_size=4
    ),
    compact=st.booleans(),
)
def test_json_calls_on_their_lines_read_as_the_events_read_them(
    calls: list[dict[str, object]], compact: bool
) -> None:
    text = _flow_plan(calls, compact)
    doc = parse_block(text, "f.yaml")
    if doc is not None:
        _same(doc, text)


_VALUE_TEXT = st.sampled_from(
    [
        "", "", "", "x", "x y", "src/a.py", "1", "-1", "1.5", "1e5", "0o7", "true", "yes", "No",
        "null", "~", "~/x", "=", "<<", "x #c", "x#c", "#c", " #c", "x  ", '"q"', '"q" #c', '"q',
        "'s''t'", "'s", '{"k": 1}', '["a", 2]', "[]", "{}", "[1e5]", "[NaN]", '{"k": 1, "k": 2}',
        '{"k": [1, {"j": null}]} #c', '{"k": "d1e5.py"}', "[1.5, -0.0, 2.5E-1]", "&a x", "*a",
        "!t x", "|", ">", "? x", ": x", "a:b",
        "a: b", "x:", "-x", "- x", "2024-01-02", "12:30", ".inf", "\t", "é", "'a' b", "{a: 1}",
    ]
)
_LINE_PARTS = st.tuples(
    st.sampled_from(["", "", "  ", "  ", "    ", "      ", " ", "   "]),
    st.sampled_from(["", "", "- ", "-   ", "-"]),
    st.sampled_from(["", "a: ", "b: ", "tool: ", "calls:", "on: ", "1: ", "é: ", "k-2:  "]),
    _VALUE_TEXT,
)


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(_LINE_PARTS.map("".join), min_size=1, max_size=8)
    | st.sampled_from(["---", "# c", "...", "%YAML 1.1"]).flatmap(
        lambda first: st.lists(_LINE_PARTS.map("".join), max_size=6).map(lambda r: [first, *r])
    )
)
def test_any_text_it_reads_the_events_read_the_same(lines: list[str]) -> None:
    # lines put together at random, most of them bad YAML: the line builder never answers
    # for a text the event builder refuses, and never answers differently
    text = "\n".join(lines) + "\n"
    doc = parse_block(text, "f.yaml")
    if doc is None:
        return
    try:
        events = parse_events(text, "f.yaml")
    except DocumentError as exc:
        raise AssertionError(f"the line builder read {text!r}; the events refuse it: {exc}") from exc
    assert events is not None
    _same(doc, text)
