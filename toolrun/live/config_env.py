"""The environment a config depends on: what names a hook server and keys a loaded engine.

Its own module (the standard library's only) so that the client, which names the
server's socket by it, and the engines, which key their configs by it, share it without
importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping

#: the environment a config depends on (load_config reads these)
_ENV_PREFIXES = ("TOOLRUN_",)
_ENV_NAMES = ("HOME",)


def env_key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables of ``env`` a config depends on, sorted."""
    return tuple(
        sorted((k, v) for k, v in env.items() if k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES)
    )
