"""Configuration: toolrun.yaml and Claude Code settings, merged with their sources."""

from __future__ import annotations

from toolrun.config.loader import discover_config, load_config
from toolrun.config.models import Config, PermissionRule, SettingSource, SourceKind

__all__ = [
    "Config",
    "PermissionRule",
    "SettingSource",
    "SourceKind",
    "discover_config",
    "load_config",
]
