"""A real directory tree for permission tests, and helpers that build configs directly.

Layout (created once per session, under a temporary root)::

    root/home/                   $HOME (tests see it as ~)
        .bashrc  .ssh/id_rsa
        proj/                    the workspace
            src/a.py  src/.env  .env  .git/config  secret/k  README.md
            link_out   -> root/other/secret.txt   (symlink escaping the workspace)
            link_in    -> src/a.py                (symlink inside)
            srclink    -> src                     (directory symlink inside)
            escape_dir -> root/other              (directory symlink escaping)
    root/other/secret.txt        outside everything
    root/shared/x.txt            an additionalDirectories entry
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind
from toolrun.permissions import Decision, PermissionEngine


@dataclass(frozen=True)
class Tree:
    root: Path
    home: Path
    ws: Path
    other: Path
    shared: Path


def _build(root: Path) -> Tree:
    root = root.resolve()
    home = root / "home"
    ws = home / "proj"
    other = root / "other"
    shared = root / "shared"
    for d in (ws / "src", ws / ".git", ws / "secret", home / ".ssh", other, shared):
        d.mkdir(parents=True, exist_ok=True)
    for f in (
        ws / "src" / "a.py",
        ws / "src" / ".env",
        ws / ".env",
        ws / ".git" / "config",
        ws / "secret" / "k",
        ws / "README.md",
        home / ".bashrc",
        home / ".ssh" / "id_rsa",
        other / "secret.txt",
        shared / "x.txt",
    ):
        f.write_text("x\n")
    (ws / "link_out").symlink_to(other / "secret.txt")
    (ws / "link_in").symlink_to(ws / "src" / "a.py")
    (ws / "srclink").symlink_to(ws / "src", target_is_directory=True)
    (ws / "escape_dir").symlink_to(other, target_is_directory=True)
    return Tree(root, home, ws, other, shared)


@pytest.fixture(scope="session")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return _build(tmp_path_factory.mktemp("perm"))


@pytest.fixture(autouse=True)
def _home(tree: Tree, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree.home))


def source(ws: Path, line: int, kind: SourceKind = SourceKind.TOOLRUN, name: str = "toolrun.yaml"
           ) -> SettingSource:
    return SettingSource(kind, ws / name, line, ws)


def make_config(
    ws: Path,
    *,
    allow: Iterable[str] = (),
    ask: Iterable[str] = (),
    deny: Iterable[str] = (),
    mode: str = "default",
    additional: Iterable[Path] = (),
    kind: SourceKind = SourceKind.TOOLRUN,
    name: str = "toolrun.yaml",
) -> Config:
    """Rules as if written in ``ws/toolrun.yaml``: deny first, then ask, then allow, one a line."""
    rules: list[PermissionRule] = []
    line = 2
    for behavior, texts in (("deny", deny), ("ask", ask), ("allow", allow)):
        for text in texts:
            where = source(ws, line, kind, name)
            rules.append(PermissionRule(behavior, text, where))  # type: ignore[arg-type]
            line += 1
    return Config(
        workspace=ws,
        default_mode=mode,  # type: ignore[arg-type]
        mode_source=source(ws, 1, kind, name) if mode != "default" else None,
        rules=tuple(rules),
        additional_directories=tuple(additional),
    )


def decide(
    tree: Tree,
    tool: str,
    input: Mapping[str, Any],
    *,
    allow: Iterable[str] = (),
    ask: Iterable[str] = (),
    deny: Iterable[str] = (),
    mode: str = "default",
    cwd: Path | None = None,
) -> Decision:
    config = make_config(
        tree.ws, allow=allow, ask=ask, deny=deny, mode=mode, additional=(tree.shared,)
    )
    return PermissionEngine(config).decide(tool, input, cwd=cwd)


@dataclass(frozen=True)
class SecretLink:
    """A workspace ``ws`` whose ``notes`` is a symlink to ``src/a.py`` inside it, a
    ``secret.txt`` outside it, and a config denying Reads of that secret: point ``notes``
    at the secret (:meth:`retarget`) and a decision that reads it must be a deny."""

    ws: Path
    link: Path
    secret: Path
    config: Config

    def retarget(self, *, to_secret: bool) -> None:
        self.link.unlink()
        self.link.symlink_to(self.secret if to_secret else self.ws / "src" / "a.py")


def secret_link(tmp_path: Path) -> SecretLink:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("s\n")
    link = ws / "notes"
    link.symlink_to(ws / "src" / "a.py")
    config = make_config(ws, deny=["Read(//" + str(secret)[1:] + ")"])
    return SecretLink(ws, link, secret, config)
