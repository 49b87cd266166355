"""One Bash decision resolves each word's path once (the read-only check and the call's
subjects name the same words), and what that read is still re-checked by every memo that
keeps the decision or its part (issue 31)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.permissions.conftest import make_config, secret_link
from toolrun.permissions import PermissionEngine, wordpaths
from toolrun.permissions.paths import frozen_tree

READS = ["cat {}", "head -3 {}", "wc -l {}", "grep -n x {}"]


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("read", READS)
def test_a_word_is_resolved_once_per_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: str, frozen: bool
) -> None:
    (tmp_path / "src").mkdir()
    engine = PermissionEngine(make_config(tmp_path, deny=["Read(./.env)"]), memo=False)
    seen: Counter[str] = Counter()
    resolve = wordpaths._word_path

    def counted(word: wordpaths.Word, cwd: str | None, home: str) -> object:
        seen[word.raw] += 1
        return resolve(word, cwd, home)

    monkeypatch.setattr(wordpaths, "_word_path", counted)
    for i in range(3):  # (new parts: the read-only check and the subjects both run)
        (tmp_path / "src" / f"a{i}.py").write_text("x\n")
        seen.clear()
        with frozen_tree() if frozen else _nothing():
            decision = engine.decide("Bash", {"command": f"{read.format(f'src/a{i}.py')} && "
                                      "echo"}, cwd=tmp_path)
        assert decision.decision == "allow", decision.reason
        assert seen[f"src/a{i}.py"] == 1, seen
    assert wordpaths._decision.paths is None  # (remembered for one decision only)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.mark.parametrize("memo", [False, True])
@pytest.mark.parametrize("read", READS)
def test_a_path_resolved_once_is_read_again_by_the_next_decision(
    tmp_path: Path, read: str, memo: bool
) -> None:
    scene = secret_link(tmp_path)
    ws = scene.ws
    engine = PermissionEngine(scene.config, memo=memo)
    # the same line (the decision memo), and new lines sharing the part (the part memo)
    lines = [f"{read.format('notes')} && echo {i % 2}" for i in range(4)]
    for line in lines:
        assert engine.decide("Bash", {"command": line}, cwd=ws).decision == "allow"
    scene.retarget(to_secret=True)
    for line in lines:
        decision = engine.decide("Bash", {"command": line}, cwd=ws)
        assert decision.decision == "deny", decision.reason
        assert str(scene.secret) in decision.reason
