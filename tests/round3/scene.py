"""The round-3 attack scene: a workspace that bash and the kernel can be asked to leave.

Layout (``tmp_path`` is ``T``)::

    T/ws/                        the workspace, a real git repository
        .env                     SECRET=ws-dotenv-sentinel   (committed, Read-denied)
        config/.env              SECRET=config-dotenv-sentinel (committed, Read-denied)
        config/app.yaml
        docs/a.md                "docs sentinel"               (Edit-denied)
        src/main.py
        src/link -> T/outside    so ``src/link/..`` is T and ``src/link/../ws`` is the workspace
        README.md
    T/outside/secret.txt         TOP-SECRET sentinel, outside everything
    T/outside/home/              $HOME: .bashrc, .profile, .gitconfig sentinels

:class:`Scene` runs plans for real (``toolrun exec`` or ``check`` in a subprocess, no
terminal, so asks are denials) and :meth:`Scene.unchanged` compares the whole tree with
what it was, the workspace included, minus what toolrun itself writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.cli.attack_support import snapshot

DENY_SECRETS = (
    "permissions:\n"
    "  deny: ['Read(./.env)', 'Read(./config/.env)', 'Edit(./docs/**)']\n"
)
SECRETS = ("ws-dotenv-sentinel", "config-dotenv-sentinel", "TOP-SECRET")


def _git(ws: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(ws.parent / "outside" / "home"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)


@dataclass
class Scene:
    tmp: Path
    ws: Path
    outside: Path
    home: Path
    _before: dict[str, tuple[str, bytes | str]] = field(default_factory=dict)

    @classmethod
    def make(cls, tmp: Path, *, git: bool = True) -> Scene:
        tmp = tmp.resolve()
        ws, outside = tmp / "ws", tmp / "outside"
        home = outside / "home"
        for d in (ws / "config", ws / "docs", ws / "src", home):
            d.mkdir(parents=True)
        (ws / ".env").write_text("SECRET=ws-dotenv-sentinel\n")
        (ws / "config" / ".env").write_text("SECRET=config-dotenv-sentinel\n")
        (ws / "config" / "app.yaml").write_text("name: app\n")
        (ws / "docs" / "a.md").write_text("docs sentinel\n")
        (ws / "src" / "main.py").write_text("print('hi')\n")
        (ws / "README.md").write_text("# readme\n")
        (ws / "src" / "link").symlink_to(outside)
        (outside / "secret.txt").write_text("TOP-SECRET sentinel\n")
        for rc in (".bashrc", ".profile", ".gitconfig"):
            (home / rc).write_text(f"# sentinel {rc}\n")
        if git:
            _git(ws, "init", "-q", "-b", "main")
            _git(ws, "add", "-A")
            _git(ws, "commit", "-q", "-m", "initial")
        scene = cls(tmp, ws, outside, home)
        scene._before = scene.snapshot()
        return scene

    def snapshot(self) -> dict[str, tuple[str, bytes | str]]:
        skip = (self.tmp / "locks", self.ws / ".toolrun", self.ws / "plan.json",
                self.ws / "toolrun.yaml", self.ws / ".git" / "index")
        return snapshot(self.tmp, *skip)

    def changed(self) -> list[str]:
        """What differs from the tree as it was made (created, changed or removed)."""
        now = self.snapshot()
        keys = set(now) | set(self._before)
        return sorted(k for k in keys if now.get(k) != self._before.get(k))

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
        env.update(HOME=str(self.home), TOOLRUN_LOCK_DIR=str(self.tmp / "locks"),
                   GIT_CONFIG_NOSYSTEM="1", **extra)
        return env

    def config(self, text: str = DENY_SECRETS) -> None:
        (self.ws / "toolrun.yaml").write_text(text)

    def run(
        self, commands: list[str], *, mode: str | None = None, command: str = "exec",
        extra: tuple[str, ...] = (),
    ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
        """Run Bash ``commands`` (one call each, in order) and return the process and results."""
        calls = [{"tool": "Bash", "input": {"command": c}} for c in commands]
        (self.ws / "plan.json").write_text(json.dumps({"calls": calls}))
        args = [sys.executable, "-m", "toolrun", command, "plan.json", "--workspace",
                str(self.ws), "--format", "jsonl" if command == "exec" else "json", *extra]
        if mode is not None:
            args += ["--mode", mode]
        done = subprocess.run(args, env=self.env(), capture_output=True, text=True, check=False,
                              timeout=120, cwd=self.ws, stdin=subprocess.DEVNULL)
        assert "Traceback" not in done.stderr, done.stderr
        if command != "exec":
            return done, []
        results = [json.loads(line) for line in done.stdout.split("\n") if line.strip()]
        return done, results

    def leaked(self, results: list[dict[str, Any]]) -> list[str]:
        """The sentinels that reached the output."""
        text = json.dumps(results)
        return [s for s in SECRETS if s in text]
