"""One shell word as the permission engine sees it (shared by the parser and program rules)."""

from __future__ import annotations

from dataclasses import dataclass

from toolrun.dataclass_init import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: its source text and, when static, its value after quote removal."""

    raw: str
    value: str | None
    glob: bool = False
    tilde: bool = False

    @property
    def text(self) -> str:
        """The value when known, else the source text."""
        return self.value if self.value is not None else self.raw

    @property
    def is_static(self) -> bool:
        return self.value is not None and not self.glob
