"""A loaded config and its permission engine, kept while the files they came from stay.

A live guard (the hook's warm server, :func:`toolrun.decide` in an agent's process)
decides call after call for one workspace; loading the config and compiling the rules
each time is most of the cost of a decision. An entry is reused while every file the
loader read or could have read is as it was (the same size, mtime and inode, or still
absent) and the environment variables it reads are the same; otherwise the config is
loaded again, so an edit of ``toolrun.yaml`` or ``.claude/settings.json`` takes effect
on the next call. The engine keeps its own memo of decisions, which checks what each
decision read from the disk (:mod:`toolrun.permissions.observe`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.live.wire import env_key

if TYPE_CHECKING:
    from toolrun.config.models import Config
    from toolrun.permissions.resolver import PermissionEngine

Stamp = tuple[int, int, int] | None
MAX_ENTRIES = 16


def _stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def candidates(
    workspace: Path, config: Config | None, config_file: Path | None,
    settings_files: Sequence[Path], env: Mapping[str, str],
) -> tuple[Path, ...]:
    """Every file whose change (or appearance) may change the config."""
    from toolrun.config.loader import CONFIG_NAMES, MANAGED_SETTINGS_PATH

    paths: list[Path] = [*settings_files]
    if config_file is not None:
        paths.append(config_file)
    else:
        for folder in (workspace, *workspace.parents):
            paths.extend(folder / name for name in CONFIG_NAMES)
    home = Path(env.get("HOME") or Path.home())
    paths += [
        workspace / ".claude" / "settings.json",
        workspace / ".claude" / "settings.local.json",
        home / ".claude" / "settings.json",
        MANAGED_SETTINGS_PATH,
    ]
    if env.get("TOOLRUN_MANAGED_SETTINGS"):
        paths.append(Path(env["TOOLRUN_MANAGED_SETTINGS"]))
    if config is not None:
        paths.extend(config.files)
    return tuple(dict.fromkeys(paths))


@dataclass(frozen=True, slots=True)
class Loaded:
    config: Config
    engine: PermissionEngine
    paths: tuple[Path, ...]
    stamps: tuple[Stamp, ...]

    def fresh(self) -> bool:
        return tuple(_stamp(p) for p in self.paths) == self.stamps


def load(
    workspace: Path,
    *,
    config_file: Path | None = None,
    settings_files: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
) -> Loaded:
    """Load the config as every deciding command does (ConfigError: it cannot be used),
    check its rule self-tests (``toolrun.examples``: a failing one is a ConfigError, as
    in ``check``), and compile its engine."""
    from toolrun.config import load_config
    from toolrun.errors import ConfigError
    from toolrun.permissions.resolver import PermissionEngine

    env = os.environ if env is None else env
    # stamped before reading: a file changed while it is read makes the next call reload
    before = candidates(workspace, None, config_file, settings_files, env)
    stamps = [_stamp(p) for p in before]
    config = load_config(
        workspace=workspace, config_file=config_file, settings_files=settings_files, env=env
    )
    if config.examples:
        from toolrun.policy.examples import check_examples

        failed = check_examples(config)
        if failed:
            raise ConfigError(failed)
    paths = candidates(workspace, config, config_file, settings_files, env)
    extra = paths[len(before):]
    stamps += [_stamp(p) for p in extra]
    return Loaded(config, PermissionEngine(config), before + extra, tuple(stamps))


class Engines:
    """Loaded configs by (workspace, config file, settings files, environment)."""

    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], Loaded] = {}
        self._lock = threading.Lock()

    def get(
        self,
        workspace: Path,
        *,
        config_file: Path | None = None,
        settings_files: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
    ) -> Loaded:
        env = os.environ if env is None else env
        # the directory too: sources are shown relative to it (display_path)
        key = (
            str(workspace), str(config_file), tuple(map(str, settings_files)), env_key(env),
            os.getcwd(),
        )
        with self._lock:
            entry = self._entries.get(key)
        if entry is not None and entry.fresh():
            return entry
        entry = load(workspace, config_file=config_file, settings_files=settings_files, env=env)
        with self._lock:
            if len(self._entries) >= MAX_ENTRIES:
                self._entries.clear()
            self._entries[key] = entry
        return entry
