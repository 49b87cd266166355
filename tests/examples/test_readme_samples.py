"""What the README shows is what toolrun does.

Its sample outputs are real runs (``scripts/readme_samples.py`` writes them; here they are
run again and compared, times and ids masked), and its configuration example decides each
call of the table beside it as the table says, by the rule it names.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.scripts import load_script
from toolrun.cli import main

ROOT = Path(__file__).parents[2]


SCRIPT = load_script("readme_samples")
SHOWN = [
    (doc, name, body) for doc in SCRIPT.documents() for name, body in SCRIPT.blocks(doc.read_text())
]


def bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


def test_every_sample_is_shown_and_every_shown_block_is_a_sample() -> None:
    assert {name for _, name, _ in SHOWN} == {s.name for s in SCRIPT.SAMPLES}


@pytest.mark.parametrize(("doc", "name", "body"), SHOWN, ids=[n for _, n, _ in SHOWN])
def test_a_sample_output_is_what_toolrun_prints(doc: Path, name: str, body: str) -> None:
    sample = next(s for s in SCRIPT.SAMPLES if s.name == name)
    if "jail" in body and not bwrap_works():
        pytest.skip("this sample shows where calls run: bubblewrap cannot make a jail here")
    assert body.startswith(f"$ {sample.command}\n"), f"{doc.name}: the sample's command changed"
    real = SCRIPT.block_body(sample, SCRIPT.run(sample))
    assert SCRIPT.masked(real) == SCRIPT.masked(body), (
        f"{doc.name}: sample {name} differs from real output; run scripts/readme_samples.py"
    )


def test_masking_hides_only_what_changes_between_runs() -> None:
    line = "ok  call-1  Glob(**/*.py)  94 ms  exec_dc4609d4-9be5-41bd  8 ok in 1.3 s"
    assert SCRIPT.masked(line) == "ok call-1 Glob(**/*.py) N ms exec_ID 8 ok in N ms"
    assert SCRIPT.masked("deny call-4") != SCRIPT.masked("allow call-4")
    # a wrapped line breaks where its length says: the words are compared, not the breaks
    assert SCRIPT.masked("in 1.4 s\n    more") == SCRIPT.masked("in\n    980 ms more")


def config_example() -> tuple[str, list[tuple[str, str, str]]]:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- config-example -->", 1)[1].split("<!-- /config-example -->", 1)[0]
    config = block.split("```yaml\n", 1)[1].split("```", 1)[0]
    rows = re.findall(r"^\| `(.+?)` \| (allow|ask|deny) \| (.+?) \|$", block, re.MULTILINE)
    return config, [(call.replace("\\|", "|"), decision, why) for call, decision, why in rows]


CONFIG, ROWS = config_example()


@pytest.mark.parametrize(("call", "expected", "why"), ROWS, ids=[r[0] for r in ROWS])
def test_the_config_example_decides_the_calls_beside_it(
    tmp_path: Path, call: str, expected: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "toolrun.yaml").write_text(CONFIG)
    (tmp_path / "src").mkdir()
    for name in (".env", "src/app.py", "README.md"):
        (tmp_path / name).write_text("x\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, ["explain-permission", "--format", "json", call])
    answer = json.loads(run.stdout)
    assert answer["decision"] == expected, answer["reason"]
    named = re.match(r"`([^`]+)`", why)
    if named and answer["decided_by"]["kind"] == "rule":
        assert answer["decided_by"]["rule"] == named[1]
    elif named:
        # not a rule's decision: the table's "why" names a command, not a rule
        assert answer["decided_by"]["kind"] in ("readonly", "default", "mode"), answer["decided_by"]


def test_the_config_example_has_a_row_for_each_rule() -> None:
    rules = re.findall(r'"([A-Za-z]+(?:\([^)]*\))?)"', CONFIG)
    whys = " ".join(why for _, _, why in ROWS)
    assert rules and all(f"`{rule}`" in whys for rule in rules), rules


@pytest.mark.parametrize("doc", SCRIPT.documents(), ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(doc: Path) -> None:
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.DOTALL)
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (doc.parent / target).exists(), f"{doc.name}: {target}"
