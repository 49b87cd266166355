"""`check --shard K/N` and `check --merge-reports`: N jobs check one corpus, one answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.check.helpers import write
from toolrun.cli import main
from toolrun.report.shards import parse_shard, shard_of

RULES = """\
permissions:
  allow: ["Bash(npm ci)"]
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)", "Read(./.env)"]
"""
# what each plan asks, by the name of its file
KINDS = {
    "allow": "calls:\n  - {tool: Read, input: {file_path: README.md}}\n"
    "  - {tool: Bash, input: {command: npm ci}}\n",
    "ask": "calls:\n  - {tool: Bash, input: {command: git push origin main}}\n",
    "deny": "turns:\n  - calls:\n      - {tool: Read, input: {file_path: .env}}\n"
    "      - {tool: Read, input: {file_path: a.txt}}\n"
    "  - calls:\n      - {tool: Bash, input: {command: curl -s https://example.com}}\n",
}


def corpus(ws: Path, kinds: tuple[str, ...] = ("allow", "ask", "deny")) -> list[str]:
    """Fourteen plans in two folders (and a config beside them, which globs skip)."""
    write(ws / "toolrun.yaml", RULES)
    names = []
    for i in range(14):
        kind = kinds[i % len(kinds)]
        name = f"plans/{'sub/' if i % 3 == 0 else ''}{kind}-{i}.yaml"
        write(ws / name, KINDS[kind])
        names.append(name)
    return names


def run(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(main, ["check", *args])
    return result.exit_code, result.stdout, result.stderr


def shard_reports(runner: CliRunner, ws: Path, n: int, *args: str) -> list[Path]:
    """Run the n shards of a check, each writing its JSON report, as a CI matrix would."""
    reports = []
    for k in range(1, n + 1):
        out = ws / f"reports/shard-{k}.json"
        code, _, _ = run(runner, *args, "--shard", f"{k}/{n}", "-o", str(out))
        assert code in (0, 3, 4, 5)
        reports.append(out)
    return reports


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_shards_check_every_input_exactly_once(runner: CliRunner, ws: Path, n: int) -> None:
    corpus(ws)
    # a pattern that matches nothing is an input too: exactly one shard reports it
    args = ("plans/**/*.yaml", "missing/*.yaml", "--format", "json")
    code, out, _ = run(runner, *args)
    assert code == 3
    everything = json.loads(out)["plans"]
    assert len(everything) == 15 and "missing/*.yaml" in everything
    seen: list[str] = []
    for k in range(1, n + 1):
        code, out, _ = run(runner, *args, "--shard", f"{k}/{n}")
        report = json.loads(out)
        assert report["shard"]["index"] == k and report["shard"]["count"] == n
        assert report["shard"]["total"] == 15
        assert [everything[p["position"]] for p in report["shard"]["inputs"]] == report["plans"]
        seen += report["plans"]
    assert sorted(seen) == sorted(everything)  # each once: no input lost, none twice


def test_an_input_s_shard_is_sha256_of_its_path_not_pythons_hash() -> None:
    # pinned values: another hash (or Python's salted hash()) would move inputs between jobs
    names = ["plans/a.yaml", "plans/b.yaml", "c.json", "plans/sub/d.yaml"]
    assert [shard_of(name, 4) for name in names] == [2, 1, 3, 4]
    assert [shard_of(name, 7) for name in names] == [6, 4, 3, 7]
    assert all(shard_of(name, 1) == 1 for name in names)


def test_shard_of_a_path_is_the_same_however_the_path_is_written(
    runner: CliRunner, ws: Path
) -> None:
    corpus(ws)
    reports = {}
    for spelling in ("plans/**/*.yaml", "./plans/**/*.yaml", f"{ws}/plans/**/*.yaml"):
        _, out, _ = run(runner, spelling, "--shard", "2/3", "--format", "json")
        reports[spelling] = json.loads(out)["plans"]
    assert len({tuple(v) for v in reports.values()}) == 1
    assert reports["plans/**/*.yaml"]  # shard 2 of 3 holds some of the 14 plans


def _normal_json(text: str) -> dict[str, object]:
    """A JSON report less what differs between two runs of one check (ids, times)."""
    report = json.loads(text)
    report.pop("run_id")
    report.pop("shard", None)
    report["summary"].pop("wall_ms")
    for record in report["results"]:
        for key in ("run_id", "execution_id"):
            record.pop(key)
    return report


def _normal_text(text: str) -> str:
    text = re.sub(r" in [0-9.]+ s\b", " in T s", text)
    text = re.sub(r'(time|timestamp)="[^"]*"', r'\1="T"', text)
    return re.sub(r"exec_[0-9a-f]+", "exec_X", text)


@pytest.mark.parametrize(
    ("kinds", "fail_on", "expected"),
    [
        (("allow",), "deny", 0),
        (("allow", "ask"), "deny", 0),
        (("allow", "ask"), "ask", 5),
        (("allow", "ask", "deny"), "ask", 4),
        (("allow", "ask", "deny"), "never", 0),
    ],
)
def test_merged_reports_give_the_unsharded_summary_and_exit_code(
    runner: CliRunner, ws: Path, kinds: tuple[str, ...], fail_on: str, expected: int
) -> None:
    corpus(ws, kinds)
    args = ("plans/**/*.yaml", "--fail-on", fail_on)
    code, whole, _ = run(runner, *args, "--format", "json")
    assert code == expected
    reports = [str(p) for p in shard_reports(runner, ws, 3, *args)]
    code, merged, err = run(runner, "--merge-reports", *reports, "--format", "json")
    assert (code, err) == (expected, "")
    assert _normal_json(merged) == _normal_json(whole)
    assert json.loads(merged)["summary"]["exit_code"] == expected


@pytest.mark.parametrize("fmt", ["text", "table", "jsonl", "junit", "github"])
def test_merged_reports_print_what_the_unsharded_check_prints(
    runner: CliRunner, ws: Path, fmt: str
) -> None:
    corpus(ws)
    write(ws / "plans/broken.yaml", "calls:\n  - {tool: Nope}\n")
    code, whole, whole_err = run(runner, "plans/**/*.yaml", "--format", fmt)
    assert code == 3  # the broken plan
    reports = [str(p) for p in shard_reports(runner, ws, 4, "plans/**/*.yaml")]
    code, merged, err = run(runner, "--merge-reports", "reports/*.json", "--format", fmt)
    assert code == 3
    assert err == whole_err  # the broken plan's problem, where the unsharded check puts it
    assert "unknown tool 'Nope'" in whole + whole_err
    assert len(reports) == 4
    if fmt == "jsonl":
        strip = ("run_id", "execution_id")
        assert [
            {k: v for k, v in json.loads(line).items() if k not in strip}
            for line in merged.splitlines()
        ] == [
            {k: v for k, v in json.loads(line).items() if k not in strip}
            for line in whole.splitlines()
        ]
    else:
        assert _normal_text(merged) == _normal_text(whole)


def test_merge_keeps_the_fail_on_of_the_shards_unless_told(runner: CliRunner, ws: Path) -> None:
    corpus(ws, ("allow", "ask"))
    reports = [str(p) for p in shard_reports(runner, ws, 2, "plans/**/*.yaml", "--fail-on", "ask")]
    assert run(runner, "--merge-reports", *reports)[0] == 5
    assert run(runner, "--merge-reports", *reports, "--fail-on", "deny")[0] == 0


def test_a_ci_matrix_of_real_processes_merges_to_the_unsharded_exit_code(ws: Path) -> None:
    corpus(ws)
    toolrun = [sys.executable, "-m", "toolrun", "check"]
    whole = subprocess.run(
        [*toolrun, "plans/**/*.yaml"], cwd=ws, capture_output=True, text=True, check=False
    )
    assert whole.returncode == 4
    for k in (1, 2, 3):
        shard = subprocess.run(
            [*toolrun, "plans/**/*.yaml", "--shard", f"{k}/3", "-o", f"shard-{k}.json"],
            cwd=ws,
            capture_output=True,
            check=False,
            text=True,
        )
        assert shard.returncode in (0, 4, 5), shard.stderr
    merged = subprocess.run(
        [*toolrun, "--merge-reports", "shard-1.json", "shard-2.json", "shard-3.json"],
        cwd=ws,
        capture_output=True,
        check=False,
        text=True,
    )
    assert merged.returncode == 4, merged.stderr
    assert _normal_text(merged.stdout) == _normal_text(whole.stdout)


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1/0", "x", "1/2/3", "-1/2", " /2"])
def test_a_shard_is_k_of_n(runner: CliRunner, ws: Path, spec: str) -> None:
    corpus(ws)
    code, _, err = run(runner, "plans/**/*.yaml", "--shard", spec)
    assert code == 2 and "--shard" in err
    with pytest.raises(ValueError):
        parse_shard(spec)
