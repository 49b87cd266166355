"""A ``toolrun exec`` killed mid-call (SIGKILL: no exit handler runs) leaves its temporary
folder, with what the call wrote to its private /tmp; the next run of that kind removes
it, and never the folder of a run still going."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.conftest import (
    SANDBOX_ON,
    bash,
    exec_argv,
    needs_bwrap,
    processes_with,
    wait_until,
    write,
)

pytestmark = needs_bwrap

UNSANDBOXED = """\
toolrun:
  enforce: "off"
permissions:
  allow: ["Bash(cd *)", "Bash(sleep *)", "Bash(true)"]
"""

# (config, prefix of the folder, the long call (MARK: its sleep's marker), a short call)
KINDS = {
    # the user's sandbox: its private /tmp is in the folder
    "sandbox": (SANDBOX_ON, "toolrun-sandbox-",
                'echo secret > "$TMPDIR/note" && sleep MARK', "true"),
    # judged read-only: the read-only jail
    "jail": ("", "toolrun-jail-", "sleep MARK", "sleep 0"),
    # neither: where a shell that may cd says where it went
    "cd probe": (UNSANDBOXED, "toolrun-bash-", "cd . && sleep MARK", "cd . && true"),
}  # fmt: skip


def start(ws: Path, tmp: Path, config: str, command: str, marker: str) -> subprocess.Popen[str]:
    """``toolrun exec`` of one call, with ``tmp`` as its temporary folder, once it runs."""
    write(ws / "toolrun.yaml", config)
    plan = write(ws.parent / "plan-long.json", json.dumps({"calls": [bash(command)]}))
    proc = subprocess.Popen(
        exec_argv(plan, ws), cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip
    assert wait_until(lambda: bool(processes_with(marker)), timeout=60), "it never started"
    return proc


def run(ws: Path, tmp: Path, config: str, command: str) -> None:
    write(ws / "toolrun.yaml", config)
    plan = write(ws.parent / "plan-short.json", json.dumps({"calls": [bash(command)]}))
    done = subprocess.run(
        exec_argv(plan, ws), cwd=ws, capture_output=True, text=True, timeout=120,
        env={**os.environ, "TMPDIR": str(tmp)}, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"status": "ok"' in done.stdout


def folders(tmp: Path, prefix: str) -> list[Path]:
    return sorted(p for p in tmp.iterdir() if p.name.startswith(prefix))


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_folder_a_killed_run_left_goes_at_the_next_run(
    ws: Path, tmp_path: Path, kind: str
) -> None:
    # before: every killed run left its folder in /tmp for good
    config, prefix, long, short = KINDS[kind]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    marker = f"997.{list(KINDS).index(kind) + 1}"  # (no other test sleeps 997.N or 998.N)
    proc = start(ws, tmp, config, long.replace("MARK", marker), marker)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert wait_until(lambda: not processes_with(marker), timeout=30)
    left = folders(tmp, prefix)
    assert len(left) == 1  # its end ran no clean-up
    if kind == "sandbox":
        assert (left[0] / "tmp" / "note").read_text() == "secret\n"

    run(ws, tmp, config, short)

    assert folders(tmp, prefix) == []  # the killed run's, and the new run's own at its end


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_folder_of_a_run_still_going_is_kept(ws: Path, tmp_path: Path, kind: str) -> None:
    config, prefix, long, short = KINDS[kind]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    marker = f"998.{list(KINDS).index(kind) + 1}"
    proc = start(ws, tmp, config, long.replace("MARK", marker), marker)
    try:
        going = folders(tmp, prefix)
        assert len(going) == 1

        run(ws, tmp, config, short)

        assert folders(tmp, prefix) == going
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    assert folders(tmp, prefix) == []  # its own end removed it
