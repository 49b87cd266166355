"""toolrun.maxStoredOutput: sizes as people write them, and located errors for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.config.loader import load_config
from toolrun.config.sizes import format_size, parse_size
from toolrun.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "size"),
    [
        (0, 0),
        (1234, 1234),
        ("1234", 1234),
        ("64MiB", 64 * 1024**2),
        ("64 mib", 64 * 1024**2),
        ("1GB", 10**9),
        ("1gb", 10**9),
        ("1.5GiB", 3 * 1024**3 // 2),
        ("500kB", 500_000),
        ("500KiB", 500 * 1024),
        ("12B", 12),
        (" 2 TB ", 2 * 10**12),
    ],
)
def test_sizes_people_write(text: object, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "bad", [-1, "-1MB", "64M", "1K", "lots", "", "1e9", "MB", "1.5.2GB", True, 1.5, None, [64]]
)
def test_anything_else_says_what_is_accepted(bad: object) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(bad)


def test_sizes_are_stated_in_binary_units() -> None:
    assert [format_size(n) for n in (300, 64 * 1024**2, 1_500_000, 3 * 1024**3 // 2)] == [
        "300 bytes",
        "64 MiB",
        "1.4 MiB",
        "1.5 GiB",
    ]


def config_with(tmp_path: Path, value: str) -> Path:
    (tmp_path / "toolrun.yaml").write_text(f"toolrun:\n  maxStoredOutput: {value}\n")
    return tmp_path


@pytest.mark.parametrize(("value", "size"), [("64MiB", 64 * 1024**2), ("1GB", 10**9), ("0", 0)])
def test_the_config_key_takes_a_size(tmp_path: Path, value: str, size: int) -> None:
    config = load_config(workspace=config_with(tmp_path, value), home=tmp_path)
    assert config.toolrun.max_stored_output == size


def test_the_default_is_64_mib(tmp_path: Path) -> None:
    assert load_config(workspace=tmp_path, home=tmp_path).toolrun.max_stored_output == 64 * 1024**2


@pytest.mark.parametrize("value", ["64M", "-5", "yes", "lots", "[1]"])
def test_a_bad_size_is_a_located_error(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(workspace=config_with(tmp_path, value), home=tmp_path)
    (problem,) = caught.value.problems
    assert problem.location is not None and problem.location.line == 2
    assert problem.path == "toolrun.maxStoredOutput"


def test_a_misspelt_key_gets_a_hint(tmp_path: Path) -> None:
    (tmp_path / "toolrun.yaml").write_text("toolrun:\n  maxStoredOuput: 1MB\n")
    with pytest.raises(ConfigError, match="did you mean 'maxStoredOutput'"):
        load_config(workspace=tmp_path, home=tmp_path)
