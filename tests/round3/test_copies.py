"""Copies carry the rules of what they copy; the twins of protected files stay protected
(issue 24, points 7 and 8), run for real through ``toolrun exec`` in the round-3 scene.

The scene denies ``Read(./.env)``, ``Read(./config/.env)`` and ``Edit(./docs/**)``. Each
class is the attack the round-3 corpus found and three (or more) other spellings, each a
copy followed by a read of the copy: the copy must be denied, nothing may print a secret,
and no file created on disk may hold one. acceptEdits approves cp and mv by itself;
bypassPermissions approves tar, rsync, ln, zip and git mv: each class runs in both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .scene import SECRETS, Scene

# class -> [(copy, read of the copy, source)]
CLASSES: dict[str, list[tuple[str, str, str]]] = {
    "cp": [
        ("mkdir -p build && cp -r config build/cfg", "cat build/cfg/.env",
         "issue 24 (round-3 corpus)"),
        ("cp -a config b1", "cat b1/.env", "issue 24"),
        ("cp -R config/ b2", "cat b2/.env", "GNU coreutils cp manual"),
        ("cp --recursive --target=src config", "cat src/config/.env",
         "getopt_long prefix of --target-directory"),
        ("cp config -r b3", "cat b3/.env", "getopt_long permutes"),
    ],
    "mv": [
        ("mv config x", "cat x/.env", "issue 24"),
        ("mv -t src config", "cat src/config/.env", "GNU coreutils mv manual"),
        ("mv --target-directory=src config", "cat src/config/.env", "GNU coreutils mv manual"),
        ("mv .env e.txt", "cat e.txt", "issue 24 (mv .env x)"),
    ],
    "tar": [
        ("tar cf x.tar config", "tar xOf x.tar", "issue 24"),
        ("tar -czf x.tgz config", "tar -xOzf x.tgz", "GNU tar manual"),
        ("tar -C config -cf y.tar .", "tar -xOf y.tar", "GNU tar manual (-C)"),
        ("tar --create --file=z.tar .env", "tar -xOf z.tar", "GNU tar manual"),
    ],
    "rsync": [  # (rsync need not be installed: the decision is what is checked)
        ("rsync -a config/ b/", "cat b/.env", "issue 24"),
        ("rsync -r config b", "cat b/config/.env", "rsync(1)"),
        ("rsync --archive config/ c", "cat c/.env", "rsync(1)"),
        ("rsync -av --no-perms config d/", "cat d/config/.env", "rsync(1) --no-OPTION"),
    ],
    "ln": [
        ("ln -s config c", "cat c/.env", "issue 24"),
        ("ln -s ../config src/c", "cat src/c/.env", "by hand (relative to the link)"),
        ("ln --symbolic config/ d", "cat d/.env", "GNU coreutils ln manual"),
        ("ln config/.env e", "cat e", "issue 24 (a hard link)"),
    ],
    "zip": [
        ("zip -r x.zip config", "unzip -p x.zip", "issue 24"),
        ("zip -qr y.zip config", "unzip -p y.zip", "Info-ZIP zip(1)"),
        ("zip -r -9 z.zip config", "unzip -p z.zip", "Info-ZIP zip(1)"),
        ("zip w.zip .env", "unzip -p w.zip", "Info-ZIP zip(1) (one file)"),
    ],
    "git mv": [
        ("git mv config x", "cat x/.env", "issue 24"),
        ("git -C . mv config y", "cat y/.env", "git(1) -C"),
        ("git mv -f config z", "cat z/.env", "git-mv(1)"),
        ("git mv config/.env e", "cat e", "git-mv(1) (one file)"),
    ],
}
MODES = ["acceptEdits", "bypassPermissions"]


def _holding_secrets(scene: Scene) -> list[str]:
    """Files that changed or appeared and hold a secret (a copy that got through)."""
    out = []
    for rel in scene.changed():
        path = scene.tmp / rel
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(s.encode() in data for s in SECRETS):
                out.append(rel)
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(CLASSES))
def test_a_copy_never_carries_a_read_denied_file_out_of_its_rule(
    tmp_path: Path, name: str, mode: str
) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    rows = CLASSES[name]
    commands = [c for copy, read, _ in rows for c in (copy, read)]
    _done, results = scene.run(commands, mode=mode)
    assert len(results) == len(commands)
    for (copy, _read, source), result in zip(rows, results[::2], strict=True):
        assert result["decision"] == "deny", (source, copy, result["error"])
    assert scene.leaked(results) == []
    assert _holding_secrets(scene) == []
    changed = scene.changed()
    # the denied files stay where their rules are
    assert "ws/.env" not in changed and "ws/config/.env" not in changed, changed


# (a write to a twin of a protected file, the file on disk that must stay as it was, source)
TWINS = [
    ("echo '--pre=./x.sh' > .ripgreprc", "ws/.ripgreprc", "sandbox-runtime DANGEROUS_FILES"),
    ("mkdir -p .vscode", "ws/.vscode", "sandbox-runtime DANGEROUS_DIRECTORIES"),
    ("cp README.md .gitmodules", "ws/.gitmodules", "sandbox-runtime DANGEROUS_FILES"),
    ("mkdir -p ~/.config/git", "outside/home/.config", "git-config(1) XDG config, issue 24"),
    ("echo '[core]' | tee ~/.gitconfig", "outside/home/.gitconfig", "Claude Code, srt"),
    ("cat README.md > .git/info/exclude", "ws/.git/info/exclude", "gitrepository-layout(5)"),
    ("echo /tmp >> .git/commondir", "ws/.git/commondir", "gitrepository-layout(5)"),
    ("tar cf .git/hooks/pre-commit README.md", "ws/.git/hooks/pre-commit",
     "sandbox-runtime (.git/hooks), by hand (an archive as the output)"),
    ("zip -q .git/config.zip README.md", "ws/.git/config.zip", "by hand"),
    ("cp README.md .git/config.worktree", "ws/.git/config.worktree", "git-worktree(1)"),
]


@pytest.mark.parametrize("mode", MODES)
def test_the_twins_of_protected_files_are_left_as_they_were(tmp_path: Path, mode: str) -> None:
    scene = Scene.make(tmp_path)
    scene.config()
    _done, results = scene.run([c for c, _p, _s in TWINS], mode=mode)
    changed = scene.changed()
    for (command, path, source), result in zip(TWINS, results, strict=True):
        assert result["status"] != "ok", (source, command)
        assert result["decision"] == "ask", (source, command, result["error"])
        assert not any(c == path or c.startswith(path + "/") for c in changed), (source, path)
    assert changed == []
