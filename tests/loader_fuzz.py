"""Mutation fuzzing of every file loader: plans, transcripts, call streams and configs.

Seeds are the example plans (``plans/``) and the transcript fixtures of the check tests;
a mutation inserts the tokens that broke the loaders before (aliases, tags, brackets by
the hundred, surrogate and NUL escapes, BOMs, bytes that are not UTF-8), deletes, copies
and overwrites spans. Whatever comes out, every loader must either load the file or raise
the project's located error (PlanError / ConfigError whose problems name the file);
anything else is a bug. ``tests/test_loader_fuzz.py`` runs a bounded, repeatable sample in
the suite; ``bench/fuzz_loaders.py --count N`` runs as many as asked.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# A Claude Code settings file: the shape of the config seeds that are JSON.
SETTINGS_SEED = b"""{
  "permissions": {
    "defaultMode": "default",
    "allow": ["Bash(npm run test:*)", "Read", "Edit(src/**)"],
    "deny": ["Read(./.env)", "Bash(rm -rf *)"],
    "additionalDirectories": ["../shared"]
  },
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 5}]}
    ]
  },
  "toolrun": {"maxConcurrency": 4, "maxCallsPerTurn": 64}
}
"""

TOKENS: tuple[bytes, ...] = (
    b"&x ",
    b"*x",
    b"&a [*a]",
    b"<<: *x\n",
    b"!!int ",
    b"!!float ",
    b"!!bool ",
    b"!!binary ",
    b"!!timestamp ",
    b"!!set ",
    b"!weird ",
    b"? ",
    b"[",
    b"]",
    b"{",
    b"}",
    b"[" * 150,
    b"{" * 120,
    b'{"a": ' * 110,
    b"- " * 10,
    b"\n" + b"".join(b" " * i + b"a:\n" for i in range(0, 130, 3)),
    b"\\ud800",
    b"\\udfff",
    b"\\ud83d\\ude00",
    b"\\u0000",
    b"\\0",
    b"\\x00",
    b'"',
    b"'",
    b"\\",
    b"\t",
    b"\r",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"9" * 5000,
    b"1e999",
    b".nan",
    b"-.inf",
    b"~",
    b"null",
    b"true",
    b"2026-11-29",
    b"---\n",
    b"...\n",
    b"%YAML 1.1\n",
    b": ",
    b", ",
    b"#",
    b"|\n  ",
    b">-\n  ",
    b"\xe2\x80\xa8",
    b"\x7f",
    b"\xc2\x85",
)

# kind, position, size or token, value: one mutation, as hypothesis or random draws it
Op = tuple[int, int, int, int]
KINDS = 8


def seeds() -> list[tuple[str, bytes]]:
    """(suffix, content) of every seed, in a stable order."""
    found = [
        p
        for folder in (ROOT / "plans", ROOT / "tests" / "check" / "fixtures")
        for p in folder.rglob("*")
        if p.suffix in (".yaml", ".yml", ".json", ".jsonl")
    ]
    out = [(p.suffix, p.read_bytes()) for p in sorted(found)]
    out.append((".json", SETTINGS_SEED))
    return out


def mutate(data: bytes, ops: Sequence[Op]) -> bytes:
    """``data`` with each mutation applied in turn (positions wrap around the length)."""
    for kind, position, size, value in ops:
        at = position % (len(data) + 1)
        kind %= KINDS
        if kind == 0:  # insert a token
            data = data[:at] + TOKENS[size % len(TOKENS)] + data[at:]
        elif kind == 1:  # delete a span
            data = data[:at] + data[at + size % 24 :]
        elif kind == 2:  # copy a span elsewhere
            span = data[at : at + size % 80]
            to = value % (len(data) + 1)
            data = data[:to] + span + data[to:]
        elif kind == 3:  # overwrite a byte
            data = data[:at] + bytes([value % 256]) + data[at + 1 :]
        elif kind == 4:  # a token many times over
            data = data[:at] + TOKENS[size % len(TOKENS)] * (value % 64) + data[at:]
        elif kind == 6:  # a token inside the next quoted string: the file stays well-formed
            quote = data.find(b'"', at)
            if quote >= 0:
                data = data[: quote + 1] + TOKENS[size % len(TOKENS)] + data[quote + 1 :]
        elif kind == 7:  # the next value after ": " becomes a token
            colon = data.find(b": ", at)
            if colon >= 0:
                start = colon + 2
                end = min(
                    (i for i in (data.find(b",", start), data.find(b"\n", start)) if i >= 0),
                    default=len(data),
                )
                data = data[:start] + TOKENS[size % len(TOKENS)] + data[end:]
        else:  # replace a span with a token
            data = data[:at] + TOKENS[value % len(TOKENS)] + data[at + size % 16 :]
    return data


def random_ops(rng: random.Random) -> list[Op]:
    return [
        (
            rng.randrange(KINDS),
            rng.randrange(1 << 16),
            rng.randrange(1 << 10),
            rng.randrange(1 << 10),
        )
        for _ in range(rng.randint(1, 6))
    ]


class UnexpectedError(AssertionError):
    """A loader raised something other than its located error, or an unlocated problem."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """Per loader: None when the file loaded, else the problems it reported."""

    results: tuple[tuple[str, tuple[str, ...] | None], ...]

    def invalid(self, loader: str) -> bool:
        return dict(self.results)[loader] is not None


def _located(problems: Sequence[Any], names: Sequence[str]) -> tuple[str, ...]:
    for problem in problems:
        loc = problem.location
        named = (
            loc.file in names and loc.line >= 1 and loc.column >= 1
            if loc is not None
            else any(problem.message.startswith(f"{name}: ") for name in names)
        )
        if not named:
            raise UnexpectedError(f"a problem that does not locate itself: {problem}")
    return tuple(str(p) for p in problems)


def load_everything(path: Path, display: str, workspace: Path) -> Outcome:
    """Every loader over one file (and the permission engine over the calls that load)."""
    from toolrun.config import load_config
    from toolrun.errors import ConfigError, PlanError
    from toolrun.paths import display_path
    from toolrun.permissions import PermissionEngine
    from toolrun.plan import load_plan
    from toolrun.plan.importers import FORMATS, load_input
    from toolrun.tools import default_registry

    registry = default_registry()
    config = load_config(workspace=workspace, env={}, home=workspace)
    engine = PermissionEngine(config, registry)
    loaders: list[tuple[str, Callable[[], Any]]] = [
        ("plan", lambda: load_plan(path, registry, display=display)),
        (
            "config",
            lambda: load_config(workspace=workspace, config_file=path, env={}, home=workspace),
        ),
    ]
    loaders += [
        (
            f"input:{fmt or 'detect'}",
            lambda fmt=fmt: load_input(path, registry, display=display, source_format=fmt),
        )
        for fmt in (None, *FORMATS)
    ]
    results: list[tuple[str, tuple[str, ...] | None]] = []
    for name, load in loaders:
        try:
            loaded = load()
        except (PlanError, ConfigError) as exc:
            # configs name their files as every path is shown; plans by the name given
            results.append((name, _located(exc.problems, (display, display_path(path)))))
            continue
        except Exception as exc:
            raise UnexpectedError(f"{name}: {type(exc).__name__}: {exc}") from exc
        results.append((name, None))
        plan = getattr(loaded, "plan", loaded)
        for call in getattr(plan, "calls", ()):
            try:
                engine.decide(call.tool, call.input, cwd=workspace)
            except Exception as exc:
                raise UnexpectedError(
                    f"{name}: deciding {call.tool} {dict(call.input)!r}: {type(exc).__name__}: {exc}"
                ) from exc
    return Outcome(tuple(results))
