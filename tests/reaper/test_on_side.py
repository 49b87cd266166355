"""A command started on a jail's side process (``toolrun.reaper.run._on_side``, shared with
the sandbox's): its working directory carries to the next call through the probe written
inside, and it gets the jail's private TMPDIR, or the user's in the masks-only jail.

Real plans, real ``toolrun exec`` and bubblewrap (the sandbox's side of the helper:
tests/sandbox/test_bash_sandboxed.py, the working directory carries).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.round3.scene import Scene
from toolrun.sandbox.availability import probe

pytestmark = pytest.mark.skipif(not probe().ok, reason=f"no jail here: {probe().reason}")


class _Jailed(Scene):
    kind = "read-only"

    def env(self, **extra: str) -> dict[str, str]:
        return super().env(TOOLRUN_TEST_JUDGE_ALL=self.kind, **extra)


def _run(tmp_path: Path, commands: list[str], kind: str = "read-only") -> list[str]:
    scene = _Jailed.make(tmp_path, git=False)
    scene.kind = kind  # (no config: the scene's Read denials make unresolved paths ask)
    done, results = scene.run(commands, mode="bypassPermissions")
    assert len(results) == len(commands), done.stderr
    for result in results:  # each ran, in the jail: else it proves nothing of the jail's side
        assert result["status"] == "ok", result
        assert result["metadata"]["jail"]["enforced"] is True, result
    return [r["output"].strip() for r in results]


@pytest.mark.parametrize(
    "move",
    [
        "cd src",
        "pushd src > /dev/null",
        "cd docs && cd ../src",
        "builtin cd -- src",
        'cd "$PWD/src"',
    ],
)
@pytest.mark.parametrize("kind", ["read-only", "masks"])
def test_a_jailed_cd_carries_to_the_next_call(tmp_path: Path, move: str, kind: str) -> None:
    *_, where = _run(tmp_path, [move, "pwd"], kind)
    assert where == str(tmp_path.resolve() / "ws" / "src")


def test_a_jailed_cd_out_of_the_workspace_does_not_stick(tmp_path: Path) -> None:
    *_, where = _run(tmp_path, ["cd ..", "pwd"])
    assert where == str(tmp_path.resolve() / "ws")


def test_the_read_only_jail_gives_its_private_tmpdir(tmp_path: Path) -> None:
    writes = 'echo kept > "$TMPDIR/n" && echo "$TMPDIR"'
    first, second = _run(tmp_path, [writes, 'cat "$TMPDIR/n"'])
    assert re.fullmatch(r".*/toolrun-jail-[^/]+/tmp", first), first
    assert second == "kept"  # the same private TMPDIR for every call of the run


def test_the_masks_jail_keeps_the_users_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "my-tmp"
    mine.mkdir()
    monkeypatch.setenv("TMPDIR", str(mine))
    (shown,) = _run(tmp_path / "scene", ['echo "$TMPDIR"'], kind="masks")
    assert shown == str(mine)
