"""No bubblewrap, or no namespaces: an error naming the fix, or a warning and no sandbox."""

from __future__ import annotations

import os
from pathlib import Path

from tests.sandbox.conftest import bash, exec_plan, write
from toolrun.sandbox.availability import probe

MISSING = (
    "permissions:\n  defaultMode: bypassPermissions\n"
    "sandbox:\n  enabled: true\n  bwrapPath: /nonexistent/bwrap\n"
)


def broken_bwrap(tmp_path: Path) -> Path:
    """A bwrap that fails as it does where user namespaces are not allowed."""
    fake = write(
        tmp_path / "bin" / "bwrap",
        ("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"),
    )
    fake.chmod(0o755)
    return fake


def test_the_probe_names_what_is_missing_and_how_to_fix_it(tmp_path: Path) -> None:
    missing = probe("/nonexistent/bwrap")
    assert not missing.ok
    assert "bubblewrap (bwrap) is not installed at /nonexistent/bwrap" in str(missing.reason)
    assert "apt-get install bubblewrap" in str(missing.reason)
    broken = probe(str(broken_bwrap(tmp_path)))
    assert "cannot create namespaces" in str(broken.reason)
    assert "No permissions to create new namespace" in str(broken.reason)


def test_fail_if_unavailable_makes_the_call_an_error(ws: Path, tmp_path: Path) -> None:
    config = MISSING + "  failIfUnavailable: true\n"
    results, done = exec_plan(ws, config, [bash("echo x > ../written")])
    assert results[0]["status"] == "error"
    assert "cannot run sandboxed" in results[0]["error"]
    assert "failIfUnavailable: false" in results[0]["error"]  # the other fix
    assert not (tmp_path / "written").exists()
    assert done.returncode == 1


def test_namespaces_refused_is_an_error_too(ws: Path, tmp_path: Path) -> None:
    fake = broken_bwrap(tmp_path)
    config = f"sandbox:\n  enabled: true\n  failIfUnavailable: true\n  bwrapPath: {fake}\n"
    results, _ = exec_plan(ws, config, [bash("echo hi")])
    assert results[0]["status"] == "error"
    assert "cannot create namespaces" in results[0]["error"]


def test_by_default_it_warns_and_runs_unsandboxed(ws: Path) -> None:
    results, done = exec_plan(ws, MISSING, [bash("echo hi"), bash("echo again")])
    assert [r["status"] for r in results] == ["ok", "ok"]
    assert results[0]["output"].startswith("toolrun: warning: running unsandboxed: bubblewrap")
    assert results[0]["metadata"]["sandbox"]["sandboxed"] is False
    # On stderr once per run, not once per call.
    assert done.stderr.count("toolrun: warning: sandbox unavailable") == 1


def test_without_bwrap_on_path(ws: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "echo"):
        found = next(
            (Path(d) / tool for d in os.defpath.split(":") if (Path(d) / tool).exists()), None
        )
        if found is not None:
            (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}
    config = "sandbox:\n  enabled: true\n  failIfUnavailable: true\n"
    results, _ = exec_plan(ws, config, [bash("echo hi")], env=env)
    assert "bubblewrap (bwrap) is not installed on PATH" in results[0]["error"]


def test_a_sandbox_that_fails_to_start_is_an_error_saying_so(ws: Path, tmp_path: Path) -> None:
    fake = write(
        tmp_path / "bin" / "bwrap",
        (
            '#!/bin/sh\nfor last; do :; done\ncase "$last" in */true) exit 0;; esac\n'
            'echo "bwrap: Can\'t mount proc on /newroot/proc: Operation not permitted" >&2\nexit 1\n'
        ),
    )
    fake.chmod(0o755)
    config = f"sandbox:\n  enabled: true\n  bwrapPath: {fake}\n"
    results, _ = exec_plan(ws, config, [bash("echo hi")])
    assert results[0]["status"] == "error"
    assert results[0]["error"] == (
        "the sandbox could not start: bwrap: Can't mount proc on /newroot/proc: "
        "Operation not permitted"
    )
