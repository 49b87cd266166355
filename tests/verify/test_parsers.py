"""Verifier reports to diagnostics: real ruff and mypy output, documented shapes for the rest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrun.verify.models import Diagnostic
from toolrun.verify.parsers import ReportError, parse


def run(tmp_path: Path, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *argv], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    return done.stdout


def test_real_ruff_json_gives_code_and_one_based_position(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\nimport os\n")
    out = run(tmp_path, "ruff", "check", "--isolated", "--no-cache", "--select", "F401",
              "--output-format", "json", "a.py")
    (d,) = parse("json", out)
    assert (d.line, d.column, d.code, d.severity) == (2, 8, "F401", "error")
    assert d.file.endswith("a.py") and "os" in d.message


def test_real_ruff_sarif(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\n")
    out = run(tmp_path, "ruff", "check", "--isolated", "--no-cache", "--select", "F401",
              "--output-format", "sarif", "a.py")
    (d,) = parse("sarif", out)
    assert (d.line, d.column, d.code) == (1, 8, "F401")
    assert d.file.startswith("file://") and d.file.endswith("/a.py")


def test_real_mypy_json_lines_columns_are_made_one_based(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('x: int = "a"\ny: str = 1\n')
    out = run(tmp_path, "mypy", "-O", "json", "--no-incremental", "m.py")
    found = parse("json", out)
    assert [(d.line, d.column, d.code) for d in found] == [(1, 10, "assignment"), (2, 10, "assignment")]


def test_real_mypy_text_output(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('x: int = "a"\n')
    out = run(tmp_path, "mypy", "--show-column-numbers", "--no-incremental", "m.py")
    (d,) = parse("text", out)  # "Found 1 error in 1 file" is not a diagnostic
    assert (d.file, d.line, d.column, d.severity, d.code) == ("m.py", 1, 10, "error", "assignment")


def test_pyright_outputjson_positions_are_zero_based() -> None:
    report = {
        "version": "1.1.380",
        "generalDiagnostics": [
            {
                "file": "/w/a.py",
                "severity": "error",
                "message": 'Import "nope" could not be resolved',
                "range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 11}},
                "rule": "reportMissingImports",
            },
            {"file": "/w/a.py", "severity": "information", "message": "x",
             "range": {"start": {"line": 4, "character": 0}}},
        ],
        "summary": {"errorCount": 1},
    }
    first, second = parse("json", json.dumps(report))
    assert first == Diagnostic("/w/a.py", 1, 8, "error", "reportMissingImports",
                               'Import "nope" could not be resolved')
    assert (second.line, second.severity, second.code) == (5, "note", "")


def test_eslint_json_severity_two_is_an_error_one_a_warning() -> None:
    report = [
        {"filePath": "/w/a.js", "messages": [
            {"ruleId": "no-unused-vars", "severity": 2, "message": "'x' is unused", "line": 3, "column": 7},
            {"ruleId": "semi", "severity": 1, "message": "Missing semicolon.", "line": 4, "column": 9},
        ]},
        {"filePath": "/w/b.js", "messages": []},
    ]
    found = parse("json", json.dumps(report))
    assert [(d.file, d.line, d.severity, d.code) for d in found] == [
        ("/w/a.js", 3, "error", "no-unused-vars"), ("/w/a.js", 4, "warning", "semi")
    ]


def test_tsc_text_form() -> None:
    out = "src/a.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.\n"
    (d,) = parse("text", out)
    assert (d.file, d.line, d.column, d.code, d.severity) == ("src/a.ts", 12, 5, "TS2322", "error")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("a.py:3:1: F401 `os` imported but unused", ("a.py", 3, 1, "error", "F401")),
        ("a.c:7:2: warning: unused variable 'x' [-Wunused-variable]",
         ("a.c", 7, 2, "warning", "-Wunused-variable")),
        ("lib/x.py:9: note: see here", ("lib/x.py", 9, 0, "note", "")),
        ("a b.py:1:2: error: spaces in the name", ("a b.py", 1, 2, "error", "")),
    ],
)
def test_text_lines(line: str, expected: tuple[object, ...]) -> None:
    (d,) = parse("text", f"noise before\n{line}\nFound 1 error.\n")
    assert (d.file, d.line, d.column, d.severity, d.code) == expected


def test_sarif_level_defaults_to_warning_and_a_result_without_location_has_no_line() -> None:
    log = {"version": "2.1.0", "runs": [{"results": [{"ruleId": "R1", "message": {"text": "m"}}]}]}
    (d,) = parse("sarif", json.dumps(log))
    assert (d.file, d.line, d.severity, d.code) == ("", 0, "warning", "R1")


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("sarif", "not json"),
        ("sarif", '{"version": "2.1.0"}'),
        ("json", '{"some": "object"}'),
        ("json", "[1, 2]"),
        ("json", "Traceback (most recent call last):\n  boom\n"),
        ("json", '"a string"'),
    ],
)
def test_a_report_that_is_not_its_format_is_an_error(fmt: str, text: str) -> None:
    with pytest.raises(ReportError):
        parse(fmt, text)


def test_an_empty_report_has_no_diagnostics() -> None:
    assert parse("json", "") == [] and parse("sarif", "  \n") == [] and parse("text", "") == []


def test_sarif_relative_uris_are_percent_decoded_file_uris_kept_whole() -> None:
    def result(uri: str) -> dict[str, object]:
        return {"ruleId": "R", "level": "note", "message": {"text": "m"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri},
                                                    "region": {"startLine": 3}}}]}

    log = {"runs": [{"results": [result("src/a%20b.py"), result("file:///w/a%20b.py")]}]}
    relative, absolute = parse("sarif", json.dumps(log))
    assert (relative.file, relative.line, relative.severity) == ("src/a b.py", 3, "note")
    assert absolute.file == "file:///w/a%20b.py"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(
        st.sampled_from(["runs", "results", "locations", "physicalLocation", "region",
                         "startLine", "uri", "artifactLocation", "message", "text", "level",
                         "filename", "location", "row", "column", "code", "filePath",
                         "messages", "line", "severity", "generalDiagnostics", "range",
                         "start", "character", "file", "rule", "ruleId"]),
        inner, max_size=5),
    max_leaves=25,
)


@given(json_values, st.sampled_from(["sarif", "json"]))
def test_any_json_gives_diagnostics_or_a_report_error(value: object, fmt: str) -> None:
    """A verifier's output is not trusted: whatever its shape, it parses or is a
    ReportError (the verifier is then reported failed), never another exception."""
    try:
        found = parse(fmt, json.dumps(value))
    except ReportError:
        return
    assert all(isinstance(d, Diagnostic) and d.line >= 0 for d in found)


def test_deeply_nested_json_is_a_report_error() -> None:
    with pytest.raises(ReportError):
        parse("sarif", "[" * 100_000 + "]" * 100_000)
