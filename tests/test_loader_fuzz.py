"""A bounded, repeatable fuzz run over the loaders (issue 12): never a traceback.

The same examples run every time (derandomized); ``bench/fuzz_loaders.py --count N`` runs
longer, fresh ones.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.loader_fuzz import KINDS, TOKENS, load_everything, mutate, seeds
from toolrun.cli import main

SEEDS = seeds()
OPS = st.lists(
    st.tuples(
        st.integers(0, KINDS - 1),
        st.integers(0, 1 << 16),
        st.integers(0, 1 << 10),
        st.integers(0, 1 << 10),
    ),
    min_size=1,
    max_size=6,
)
SUFFIXES = (".yaml", ".json", ".jsonl")


def test_there_are_seeds_of_every_kind() -> None:
    suffixes = {suffix for suffix, _ in SEEDS}
    assert {".yaml", ".json", ".jsonl"} <= suffixes
    assert len(SEEDS) >= 15


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    seed=st.sampled_from(SEEDS),
    ops=OPS,
    suffix=st.one_of(st.none(), st.sampled_from(SUFFIXES)),
)
def test_mutated_files_load_or_are_located_problems(
    seed: tuple[str, bytes], ops: list[tuple[int, int, int, int]], suffix: str | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        path = workspace / f"input{suffix or seed[0]}"
        path.write_bytes(mutate(seed[1], ops))
        load_everything(path, path.name, workspace)  # raises on anything unexpected


@pytest.mark.parametrize("token", range(len(TOKENS)))
def test_each_token_in_each_seed_position_class(token: int) -> None:
    # every token at the start, the middle and the end of a YAML and a JSON seed
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for suffix, data in (SEEDS[0], next(s for s in SEEDS if s[0] == ".json")):
            for at in (0, len(data) // 2, len(data)):
                path = workspace / f"input{suffix}"
                path.write_bytes(mutate(data, [(0, at, token, 0)]))
                load_everything(path, path.name, workspace)


def _sample() -> list[tuple[str, bytes]]:
    """A few mutated files, the same every time, for the CLI."""
    out = []
    for i, (suffix, data) in enumerate(SEEDS[:12]):
        ops = [(0, len(data) // 3, (i * 7) % len(TOKENS), 0), (4, len(data) // 2, i, 130)]
        out.append((suffix, mutate(data, ops)))
    return out


def test_the_cli_exits_3_for_what_the_loader_refuses(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    refused = 0
    for n, (suffix, data) in enumerate(_sample()):
        path = tmp_path / f"in{n}{suffix}"
        path.write_bytes(data)
        outcome = load_everything(path, path.name, tmp_path)
        for command, loader in (("validate", "plan"), ("check", "input:detect")):
            result = runner.invoke(main, [command, path.name])
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                command,
                path.name,
                result.exception,
            )
            if outcome.invalid(loader):
                refused += 1
                assert result.exit_code == 3, (command, path.name, result.output)
            else:
                assert result.exit_code in (0, 4, 5), (command, path.name, result.output)
    assert refused >= 10  # the sample exercises the error paths


def test_a_real_process_reports_a_fuzzed_file_and_exits_3(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    seed = SEEDS[0][1]
    path.write_bytes(seed + b"extra: &a [*a]\n")
    for command in ("validate", "check"):
        done = subprocess.run(
            [sys.executable, "-m", "toolrun", command, "plan.yaml"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 3, done.stderr
        assert done.stderr.startswith("plan.yaml:")
        assert "Traceback" not in done.stderr
