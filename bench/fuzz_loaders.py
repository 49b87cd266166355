"""Fuzz every file loader for longer than the suite does (issue 12): no traceback, ever.

Run:  .venv/bin/python bench/fuzz_loaders.py [--count 20000] [--seed 1] [--cli-every 500]
                                             [--check-every 1]

Each input is a seed from plans/ or the check fixtures with random mutations
(tests/loader_fuzz.py), read by the plan loader, the config loader and every importer
(toolrun plan, Anthropic, OpenAI, Claude Code, JSONL), and every call that loads is decided
by the permission engine; inputs that load also go through `check` in process (hooks,
partition, decisions: --check-every). Every --cli-every-th input goes through `toolrun validate`
and `toolrun check` in a real process: exit 3 exactly when the loader refused it, and never
a traceback. The first input that breaks this is kept in --keep and the run exits 1.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.loader_fuzz import (  # after the repository root is on the path
    UnexpectedError,
    load_everything,
    mutate,
    random_ops,
    seeds,
)


def _cli(path: Path, invalid: dict[str, bool]) -> str | None:
    """What is wrong with the CLI's answer for ``path``, or None."""
    for command, loader in (("validate", "plan"), ("check", "input:detect")):
        done = subprocess.run(
            [sys.executable, "-m", "toolrun", command, path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            check=False,
        )
        if "Traceback" in done.stderr:
            return f"{command}: traceback\n{done.stderr}"
        expected = {3} if invalid[loader] else {0, 4, 5}
        if done.returncode not in expected:
            return f"{command}: exit {done.returncode}, expected {sorted(expected)}\n{done.stderr}"
    return None


def _checked(path: Path) -> str | None:
    """What went wrong when ``check`` (the executor in dry-run mode: hooks, partition,
    decisions) took an input that loads, or None."""
    from toolrun.commands.check import CheckRequest, check

    report = check(CheckRequest(inputs=[str(path)], workspace=path.parent))
    broken = [str(p) for p in report.problems if "could not be checked" in p.message]
    return "check: " + "; ".join(broken) if broken else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000, help="inputs to try")
    parser.add_argument("--seed", type=int, default=1, help="random seed (a run is repeatable)")
    parser.add_argument("--cli-every", type=int, default=500, help="every Nth input via the CLI")
    parser.add_argument(
        "--check-every", type=int, default=1, help="every Nth input that loads also via check"
    )
    parser.add_argument("--keep", type=Path, default=Path("fuzz-failure.bin"))
    args = parser.parse_args()

    rng = random.Random(args.seed)
    corpus = seeds()
    refused: Counter[str] = Counter()
    cli_runs = checks = loaded = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for n in range(1, args.count + 1):
            suffix, data = rng.choice(corpus)
            suffix = rng.choice((suffix, suffix, ".yaml", ".json", ".jsonl"))
            mutated = mutate(data, random_ops(rng))
            path = workspace / f"input{suffix}"
            path.write_bytes(mutated)
            problem: str | None = None
            try:
                outcome = load_everything(path, path.name, workspace)
            except UnexpectedError as exc:
                problem = str(exc)
            else:
                invalid = {name: result is not None for name, result in outcome.results}
                refused.update(name for name, bad in invalid.items() if bad)
                if not invalid["input:detect"]:
                    loaded += 1
                    if args.check_every and loaded % args.check_every == 0:
                        checks += 1
                        problem = _checked(path)
                if problem is None and args.cli_every and n % args.cli_every == 0:
                    cli_runs += 1
                    problem = _cli(path, invalid)
            if problem is not None:
                args.keep.write_bytes(mutated)
                print(f"input {n} ({suffix}) broke a loader: {problem}")
                print(f"kept in {args.keep}")
                return 1
    elapsed = time.perf_counter() - started
    print(
        f"{args.count} inputs ({args.count / elapsed:.0f}/s), {checks} that loaded also checked,"
        f" {cli_runs} also through the CLI:"
    )
    print(
        "no traceback; refused per loader: "
        + ", ".join(f"{k} {v}" for k, v in sorted(refused.items()))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
