"""PermissionEngine.read_veto: why a Read rule keeps a path out of Grep/Glob/LS results."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.permissions.conftest import Tree, make_config
from toolrun.permissions import PermissionEngine
from toolrun.permissions import resolver as resolver_module


def engine(
    tree: Tree,
    *,
    deny: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    allow: tuple[str, ...] = (),
    mode: str = "default",
) -> PermissionEngine:
    config = make_config(
        tree.ws, deny=deny, ask=ask, allow=allow, mode=mode, additional=(tree.shared,)
    )
    return PermissionEngine(config)


def test_a_deny_rule_vetoes_the_file_it_covers(tree: Tree) -> None:
    e = engine(tree, deny=("Read(./.env)",))

    reason = e.read_veto(tree.ws / ".env")

    assert reason is not None
    assert "Read(./.env)" in reason
    assert e.read_veto(tree.ws / "src" / ".env") is None  # ./.env: only the top one


def test_a_bare_name_deny_rule_vetoes_at_any_depth(tree: Tree) -> None:
    e = engine(tree, deny=("Read(.env)",))
    assert e.read_veto(tree.ws / ".env") is not None
    assert e.read_veto(tree.ws / "src" / ".env") is not None


def test_a_folder_rule_vetoes_the_folder_and_what_is_inside(tree: Tree) -> None:
    e = engine(tree, deny=("Read(secret/**)",))
    assert e.read_veto(tree.ws / "secret" / "k") is not None
    assert e.read_veto(tree.ws / "secret") is not None
    assert e.read_veto(tree.ws / "src" / "a.py") is None


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "dontAsk"])
def test_an_ask_rule_vetoes_in_every_mode(tree: Tree, mode: str) -> None:
    e = engine(tree, ask=("Read(secret/**)",), mode=mode)
    reason = e.read_veto(tree.ws / "secret" / "k")
    assert reason is not None
    assert "Read(secret/**)" in reason


def test_an_allow_rule_does_not_lift_a_deny_rule(tree: Tree) -> None:
    e = engine(tree, deny=("Read(./.env)",), allow=("Read(./.env)", "Read"))
    assert e.read_veto(tree.ws / ".env") is not None


def test_a_symlink_to_a_denied_file_is_vetoed(tree: Tree) -> None:
    e = engine(tree, deny=("Read(src/a.py)",))
    reason = e.read_veto(tree.ws / "link_in")  # -> src/a.py
    assert reason is not None
    assert "Read(src/a.py)" in reason
    assert e.read_veto(tree.ws / "srclink" / "a.py") is not None  # through a folder link


def test_a_symlink_to_a_denied_file_outside_the_workspace_is_vetoed(tree: Tree) -> None:
    e = engine(tree, deny=(f"Read(/{tree.other}/secret.txt)",))
    assert e.read_veto(tree.ws / "link_out") is not None


def test_unrelated_paths_are_not_vetoed(tree: Tree) -> None:
    e = engine(tree, deny=("Read(./.env)", "Read(secret/**)"), ask=("Read(*.pem)",))
    assert e.read_veto(tree.ws / "README.md") is None
    assert e.read_veto(tree.ws / "src" / "a.py") is None
    assert e.read_veto(tree.ws / "no" / "such" / "file.txt") is None
    assert e.read_veto(tree.shared / "x.txt") is None


def test_a_plain_ask_outside_the_workspace_is_no_veto(tree: Tree) -> None:
    e = engine(tree)
    # Reading these asks (outside the boundary), but no rule covers them.
    assert e.decide("Read", {"file_path": str(tree.other / "secret.txt")}).decision == "ask"
    assert e.read_veto(tree.other / "secret.txt") is None
    assert e.read_veto(tree.ws / "link_out") is None


def test_a_path_that_becomes_a_symlink_is_decided_again(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    (ws / ".env").write_text("SECRET=1\n")
    public = ws / "public.txt"
    public.write_text("hello\n")
    e = PermissionEngine(make_config(ws, deny=("Read(./.env)",)))
    assert e.read_veto(public) is None

    public.unlink()
    public.symlink_to(ws / ".env")

    assert e.read_veto(public) is not None
    public.unlink()
    public.write_text("hello again\n")
    assert e.read_veto(public) is None


def test_the_cache_is_bounded_and_per_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolver_module, "READ_VETO_CACHE", 8)
    ws = tmp_path.resolve()
    first = PermissionEngine(make_config(ws, deny=("Read(*.key)",)))
    second = PermissionEngine(make_config(ws))
    for i in range(50):
        assert first.read_veto(ws / f"f{i}.key") is not None
    assert len(first._vetoes) == 8
    assert second.read_veto(ws / "f1.key") is None
    assert first.read_veto(ws / "f1.key") is not None


def test_read_veto_is_safe_from_threads(tree: Tree) -> None:
    e = engine(tree, deny=("Read(.env)",))
    paths = [tree.ws / ".env", tree.ws / "README.md", tree.ws / "src" / ".env"] * 200
    with ThreadPoolExecutor(max_workers=8) as pool:
        vetoed = list(pool.map(lambda p: e.read_veto(p) is not None, paths))
    assert vetoed == [True, False, True] * 200
