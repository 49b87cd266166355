"""The workspace jail and the masks-only jail hold what the command reading missed (#25, 2, 3, 7).

``TOOLRUN_TEST_JUDGE_ALL=workspace`` (test-only, like ``read-only``) makes the executor run
every allowed Bash call in the workspace jail; bypassPermissions routes its allows to the
masks-only jail on its own (no hook: the engine's decision carries ``jail == "masks"``).
The round-3 escapes run for real through ``toolrun exec``, spelled so that the engine lets
them through (``eval`` of base64 under bypassPermissions with no deny rule: nothing reads
the text), and only the kernel stops them: each row asserts that the call ran in its jail,
then the disk, the host's next ``git status`` and the process table. What the engine
refuses first whatever the spelling (a read of a Read-denied file, a write to an
Edit-denied one, both need deny rules, and then bypass refuses what it cannot read) runs on
the jails' side processes directly, with the jails made by the executor's own keeper from
the real engine.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.round3.scene import DENY_SECRETS, Scene
from tests.round3.test_jail import SAMPLE, _seen, _sleeping
from tests.sandbox.conftest import wait_until
from toolrun.sandbox.availability import probe

pytestmark = pytest.mark.skipif(not probe().ok, reason=f"no jail here: {probe().reason}")

NO_RULES = "permissions: {}\n"
R3 = "round-3 escape (tests/round3)"
ISSUE = "issue 25"
SRT = "sandbox-runtime tests"
HAND = "by hand"


def hidden(command: str) -> str:
    """``command`` run through ``eval`` of its base64: no reading of the text can see it."""
    encoded = base64.b64encode(command.encode()).decode()
    return f'eval "$(echo {encoded} | base64 -d)"'


def py(code: str) -> str:
    return "python3 -c " + shlex.quote("import os, shutil; " + code)


class WorkspaceScene(Scene):
    """The round-3 scene with every allowed Bash call run in the workspace jail."""

    def env(self, **extra: str) -> dict[str, str]:
        return super().env(TOOLRUN_TEST_JUDGE_ALL="workspace", **extra)


@pytest.fixture
def ws_scene(tmp_path: Path) -> WorkspaceScene:
    made = WorkspaceScene.make(tmp_path)
    made.config(NO_RULES)
    return made


@pytest.fixture
def bypass_scene(tmp_path: Path) -> Scene:
    made = Scene.make(tmp_path)
    made.config(NO_RULES)
    return made


def run_in(scene: Scene, commands: list[str], kind: str) -> list[dict[str, Any]]:
    """Each command hidden from the reading, run under bypassPermissions; each must have
    run in a jail of ``kind`` (otherwise the row proves nothing about it)."""
    done, results = scene.run([hidden(c) for c in commands], mode="bypassPermissions")
    assert len(results) == len(commands), done.stderr
    for command, result in zip(commands, results, strict=True):
        assert result["status"] in ("ok", "error"), (command, result)
        jail = result["metadata"]["jail"]
        assert jail["enforced"] is True and jail["kind"] == kind, (command, result)
    return results


KINDS = [("workspace", "ws_scene"), ("masks", "bypass_scene")]


def _scene(request: pytest.FixtureRequest, fixture: str) -> Scene:
    scene = request.getfixturevalue(fixture)
    assert isinstance(scene, Scene)
    return scene


# --------------------------------------------------------------------- writes outside

#: class -> spellings (the reported one first). Outside the workspace: only the workspace
#: jail keeps them out (bypass lets the filesystem be written, as configured).
OUTSIDE: dict[str, list[tuple[str, str]]] = {
    "through src/link/..": [
        ("echo x > src/link/../pwned", R3),
        ("cp README.md src/link/../copied", HAND),
        ("touch src/link/../t", HAND),
        ("tee src/link/secret.txt < README.md", SRT),
    ],
    "curl -o ../x": [
        ("curl -sS -o ../x file:///etc/hostname", R3),
        ("curl -sSo../z file:///etc/hostname", HAND),
        ("curl -sS file:///etc/hostname > ../w", HAND),
        (py("open('../p', 'w').write('x')"), HAND),
    ],
    "sort -o ~/.bashrc": [
        ("sort -o ~/.bashrc README.md", R3),
        ("sort README.md -o ~/.profile", HAND),
        ("sort -uo$HOME/.gitconfig README.md", HAND),
        ("sort -o ../outside/home/.zshrc README.md", HAND),
    ],
    "rm -rf outside": [
        ("rm -rf ../outside", R3),
        ("rm -rf src/link/", HAND),
        ("find ../outside -delete", HAND),
        (py("shutil.rmtree('../outside')"), HAND),
    ],
}


@pytest.mark.parametrize("group", list(OUTSIDE))
def test_a_write_outside_the_workspace_jail_changes_nothing(
    ws_scene: WorkspaceScene, group: str
) -> None:
    commands = [c for c, _ in OUTSIDE[group]]
    results = run_in(ws_scene, commands, "workspace")
    assert ws_scene.changed() == [], (group, [r["output"] for r in results])


def test_a_blocked_write_is_named_by_the_workspace_jail(ws_scene: WorkspaceScene) -> None:
    [result] = run_in(ws_scene, ["echo x > src/link/../pwned"], "workspace")
    note = f"workspace jail: write to {ws_scene.tmp}/pwned blocked"
    assert note in result["output"] and result["metadata"]["jail"]["blocked"] == [note]


# --------------------------------------------------------------------- the configuration surface

#: Files a later program reads and obeys outside any sandbox, each written four ways.
SURFACE = [
    (".vscode/settings.json", SRT), (".gitmodules", SRT), (".ripgreprc", SRT),
    (".idea/workspace.xml", SRT), (".git/hooks/pre-commit", SRT), (".git/config", ISSUE),
    (".git/commondir", R3), (".git/info/attributes", ISSUE), (".claude/settings.json", HAND),
    ("toolrun.yml", HAND),
]
SPELLINGS = [
    "mkdir -p $(dirname {t}); echo '[core] fsmonitor = touch ../pwned' >> {t}",
    "mkdir -p $(dirname {t}); cp README.md {t}",
    "mkdir -p $(dirname {t}); tee -a {t} < README.md",
    py("os.makedirs(os.path.dirname('{t}') or '.', exist_ok=True); open('{t}', 'a').write('x')"),
]


@pytest.mark.parametrize(("kind", "fixture"), KINDS)
@pytest.mark.parametrize(("target", "source"), SURFACE, ids=[t for t, _ in SURFACE])
def test_the_configuration_surface_cannot_be_written_or_created(
    request: pytest.FixtureRequest, kind: str, fixture: str, target: str, source: str
) -> None:
    scene = _scene(request, fixture)
    results = run_in(scene, [s.format(t=target) for s in SPELLINGS], kind)
    assert scene.changed() == [], (source, [r["output"] for r in results])


GIT_ESCAPES = [
    # a planted config the next git status outside would load, and whose fsmonitor it runs
    (("mkdir -p planted && printf '[core]\\n\\tfsmonitor = touch ../pwned\\n' > planted/config"
     " && echo $PWD/planted > .git/commondir"), R3),
    ("git config core.fsmonitor 'touch ../pwned'", "Claude Code advisory"),
    (("printf '#!/bin/sh\\ntouch ../pwned\\n' > .git/hooks/post-checkout"
     " && chmod +x .git/hooks/post-checkout"), SRT),
    ("printf '[core]\\n\\tfsmonitor = touch ../pwned\\n' >> .git/config", HAND),
]


@pytest.mark.parametrize(("kind", "fixture"), KINDS)
def test_the_git_surface_then_git_status_outside_runs_nothing(
    request: pytest.FixtureRequest, kind: str, fixture: str
) -> None:
    scene = _scene(request, fixture)
    run_in(scene, [c for c, _ in GIT_ESCAPES], kind)
    # the user's own git, later, outside any jail
    for args in (["status"], ["checkout", "-q", "-b", "later"]):
        subprocess.run(["git", *args], cwd=scene.ws, env=scene.env(), capture_output=True,
                       check=False)
    assert not (scene.tmp / "pwned").exists()
    assert not (scene.ws / ".git" / "commondir").exists()
    assert "fsmonitor" not in (scene.ws / ".git" / "config").read_text()


# --------------------------------------------------------------------- what works inside


WORKSPACE_WRITES = [
    ("echo x > out.txt", "out.txt", ISSUE),
    ("mkdir -p build && touch build/a", "build/a", HAND),
    ("cp README.md copy.md", "copy.md", HAND),
    ("mv src/main.py src/app.py", "src/app.py", HAND),
]


def test_acceptedits_writes_in_the_workspace_really_write(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config(DENY_SECRETS)
    done, results = scene.run([c for c, _, _ in WORKSPACE_WRITES], mode="acceptEdits")
    assert len(results) == len(WORKSPACE_WRITES), done.stderr
    for (command, made, _), result in zip(WORKSPACE_WRITES, results, strict=True):
        assert result["status"] == "ok", (command, result)
        # judged by acceptEdits, not by a hook: the engine's own decision put it there
        assert result["metadata"]["jail"] == {"kind": "workspace", "enforced": True,
                                              "blocked": []}, command
        assert (scene.ws / made).exists(), command
    assert (scene.ws / "out.txt").read_text() == "x\n"


def test_bypass_writes_where_it_likes_except_the_rules(bypass_scene: Scene) -> None:
    run_in(bypass_scene, ["echo x > ../outside/new.txt", "echo y > out.txt"], "masks")
    assert bypass_scene.changed() == ["outside/new.txt", "ws/out.txt"]


# --------------------------------------------------------------------- processes

BACKGROUND = [
    ("sleep 323 &", R3),
    ("setsid sleep 324 &", HAND),
    ("nohup sleep 325 > /dev/null 2>&1 &", HAND),
    ("(sleep 326 &) ; echo left", HAND),
]


@pytest.mark.parametrize(("kind", "fixture"), KINDS)
def test_no_process_outlives_its_call_in_a_writable_jail(
    request: pytest.FixtureRequest, kind: str, fixture: str
) -> None:
    scene = _scene(request, fixture)
    commands = [c.replace("sleep 3", f"sleep {4 if kind == 'masks' else 3}") for c, _ in
                BACKGROUND]
    run_in(scene, commands, kind)
    for command in commands:
        seconds = command.split("sleep ")[1].split()[0]
        assert _sleeping(seconds) == [], command


def test_one_jail_per_kind_in_one_run(tmp_path: Path) -> None:
    scene = Scene.make(tmp_path)
    scene.config("permissions:\n  defaultMode: acceptEdits\n")
    done, results = scene.run(["echo $$ > pid.txt", "echo $$", "echo $$ > pid2.txt", "echo $$"])
    kinds = [r["metadata"]["jail"]["kind"] for r in results]
    assert kinds == ["workspace", "read-only", "workspace", "read-only"], done.stderr
    # each jail's commands are children of its side process (PID 1 there): the shells of
    # one kind count up in one PID namespace, the other kind's in another
    ws_pids = [int((scene.ws / n).read_text()) for n in ("pid.txt", "pid2.txt")]
    ro_pids = [int(r["output"]) for r in results[1::2]]
    assert ws_pids[1] > ws_pids[0] and ro_pids[1] > ro_pids[0]
    assert ws_pids[0] < 10 and ro_pids[0] < 10


# --------------------------------------------------------------------- same inside as outside

#: Held while the jail runs (a missing one cannot be created): ls lists them, and the link
#: count of ``.`` counts them (and widens ls's columns); nothing else differs, by design.
#: (``.toolrun`` is toolrun's journal, written as the runs go: its time is theirs.)
HELD = (".vscode", ".idea", ".gitmodules", ".ripgreprc", ".claude", ".mcp.json", "toolrun.yml",
        ".toolrun")


def _seen_ws(output: str, scene: Scene) -> list[str]:
    return [" ".join(line.split()) for line in _seen(output, scene)
            if not any(name in line for name in HELD) and not line.endswith(" .")]


def test_everyday_commands_print_the_same_in_the_workspace_jail(tmp_path: Path) -> None:
    inside = WorkspaceScene.make(tmp_path / "a")
    outside = Scene.make(tmp_path / "b")
    for scene in (inside, outside):
        scene.config()
    _, jailed = inside.run(SAMPLE, mode="bypassPermissions")
    _, free = outside.run(SAMPLE, mode="bypassPermissions", extra=("--enforce", "off"))
    assert len(jailed) == len(free) == len(SAMPLE)
    compared = 0
    for command, a, b in zip(SAMPLE, jailed, free, strict=True):
        if b["status"] not in ("ok", "error"):
            continue  # the engine did not let it run outside either
        assert a["metadata"]["jail"] == {"kind": "workspace", "enforced": True,
                                         "blocked": []}, command
        same = _seen_ws(a["output"], inside) == _seen_ws(b["output"], outside)
        assert same, (command, a["output"], b["output"])
        assert a["status"] == b["status"], command
        compared += 1
    assert compared >= 30
    assert inside.changed() == []


# --------------------------------------------------------------------- kernel level: the rules


def _on(jail: Any, command: str, cwd: Path) -> str:
    from toolrun.reaper import jail as jails
    from toolrun.reaper.run import run_command

    out: list[bytes] = []

    async def go() -> None:
        token = jails.current.set(jail)
        try:
            await run_command(["bash", "-c", command], cwd=cwd, env=dict(os.environ),
                              time_limit=10, stdout=out.append)
        finally:
            jails.current.reset(token)

    asyncio.run(go())
    return b"".join(out).decode(errors="replace")


@pytest.fixture
def keeper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Scene, Any]]:
    """The round-3 scene with its deny rules, and the executor's own jail keeper for it."""
    from tests.permissions.conftest import make_config
    from toolrun.execution.jailing import JailKeeper, edit_denies, literal_denies, read_denied
    from toolrun.permissions import PermissionEngine

    scene = Scene.make(tmp_path)
    monkeypatch.setenv("HOME", str(scene.home))
    engine = PermissionEngine(make_config(
        scene.ws, deny=["Read(./.env)", "Read(./config/.env)", "Edit(./docs/**)"]
    ))
    made = JailKeeper([scene.ws], read_denied(engine), also=literal_denies(engine),
                      read_only=edit_denies(engine), warn=lambda _: None)
    try:
        yield scene, made
    finally:
        made.close()


READS = [
    ("cat .env", R3),
    ("head -c 100 config/.env", R3),
    ("cat src/link/../ws/.env", HAND),
    ("python3 -c 'print(open(\".e\" + \"nv\").read())'", "Claude Code advisory"),
]
EDITS = [  # Edit(./docs/**) and protected paths: read-only in every writable jail
    ("echo x > docs/a.md", "Edit deny"),
    ("rm -f docs/a.md; echo x > docs/b.md", "Edit deny"),
    ("echo x >> ~/.bashrc", "protected"),
    ("echo '{}' > .claude/settings.json", "protected"),
]


def _baseline(scene: Scene) -> None:
    """The tree as it is now, the jail's placeholders made, is what must not change."""
    scene._before = scene.snapshot()


@pytest.mark.parametrize("kind", ["workspace", "masks"])
def test_read_denied_files_are_masked_and_edit_denied_ones_kept(
    keeper: tuple[Scene, Any], kind: str
) -> None:
    scene, made = keeper
    jail = made.jail(None, kind)
    assert jail is not None and jail.kind == kind
    _baseline(scene)
    for command, source in READS:
        assert "sentinel" not in _on(jail, command, scene.ws), (command, source)
    for command, source in EDITS:
        _on(jail, command, scene.ws)
        assert scene.changed() == [], (command, source)


def test_a_writable_jail_is_made_again_when_a_call_changed_its_masks(
    keeper: tuple[Scene, Any],
) -> None:
    scene, made = keeper
    first = made.jail(None, "workspace")
    assert first is not None and first.builds == 1
    (scene.ws / ".husky").mkdir()  # a call outside the jails made it (git hooks, by husky)
    made.ran_outside()
    again = made.jail(None, "workspace")
    assert again is first and first.builds == 2
    assert str(scene.ws / ".husky") in first.plan.mounts.read_only
    _on(first, "echo 'touch ../pwned' > .husky/pre-commit", scene.ws)
    assert not (scene.ws / ".husky" / "pre-commit").exists()
    made.ran_outside()  # nothing changed since: the same jail serves on
    assert made.jail(None, "workspace") is first and first.builds == 2


def test_a_jail_made_in_the_background_outlives_the_thread_that_made_it(
    keeper: tuple[Scene, Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bubblewrap's --die-with-parent (PR_SET_PDEATHSIG) follows the *thread* that started
    it: a jail prestarted from a thread of its own died when that thread ended after
    bubblewrap was up (seen under load), and its calls ran unjailed. The thread that
    starts a jail must outlive it."""
    import threading

    from toolrun.reaper import link

    spawners: list[threading.Thread] = []
    spawn = os.posix_spawn

    def recording(*args: Any, **kwargs: Any) -> int:
        spawners.append(threading.current_thread())
        return spawn(*args, **kwargs)

    monkeypatch.setattr(link.os, "posix_spawn", recording)
    scene, made = keeper
    for number, kind in enumerate(("workspace", "masks", "read-only"), 1):
        made.prestart(None, kind)
        assert wait_until(lambda n=number: len(spawners) == n)  # started in the background
        jail = made.jail(None, kind)
        assert jail is not None
        first = jail.side.pid
        assert first and spawners[-1] is not threading.current_thread()
        spawners[-1].join(timeout=1.0)  # (a thread of its own has ended by then)
        assert spawners[-1].is_alive(), kind
        assert _on(jail, "echo $$", scene.ws).strip() and jail.side.pid == first, kind
