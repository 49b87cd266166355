"""PyYAML's loader, the C one when PyYAML was built with libyaml.

Only the YAML parsers import this module (and with it PyYAML, ~5 ms): a JSON plan
whose errors need no YAML node tree never does.
"""

from __future__ import annotations

import yaml


def _Loader(text: str) -> yaml.SafeLoader:  # named as the loader class it stands for
    """PyYAML's C loader when it was built with libyaml."""
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    return loader(text)
