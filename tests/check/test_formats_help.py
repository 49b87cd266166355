"""`check --from` names every input format; the help and the README show each with an example."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from toolrun.cli import main


def test_help_and_readme_name_every_format_with_an_example() -> None:
    from toolrun.plan.importers import FORMATS

    help_text = CliRunner().invoke(main, ["check", "--help"]).stdout
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for name in FORMATS:
        assert f"\n    {name} " in help_text or f"\n  {name} " in help_text, name
        assert f"| `{name}` |" in readme, name
    assert help_text.count("toolrun check ") >= len(FORMATS)


def test_transcript_cwd_must_be_absolute(ws: Path) -> None:
    run = CliRunner().invoke(main, ["check", "--transcript-cwd", "proj", "x.jsonl"])
    assert run.exit_code == 2
    assert "not an absolute path" in run.stderr
