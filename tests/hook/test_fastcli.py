"""`python -m toolrun hook` skips click on its warm path: the same options, the same
answers, and click's own handling for anything it does not read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click

from tests.hook.conftest import ROOT, Hook, answer, base_env, payload
from toolrun.cli.hook import hook as hook_command
from toolrun.live.fastcli import OPTIONS, parse


def test_the_fast_parser_knows_the_click_commands_options() -> None:
    names = {
        opt: (p.name, tuple(p.type.choices) if isinstance(p.type, click.Choice) else
              (() if p.is_flag else None))
        for p in hook_command.params if isinstance(p, click.Option) for opt in p.opts
    }
    keys = {"protocol": "protocol", "fail": "fail", "allow_read_only": "allow_read_only",
            "workspace": "workspace", "config_file": "config_file",
            "settings_files": "settings_files", "no_journal": "journal"}
    assert {o: (keys[n], c) for o, (n, c) in names.items()} == OPTIONS


def test_what_it_cannot_read_goes_to_click() -> None:
    env: dict[str, str] = {}
    assert parse(["--fail", "closed", "--settings=a.json", "--settings", "b.json"], env) == {
        "protocol": None, "fail": "closed", "allow_read_only": False, "workspace": None,
        "config_file": None, "settings_files": ["a.json", "b.json"], "journal": True,
    }
    for argv in (["--help"], ["-h"], ["--fail"], ["--fail", "maybe"], ["--no-journal=1"],
                 ["--workspace="], ["extra"], ["--bogus"]):
        assert parse(argv, env) is None, argv


def test_the_click_command_answers_the_same(hook: Hook, ws: Path, tmp_path: Path) -> None:
    """The console script (`toolrun hook`, through click) and `python -m toolrun hook`."""
    for command in ("rm -rf build", "git status", "npm test"):
        data = payload(ws, "Bash", {"command": command})
        fast = hook(data, "--no-journal")
        slow = subprocess.run(
            [sys.executable, "-c", "from toolrun.cli import main; main()", "hook",
             "--no-journal"],
            input=json.dumps(data), capture_output=True, text=True, cwd=ws,
            env={**base_env(tmp_path), "PYTHONPATH": str(ROOT)}, timeout=120, check=False,
        )
        assert (slow.returncode, slow.stdout, slow.stderr) == (
            fast.returncode, fast.stdout, fast.stderr
        )
    assert answer(hook(payload(ws, "Bash", {"command": "rm x"}), "--format=claude"))


def test_help_is_clicks(hook: Hook, ws: Path) -> None:
    done = hook(b"", "--help")
    assert done.returncode == 0
    assert done.stdout.startswith("Usage: toolrun hook [OPTIONS]")
