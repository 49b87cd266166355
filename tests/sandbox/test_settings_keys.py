"""Settings never loosen by being ignored (issue 26, point 5): Claude Code's
``filesystem.allowRead``, ``network.deniedDomains``, ``allowManagedDomainsOnly``,
``allowManagedReadPathsOnly`` and ``disableAllHooks``, each applied for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.conftest import SANDBOX_ON, bash, exec_plan, needs_bwrap, needs_curl, write
from toolrun.config import load_config
from toolrun.permissions import PermissionEngine
from toolrun.sandbox.policy import SandboxPolicy
from toolrun.sandbox.proxy import DomainPolicy, DomainProxy


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sources are shown relative to the current directory."""
    monkeypatch.chdir(tmp_path)


# -- network.deniedDomains -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "url"),
    [
        ("evil.example", "https://evil.example/x"),  # the reported spelling
        ("EVIL.example.", "https://evil.example/x"),  # case and a trailing dot
        ("*.evil.example", "https://a.b.evil.example/"),  # a wildcard, any depth
        ("evil.example:443", "http://evil.example:8080/"),  # a port: every port is denied
    ],
)
def test_a_denied_domain_denies_webfetch_even_when_an_allow_rule_matches(
    tmp_path: Path, entry: str, url: str
) -> None:
    write(
        tmp_path / "toolrun.yaml",
        "permissions: {allow: [WebFetch]}\n"
        f"sandbox:\n  network:\n    deniedDomains: ['{entry}']\n",
    )
    config = load_config(workspace=tmp_path, env={})
    decision = PermissionEngine(config).decide("WebFetch", {"url": url})
    assert decision.decision == "deny"
    assert decision.decided_by.source is not None
    assert str(decision.decided_by.source).endswith("toolrun.yaml:4")
    # another host is still allowed
    assert PermissionEngine(config).decide("WebFetch", {"url": "https://ok.example/"}).decision == (
        "allow"
    )


def _ask(path: str, request: str) -> bytes:
    import contextlib
    import socket

    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(path)
        client.sendall(request.encode())
        data = b""
        with contextlib.suppress(TimeoutError):
            while chunk := client.recv(65536):
                data += chunk
        return data


def _proxy_policy(tmp_path: Path, network: str) -> DomainPolicy:
    write(tmp_path / "toolrun.yaml", f"sandbox:\n  enabled: true\n  network: {network}\n")
    policy = SandboxPolicy.of(load_config(workspace=tmp_path, env={}))
    settings = policy.settings
    assert settings.allowed_domains is not None
    return DomainPolicy.of(
        settings.allowed_domains,
        policy.denied_domains,
        settings.allow_private_hosts,
        settings.denied_domains,
    )


def test_the_proxy_refuses_a_denied_domain_inside_an_allowed_one(
    tmp_path: Path, server: int
) -> None:
    """A real proxy, a real server on 127.0.0.1: allowed and opted in, it answers; listed in
    deniedDomains, the proxy refuses it before connecting."""
    opened = f"{{allowedDomains: [localhost], allowPrivateHosts: ['localhost:{server}']"
    request = f"GET http://localhost:{server}/ HTTP/1.1\r\nHost: localhost\r\n\r\n"
    proxy = DomainProxy(str(tmp_path / "a.sock"), _proxy_policy(tmp_path, opened + "}"))
    try:
        assert b"hello from the test server" in _ask(proxy.path, request)
    finally:
        proxy.close()
    denied = _proxy_policy(tmp_path, opened + ", deniedDomains: [LocalHost.]}")
    proxy = DomainProxy(str(tmp_path / "b.sock"), denied)
    try:
        answer = _ask(proxy.path, request)
    finally:
        proxy.close()
    assert answer.startswith(b"HTTP/1.1 403")
    assert b"localhost is denied by sandbox.network.deniedDomains 'LocalHost.' (toolrun.yaml:3)" in (
        answer
    )


@needs_bwrap
@needs_curl
def test_sandboxed_curl_is_refused_a_denied_domain(ws: Path, server: int) -> None:
    config = (
        SANDBOX_ON + "  network:\n    allowedDomains: [localhost]\n"
        f"    allowPrivateHosts: ['localhost:{server}']\n"
    )
    call = [bash(f"curl -sS http://localhost:{server}/")]
    results, _ = exec_plan(ws, config, call)
    assert "hello from the test server" in results[0]["output"]
    results, _ = exec_plan(ws, config + "    deniedDomains: ['localhost']\n", call)
    assert "hello from the test server" not in results[0]["output"]
    assert "connection blocked by the sandbox: localhost is denied" in results[0]["output"]


# -- allowManagedDomainsOnly / allowManagedReadPathsOnly --------------------------------------


def test_allow_managed_domains_only_keeps_the_managed_lists_only(tmp_path: Path) -> None:
    managed = write(
        tmp_path / "etc" / "managed.json",
        json.dumps({"sandbox": {"network": {
            "allowManagedDomainsOnly": True, "allowedDomains": ["corp.example"]}},
            "permissions": {"allow": ["WebFetch(domain:docs.corp.example)"]}}),
    )  # fmt: skip
    write(
        tmp_path / ".claude" / "settings.json",
        json.dumps({"sandbox": {"network": {"allowedDomains": ["evil.example"],
                                            "deniedDomains": ["bad.corp.example"]}},
                    "permissions": {"allow": ["WebFetch(domain:evil.example)", "WebFetch"]}}),
    )  # fmt: skip
    config = load_config(workspace=tmp_path, env={}, managed_settings=managed)
    assert config.sandbox.allowed_domains == ("corp.example",)
    assert [r.text for r in config.rules] == [
        "WebFetch(domain:docs.corp.example)",
        "WebFetch(domain:bad.corp.example)",  # the developer's deny list still counts
    ]
    engine = PermissionEngine(config)
    assert engine.decide("WebFetch", {"url": "https://evil.example/"}).decision == "ask"
    assert engine.decide("WebFetch", {"url": "https://docs.corp.example/"}).decision == "allow"
    assert any(
        w.startswith("allowManagedDomainsOnly (") and "2 WebFetch allow rules from" in w
        for w in config.warnings
    )
    # without the lock, the project's lists count
    plain = load_config(workspace=tmp_path, env={})
    assert plain.sandbox.allowed_domains == ("evil.example",)


def test_a_managed_only_lock_outside_managed_settings_is_not_used(tmp_path: Path) -> None:
    write(
        tmp_path / "toolrun.yaml",
        "sandbox:\n  network: {allowManagedDomainsOnly: true, allowedDomains: [a.example]}\n"
        "  filesystem: {allowManagedReadPathsOnly: true, allowRead: [x]}\n",
    )
    config = load_config(workspace=tmp_path, env={})
    assert config.sandbox.allowed_domains == ("a.example",)
    assert config.sandbox.allow_read == (str(tmp_path / "x"),)
    assert sum("only enforced in a managed settings file" in w for w in config.warnings) == 2


def test_allow_managed_read_paths_only_drops_the_other_sources_allow_read(tmp_path: Path) -> None:
    managed = write(
        tmp_path / "etc" / "managed.json",
        json.dumps({"sandbox": {"filesystem": {
            "allowManagedReadPathsOnly": True, "denyRead": ["/srv"], "allowRead": ["/srv/pub"]}}}),
    )  # fmt: skip
    write(
        tmp_path / ".claude" / "settings.json",
        json.dumps({"sandbox": {"filesystem": {"allowRead": ["/srv/secret", "~/x"]}}}),
    )
    config = load_config(workspace=tmp_path, env={}, managed_settings=managed)
    assert config.sandbox.allow_read == ("/srv/pub",)
    assert any("allowManagedReadPathsOnly" in w and "2 sandbox.filesystem.allowRead entries"
               in w for w in config.warnings)  # fmt: skip


# -- filesystem.allowRead ---------------------------------------------------------------------


def _outputs(results: list[dict[str, Any]]) -> str:
    return "\n".join(str(r["output"]) for r in results)


@needs_bwrap
def test_allow_read_reopens_a_path_inside_a_denied_region_and_the_more_specific_wins(
    tmp_path: Path, ws: Path
) -> None:
    out = tmp_path / "out"
    write(out / "pub" / "p.txt", "PUBLIC\n")
    write(out / "priv" / "s.txt", "SECRET\n")
    write(out / "pub" / "deep" / "d.txt", "DEEP\n")
    write(out / "pub" / "key.pem", "KEY\n")
    config = SANDBOX_ON + (
        f"  filesystem:\n    denyRead: ['{out}', '{out}/pub/deep', '{out}/pub/key.pem']\n"
        f"    allowRead: ['{out}/pub']\n"
    )
    script = (
        f"cat {out}/pub/p.txt; cat {out}/priv/s.txt; cat {out}/pub/deep/d.txt; "
        f"cat {out}/pub/key.pem; ls {out}"
    )
    results, _ = exec_plan(ws, config, [bash(script)])
    text = _outputs(results)
    assert "PUBLIC" in text  # re-opened
    assert "SECRET" not in text  # the rest of the region stays hidden
    assert text.splitlines()[-1] == "pub"  # and lists only what was re-opened
    assert "DEEP" not in text and "KEY" not in text  # a deny inside the allowed path wins
    # without allowRead the whole region is unreadable
    results, _ = exec_plan(ws, config.replace(f"    allowRead: ['{out}/pub']\n", ""),
                           [bash(script)])  # fmt: skip
    assert "PUBLIC" not in _outputs(results)


@needs_bwrap
def test_deny_the_home_folder_allow_the_project_keeps_the_workspace_writable_and_guarded(
    tmp_path: Path,
) -> None:
    """Claude Code's own example: ``denyRead: ["~/"]`` with ``allowRead: ["."]``."""
    home = tmp_path / "home"
    ws = home / "proj"
    write(home / ".ssh" / "id", "PRIVATE KEY\n")
    write(ws / "r.txt", "READABLE\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    write(
        ws / "toolrun.yaml",
        SANDBOX_ON + "  filesystem:\n    denyRead: ['~/']\n    allowRead: ['.']\n",
    )
    write(tmp_path / "plan.json", json.dumps({"calls": [bash(
        "cat r.txt; cat ~/.ssh/id; echo written > w.txt && cat w.txt; "
        "python3 -c \"open('.git/hooks/x', 'w').write('1')\"; ls ~")]}))  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", str(tmp_path / "plan.json"), "--format",
         "jsonl", "--no-journal"],
        cwd=ws, capture_output=True, text=True, check=False, timeout=120,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
    )  # fmt: skip
    [result] = [json.loads(line) for line in done.stdout.splitlines()]
    assert result["status"] == "ok", result
    output = result["output"]
    assert "READABLE" in output and "written" in output
    assert "PRIVATE KEY" not in output
    assert "\nproj\n" in output  # ~ lists the project only
    assert "write to a protected path blocked by the sandbox" in output
    assert not (ws / ".git" / "hooks" / "x").exists()  # the guards under it hold
    assert (ws / "w.txt").read_text() == "written\n"


def test_allow_read_never_reopens_a_read_deny_rule_or_a_credential(tmp_path: Path) -> None:
    write(
        tmp_path / "toolrun.yaml",
        "permissions: {deny: ['Read(./secrets/**)']}\n"
        "sandbox:\n  enabled: true\n"
        "  credentials: {files: [{path: ./creds}]}\n"
        "  filesystem: {denyRead: [./region], allowRead: [./secrets/pub, ./creds/x, "
        "./region/pub]}\n",
    )
    config = load_config(workspace=tmp_path, env={})
    assert config.sandbox.allow_read == (str(tmp_path / "secrets/pub"), str(tmp_path / "region/pub"))
    assert SandboxPolicy.of(config).settings.allow_read == (str(tmp_path / "region/pub"),)


# -- disableAllHooks ----------------------------------------------------------------------------


def _hooked(tmp_path: Path, marker: str) -> dict[str, Any]:
    """A PreToolUse hook (a real script) that leaves ``marker`` behind when it runs."""
    script = write(tmp_path / f"{marker}.py",
                   f"import pathlib; pathlib.Path({str(tmp_path / marker)!r}).write_text('ran')\n")
    return {"PreToolUse": [{"matcher": "Bash",
                            "hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}]}  # fmt: skip


def _exec(ws: Path, managed: Path | None = None) -> subprocess.CompletedProcess[str]:
    write(ws / "plan.json", json.dumps({"calls": [bash("echo hi")]}))
    env = dict(os.environ)
    if managed is not None:
        env["TOOLRUN_MANAGED_SETTINGS"] = str(managed)
    return subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json", "--format", "jsonl",
         "--no-journal"],
        cwd=ws, capture_output=True, text=True, check=False, timeout=120, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("where", ["toolrun.yaml", ".claude/settings.json", ".claude/settings.local.json"])
def test_disable_all_hooks_runs_no_hook(tmp_path: Path, where: str) -> None:
    ws = tmp_path / "ws"
    write(ws / ".claude" / "settings.json", json.dumps(
        {"permissions": {"allow": ["Bash(echo *)"]}, "hooks": _hooked(tmp_path, "project")}))
    write(ws / "toolrun.yaml", "hooks: " + json.dumps(_hooked(tmp_path, "toolrun")) + "\n")
    done = _exec(ws)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "project").exists() and (tmp_path / "toolrun").exists()
    for marker in ("project", "toolrun"):
        (tmp_path / marker).unlink()
    target = ws / where
    data = json.loads(target.read_text()) if target.suffix == ".json" and target.exists() else None
    if data is not None:
        target.write_text(json.dumps({**data, "disableAllHooks": True}))
    elif target.suffix == ".json":
        write(target, '{"disableAllHooks": true}')
    else:
        target.write_text(target.read_text() + "disableAllHooks: true\n")
    done = _exec(ws)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == "hi\n"
    assert not (tmp_path / "project").exists() and not (tmp_path / "toolrun").exists()
    assert "disableAllHooks (" in done.stderr and "not run" in done.stderr


def test_disable_all_hooks_keeps_managed_hooks_unless_managed_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "toolrun.yaml", "permissions: {allow: ['Bash(echo *)']}\ndisableAllHooks: true\n"
          "hooks: " + json.dumps(_hooked(tmp_path, "toolrun")) + "\n")  # fmt: skip
    managed = write(tmp_path / "managed.json", json.dumps({"hooks": _hooked(tmp_path, "managed")}))
    assert _exec(ws, managed).returncode == 0
    assert (tmp_path / "managed").exists() and not (tmp_path / "toolrun").exists()
    (tmp_path / "managed").unlink()
    managed.write_text(json.dumps({"hooks": _hooked(tmp_path, "managed"), "disableAllHooks": True}))
    assert _exec(ws, managed).returncode == 0
    assert not (tmp_path / "managed").exists() and not (tmp_path / "toolrun").exists()


def test_a_denied_star_denies_every_host_at_the_proxy_and_to_webfetch(tmp_path: Path) -> None:
    policy = _proxy_policy(tmp_path, "{allowedDomains: [example.com, '*.example.com'], "
                           "deniedDomains: ['*']}")  # fmt: skip
    for host in ("example.com", "a.b.example.com", "localhost"):
        assert policy.refusal(host) == (
            f"{host} is denied by sandbox.network.deniedDomains '*' (toolrun.yaml:3)"
        )
    engine = PermissionEngine(load_config(workspace=tmp_path, env={}))
    assert engine.decide("WebFetch", {"url": "https://example.com/"}).decision == "deny"


@pytest.mark.parametrize("entry", ["evil.com:http", "https://evil.com/", "evil com", "a@b.com"])
def test_a_denied_domain_that_could_match_nothing_is_a_located_error(
    tmp_path: Path, entry: str
) -> None:
    from toolrun.errors import ConfigError

    write(tmp_path / "toolrun.yaml", f"sandbox:\n  network:\n    deniedDomains: ['{entry}']\n")
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, env={})
    [problem] = [str(p) for p in info.value.problems]
    assert problem.endswith(
        f"toolrun.yaml:3:21: sandbox.network.deniedDomains[0]: {entry!r} is not a domain, "
        "wildcard or IP literal (with an optional :port): it would deny nothing"
    )
