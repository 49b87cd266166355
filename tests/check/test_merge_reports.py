"""`check --merge-reports`: reports that are not one sharded check are refused, located."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.check.helpers import write
from tests.check.test_shards import corpus, run, shard_reports


@pytest.fixture
def shards(runner: CliRunner, ws: Path) -> list[Path]:
    corpus(ws)
    return shard_reports(runner, ws, 3, "plans/**/*.yaml")


def edit(path: Path, change: Any, as_name: str) -> Path:
    """A copy of a report, changed, written indented (so that positions are lines)."""
    data = json.loads(path.read_text())
    change(data)
    out = path.with_name(as_name)
    out.write_text(json.dumps(data, indent=2))
    return out


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def merge(runner: CliRunner, *reports: Path | str) -> tuple[int, str, str]:
    return run(runner, "--merge-reports", *(str(r) for r in reports))


def test_invalid_json_is_located(runner: CliRunner, ws: Path, shards: list[Path]) -> None:
    write(ws / "reports/shard-2.json", '{"run_id": "r",\n  "inputs": [1,,]}\n')
    code, out, err = merge(runner, *shards)
    assert code == 3 and out == ""
    assert err == "reports/shard-2.json:2:16: invalid JSON: Expecting value\n"


def test_a_wrong_field_is_named_at_its_line_and_column(
    runner: CliRunner, shards: list[Path]
) -> None:
    def wrong(data: dict[str, Any]) -> None:
        data["results"][1]["decision"] = "maybe"

    bad = edit(shards[1], wrong, "shard-2b.json")
    code, _, err = merge(runner, shards[0], bad, shards[2])
    line = line_of(bad, '"decision": "maybe"')
    assert code == 3
    assert err == (
        f"reports/shard-2b.json:{line}:19: results[1].decision: expected one of allow, ask, deny\n"
    )


@pytest.mark.parametrize(
    ("change", "needle", "message"),
    [
        (
            lambda d: d["shard"].update(index="2"),
            '"index": "2"',
            "shard.index: expected an integer, not a string",
        ),
        (lambda d: d["results"][0].pop("tool"), None, "results[0]: missing 'tool'"),
        (
            lambda d: d["results"][0]["location"].update(line=True),
            '"line": true',
            "results[0].location.line: expected an integer, not true or false",
        ),
        (
            lambda d: d["results"][0].update(plan="elsewhere.yaml"),
            '"plan": "elsewhere.yaml"',
            "results[0].plan: 'elsewhere.yaml' is not one of the report's inputs",
        ),
        (lambda d: d["results"].pop(), None, "results: "),
        (lambda d: d["inputs"].append({}), None, "shard.inputs: 4 entries for the report's 5"),
        (
            lambda d: d["inputs"][1].update(file=d["inputs"][0]["file"]),
            None,
            "inputs[1].file: 'plans/",
        ),
        # what the renderers read of a record's hooks and rebased values: never a crash
        (
            lambda d: d["results"][0].update(hooks=[1]),
            None,
            "results[0].hooks[0]: expected an object, not an integer",
        ),
        (
            lambda d: d["results"][0].update(hooks="PreToolUse"),
            None,
            "results[0].hooks: expected a list, not a string",
        ),
        (
            lambda d: d["results"][0].update(hooks=[{"event": "PreToolUse", "runs": 3}]),
            None,
            "results[0].hooks[0].runs: expected a list, not an integer",
        ),
        # where a call runs (#25): a string or null, as the check wrote it
        (
            lambda d: d["results"][0].update(runs_in=3),
            '"runs_in": 3',
            "results[0].runs_in: expected a string or null, not an integer",
        ),
        (
            lambda d: d["results"][0].update(runs_in_why=["x"]),
            None,
            "results[0].runs_in_why: expected a string or null, not a list",
        ),
        (
            lambda d: d["results"][0].update(rebased=[{"field": "cwd", "recorded": "/a"}]),
            None,
            "results[0].rebased[0]: missing 'rebased'",
        ),
    ],
)
def test_malformed_shard_reports_say_what_and_where(
    runner: CliRunner, shards: list[Path], change: Any, needle: str | None, message: str
) -> None:
    bad = edit(shards[0], change, "bad.json")
    code, out, err = merge(runner, bad, shards[1], shards[2])
    assert code == 3 and out == ""
    assert err.startswith("reports/bad.json:") and message in err, err
    if needle is not None:
        assert err.startswith(f"reports/bad.json:{line_of(bad, needle)}:")


def test_every_bad_report_is_listed_at_once(
    runner: CliRunner, ws: Path, shards: list[Path]
) -> None:
    write(ws / "a.json", "[]")
    write(ws / "b.json", "")
    code, _, err = merge(runner, "a.json", "b.json", *shards)
    assert code == 3
    assert err.splitlines() == [
        "a.json:1:1: a check report is a JSON object, not a list",
        "b.json:1:1: invalid JSON: Expecting value",
    ]


def test_a_report_of_an_unsharded_check_is_not_a_shard(runner: CliRunner, ws: Path) -> None:
    corpus(ws)
    run(runner, "plans/**/*.yaml", "-o", "whole.json")
    code, _, err = merge(runner, "whole.json")
    assert code == 3
    assert err == (
        "whole.json:1:1: not the JSON report of a sharded check (made by toolrun check "
        "--shard K/N --format json, or -o FILE.json)\n"
    )


def test_a_missing_shard_fails_the_merge(runner: CliRunner, shards: list[Path]) -> None:
    code, out, err = merge(runner, shards[0], shards[2])
    assert (code, out) == (3, "")
    assert err == "shard 2 of 3 missing: merge the reports of all 3 shards\n"


def test_a_shard_given_twice_is_named(runner: CliRunner, shards: list[Path]) -> None:
    again = shards[1].with_name("again.json")
    again.write_bytes(shards[1].read_bytes())
    code, _, err = merge(runner, *shards, again)
    assert code == 3
    assert err.startswith("reports/again.json:") and err.endswith(
        "shard.index: shard 2 again (also reports/shard-2.json)\n"
    )


def test_shards_of_another_split_do_not_merge(
    runner: CliRunner, ws: Path, shards: list[Path]
) -> None:
    other = shard_reports(runner, ws / "other", 2, "plans/**/*.yaml")  # reports/… of 2 shards
    code, _, err = merge(runner, shards[0], shards[1], other[0])
    assert code == 3
    assert "shard.count: not a shard of one check: it is split 2 ways" in err


def test_shards_of_other_inputs_do_not_merge(
    runner: CliRunner, ws: Path, shards: list[Path]
) -> None:
    write(ws / "plans/extra.yaml", "calls: []\n")
    other = shard_reports(runner, ws / "x", 3, "plans/**/*.yaml")
    code, _, err = merge(runner, shards[0], shards[1], other[2])
    assert code == 3
    assert "shard.inputs_digest: not a shard of one check: its inputs are not those of" in err


def test_shards_under_another_config_do_not_merge(
    runner: CliRunner, ws: Path, shards: list[Path]
) -> None:
    write(ws / "toolrun.yaml", "permissions:\n  allow: ['Bash(curl *)']\n")
    other = shard_reports(runner, ws / "x", 3, "plans/**/*.yaml")
    code, _, err = merge(runner, shards[0], shards[1], other[2])
    assert code == 3
    assert (
        "shard.config_digest: not a shard of one check: it was checked under another config" in err
    )


def test_shards_checked_with_other_fail_on_need_one_chosen(
    runner: CliRunner, ws: Path, shards: list[Path]
) -> None:
    other = shard_reports(runner, ws / "x", 3, "plans/**/*.yaml", "--fail-on", "ask")
    code, _, err = merge(runner, shards[0], shards[1], other[2])
    assert code == 3
    assert (
        "summary.fail_on: checked with --fail-on ask, reports/shard-1.json with --fail-on deny"
        in err
    )
    assert merge(runner, shards[0], shards[1], other[2], "--fail-on", "deny")[0] == 4


def test_a_pattern_matching_no_report_is_an_error(runner: CliRunner, ws: Path) -> None:
    code, _, err = merge(runner, "nothing/*.json")
    assert code == 3 and err == "nothing/*.json: no file matches this pattern\n"


@pytest.mark.parametrize(
    "extra", [["--shard", "1/2"], ["--compare-config", "new.yaml"], ["--fail-on", "loosen"]]
)
def test_merge_takes_no_check_options(
    runner: CliRunner, shards: list[Path], extra: list[str]
) -> None:
    code, _, err = merge(runner, *shards, *extra)
    assert code == 2 and "Invalid value" in err
