"""Real ``toolrun exec`` runs against a workspace with sentinel files beside it.

The workspace is ``tmp_path/ws``; ``tmp_path/outside`` holds sentinels (and a home
directory for ``~``). After a run, :func:`snapshot` of ``tmp_path`` minus the
workspace (and the lock folder toolrun is pointed at) must be what it was: nothing
outside created, changed or removed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def snapshot(root: Path, *skip: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry below ``root`` except those in ``skip`` (folders or files): kind and
    content (or link)."""
    out: dict[str, tuple[str, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d not in skip]
        for name in dirnames + filenames:
            path = here / name
            if path in skip:
                continue
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", "")
            else:
                out[rel] = ("file", path.read_bytes())
    return out


@dataclass
class Arena:
    tmp: Path
    ws: Path
    outside: Path
    home: Path

    @classmethod
    def make(cls, tmp: Path) -> Arena:
        tmp = tmp.resolve()
        ws, outside = tmp / "ws", tmp / "outside"
        home = outside / "home"
        for d in (ws, outside, home, home / ".ssh"):
            d.mkdir(parents=True)
        (outside / "secret.txt").write_text("TOP-SECRET sentinel\n")
        (outside / "config.yaml").write_text("sentinel: true\n")
        (home / ".bashrc").write_text("# sentinel rc\n")
        (home / ".ssh" / "authorized_keys").write_text("sentinel-key\n")
        (ws / "link_out").symlink_to(outside)
        (ws / "secret_link.txt").symlink_to(outside / "secret.txt")
        (ws / "a.txt").write_text("alpha\n")
        return cls(tmp, ws, outside, home)

    def before(self) -> dict[str, tuple[str, bytes | str]]:
        return snapshot(self.tmp, self.ws, self.tmp / "locks")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
        env.update(HOME=str(self.home), TOOLRUN_LOCK_DIR=str(self.tmp / "locks"), **extra)
        return env

    def plan(self, name: str, calls: list[dict[str, Any]]) -> Path:
        path = self.ws / name
        path.write_text(json.dumps({"calls": calls}))  # \u escapes: odd spaces survive
        return path

    def config(self, text: str) -> None:
        (self.ws / "toolrun.yaml").write_text(text)

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "toolrun", "exec", *args, "--workspace", str(self.ws),
                "--format", "jsonl"]

    def exec(self, *args: str) -> list[dict[str, Any]]:
        done = subprocess.run(self.command(*args), env=self.env(), capture_output=True, check=False,
                              text=True, timeout=120, cwd=self.ws)
        assert done.returncode in (0, 1, 4, 5), done.stderr
        return results_of(done.stdout)


def results_of(stdout: str) -> list[dict[str, Any]]:
    # split("\n"), not splitlines(): a result may carry U+2028, which JSON leaves raw.
    return [json.loads(line) for line in stdout.split("\n") if line.strip()]
