"""The registry: built-ins plus third-party tools from the ``toolrun.tools`` entry points."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main
from toolrun.tools import ToolRegistry, default_registry
from toolrun.tools.builtins import BUILTIN_CLASSES, BUILTIN_TOOLS
from toolrun.tools.builtins.read import ReadTool

PLUGIN = '''
from toolrun.tools.base import BaseTool, ToolContext, ToolInput, ToolKind, ToolOutput


class ShoutInput(ToolInput):
    text: str


class ShoutTool(BaseTool[ShoutInput]):
    name = "Shout"
    description = "Upper-cases its text."
    kind = ToolKind.READ
    concurrency = "always"
    input_model = ShoutInput

    def is_concurrency_safe(self, input, ctx=None):
        return True

    async def run(self, input, ctx):
        return ToolOutput(input.text.upper())
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed distribution, as pip would lay it out, declaring one tool."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "toolrun_shout.py").write_text(PLUGIN)
    info = site / "toolrun_shout-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toolrun-shout\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[toolrun.tools]\nshout = toolrun_shout:ShoutTool\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()


def test_builtins_are_registered_by_name() -> None:
    registry = default_registry(plugins=False)
    assert registry.names() == sorted(t.name for t in BUILTIN_TOOLS)
    assert registry.source_of("Read") == "builtin"
    assert registry.suggest("read") == "Read"
    assert registry.suggest("Grpe") == "Grep"


def test_a_name_cannot_be_registered_twice() -> None:
    registry = ToolRegistry()
    registry.register(BUILTIN_TOOLS[0])
    with pytest.raises(ValueError, match="already registered by builtin"):
        registry.register(BUILTIN_TOOLS[0], source="plugin:x")
    registry.register(BUILTIN_TOOLS[0], source="plugin:x", replace=True)
    assert registry.source_of(BUILTIN_TOOLS[0].name) == "plugin:x"


def test_entry_point_tools_join_the_registry(plugin: None) -> None:
    registry = default_registry()
    assert "Shout" in registry
    assert registry.source_of("Shout") == "plugin:toolrun-shout"


def test_a_plugin_tool_is_listed_validated_and_run(
    plugin: None, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = runner.invoke(main, ["tools", "--format", "json"])
    assert {"name": "Shout", "source": "plugin:toolrun-shout"}.items() <= next(
        row for row in json.loads(listing.stdout) if row["name"] == "Shout"
    ).items()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text("permissions: {allow: [Shout]}\n")
    (tmp_path / "plan.yaml").write_text("calls:\n  - {tool: Shout, input: {text: hi}}\n")
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["output"] == "HI"
    bad = tmp_path / "bad.yaml"
    bad.write_text("calls:\n  - {tool: Shout, input: {txt: hi}}\n")
    invalid = runner.invoke(main, ["validate", "bad.yaml"])
    assert invalid.exit_code == 3
    assert "bad.yaml:2:27: calls[0].input.txt: unknown key 'txt' (did you mean 'text'?)" in invalid.stderr


def test_the_light_table_of_builtin_names_matches_the_registry() -> None:
    from toolrun.builtin_fields import BUILTIN_TOOL_NAMES, MAIN_FIELDS

    registry = default_registry(plugins=False)
    assert list(BUILTIN_TOOL_NAMES) == registry.names()
    for name, fields in MAIN_FIELDS.items():
        tool = registry.get(name)
        assert tool is not None
        assert set(fields) <= set(tool.input_model.model_json_schema(by_alias=True)["properties"])


def test_a_builtin_is_imported_when_first_asked_for() -> None:
    """Names, membership, sources and hints come from the table; a tool's module loads
    with the first get (a one-call run imports the one tool it runs)."""
    code = (
        "import sys\n"
        "from toolrun.tools import default_registry\n"
        "r = default_registry(plugins=False)\n"
        "tools = lambda: sorted(m for m in sys.modules if m.startswith('toolrun.tools.builtins.')"
        " and not m.split('.')[-1].startswith('_'))\n"
        "print(r.names(), len(r), 'Grep' in r, r.source_of('LS'), r.suggest('Grpe'), tools())\n"
        "print(r.get('Read').name, r.get('Nope'), tools())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == f"{sorted(BUILTIN_CLASSES)} 10 True builtin Grep []"
    assert out[1] == "Read None ['toolrun.tools.builtins.read']"


def test_a_registered_name_is_taken_before_its_tool_is_made() -> None:
    registry = default_registry(plugins=False)
    shout = ReadTool()
    with pytest.raises(ValueError, match="'Read' is already registered by builtin"):
        registry.register(shout, source="plugin:x")
    registry.register(shout, source="plugin:x", replace=True)
    assert registry.get("Read") is shout and registry.source_of("Read") == "plugin:x"


def test_every_registry_shares_the_one_instance_of_each_builtin() -> None:
    first, second = default_registry(plugins=False), default_registry(plugins=False)
    assert first.get("Bash") is second.get("Bash")
    assert [entry.tool for entry in first] == sorted(BUILTIN_TOOLS, key=lambda t: t.name)
    assert list(BUILTIN_CLASSES) == [t.name for t in BUILTIN_TOOLS]


def test_a_lazy_tool_must_carry_the_name_it_was_registered_under() -> None:
    registry = ToolRegistry()
    registry.register_lazy("Grep", ReadTool)
    with pytest.raises(TypeError, match="registered as 'Grep' is named 'Read'"):
        registry.get("Grep")


def test_without_a_plugin_distribution_entry_points_are_not_looked_up() -> None:
    """importlib.metadata (~15 ms to import) is left alone when no distribution on the
    path declares the group; the lookup above shows the other side."""
    code = (
        "import sys\n"
        "from toolrun.tools import default_registry\n"
        "registry = default_registry()\n"
        "print(len(registry), 'importlib.metadata' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out == "10 False\n"


def test_a_plugin_declared_anywhere_unusual_takes_the_full_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolrun.tools.registry import _may_declare_plugins

    site = tmp_path / "site"
    (site / "other-1.0.dist-info").mkdir(parents=True)
    (site / "other-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nx = y\n")
    (site / "legacy.egg-info").write_text("Name: legacy\n")  # a file: no entry points
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "missing")])
    assert _may_declare_plugins() is False
    # the group in a distribution's entry points, whatever the spelling of the folder
    (site / "Shout-1.0.DIST-INFO").mkdir()
    (site / "Shout-1.0.DIST-INFO" / "entry_points.txt").write_text("[ toolrun.tools ]\n")
    assert _may_declare_plugins() is True
    (site / "Shout-1.0.DIST-INFO" / "entry_points.txt").unlink()
    assert _may_declare_plugins() is False
    # a zip on the path, an egg folder, another distribution finder: not looked into here
    (tmp_path / "plugins.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "plugins.zip")])
    assert _may_declare_plugins() is True
    (tmp_path / "thing-1.0.egg").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "thing-1.0.egg")])
    assert _may_declare_plugins() is True

    class Finder:
        def find_spec(self, *args: object) -> None:
            return None

        def find_distributions(self, *args: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert _may_declare_plugins() is True
