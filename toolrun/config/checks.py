"""Checks of what a source says beyond its schema, each problem located in its file:
permission rules that do not parse or name no tool, hook matchers, commands and ``if``
rules, autoVerify commands and patterns, sandbox network entries; and, on the merged
config, a bypassPermissions mode that a source disables.
"""

from __future__ import annotations

from toolrun.config.merge import _without_port
from toolrun.config.models import Config, RuleExample
from toolrun.config.sources import _commands, _Loaded, _verifiers
from toolrun.errors import ConfigError, Problem


def _check_rules(loaded: _Loaded, problems: list[Problem], warnings: list[Problem]) -> None:
    from toolrun.config.keys import is_known_tool, tool_hint
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

    perms = loaded.spec.permissions
    # no early return without permissions: the hooks below are checked all the same
    for behavior in ("allow", "ask", "deny") if perms is not None else ():
        for i, text in enumerate(getattr(perms, behavior)):
            where: tuple[str | int, ...] = ("permissions", behavior, i)
            try:
                parsed = parse_rule(text, behavior=behavior)
            except RuleSyntaxError as exc:
                problems.append(
                    Problem(
                        loaded.doc.value_location(where), f"permissions.{behavior}[{i}]", str(exc)
                    )
                )
                continue
            if not parsed.tool_glob and not is_known_tool(parsed.tool):
                problems.append(
                    Problem(
                        loaded.doc.value_location(where),
                        f"permissions.{behavior}[{i}]",
                        f"unknown tool {parsed.tool!r} in rule {text!r}{tool_hint(parsed.tool)}",
                    )
                )
                continue
            if parsed.kind == "path" and parsed.content is not None:
                from toolrun.permissions.paths import pattern_problem

                problem = pattern_problem(parsed.content, behavior)
                if problem is not None:
                    problems.append(
                        Problem(
                            loaded.doc.value_location(where),
                            f"permissions.{behavior}[{i}]",
                            f"{text!r}: {problem}",
                        )
                    )
                    continue
            if parsed.warning:
                warnings.append(
                    Problem(
                        loaded.doc.value_location(where),
                        f"permissions.{behavior}[{i}]",
                        f"warning: {parsed.text!r}: {parsed.warning}",
                    )
                )


def _check_hooks(loaded: _Loaded, problems: list[Problem], warnings: list[Problem]) -> None:
    """Matchers that are not valid regexes, empty commands and bad ``if`` rules: errors
    (each would silently keep a hook from ever running); hook types toolrun cannot run
    (``prompt``, ``agent``): warnings."""
    if not loaded.spec.hooks:
        return
    from toolrun.hooks.matching import compile_matcher
    from toolrun.hooks.models import RUNNABLE_HOOK_TYPES
    from toolrun.permissions.grammar import RuleSyntaxError, parse_rule

    for event, groups in loaded.hooks.items():
        for g, group in enumerate(groups):
            matcher = compile_matcher(group.matcher)
            if matcher.kind == "invalid":
                problems.append(
                    Problem(
                        loaded.doc.value_location(("hooks", event, g, "matcher")),
                        f"hooks.{event}[{g}].matcher",
                        f"invalid matcher regex {group.matcher!r}: {matcher.error}; "
                        "the hooks under it would never run",
                    )
                )
            for h, hook in enumerate(_commands(group)):
                if hook.type not in RUNNABLE_HOOK_TYPES:
                    warnings.append(
                        Problem(
                            loaded.doc.value_location(("hooks", event, g, "hooks", h, "type")),
                            f"hooks.{event}[{g}].hooks[{h}].type",
                            f"warning: toolrun does not run {hook.type!r} hooks: this one gives "
                            "no decision (a denial under toolrun.hookFailure: closed)",
                        )
                    )
                elif not (hook.command or "").strip():
                    problems.append(
                        Problem(
                            loaded.doc.value_location(("hooks", event, g, "hooks", h, "command")),
                            f"hooks.{event}[{g}].hooks[{h}].command",
                            "empty or missing command: the hook would do nothing",
                        )
                    )
                if hook.if_ is None:
                    continue
                try:
                    parse_rule(hook.if_)
                except RuleSyntaxError as exc:
                    where = ("hooks", event, g, "hooks", h, "if")
                    problems.append(
                        Problem(
                            loaded.doc.value_location(where),
                            f"hooks.{event}[{g}].hooks[{h}].if",
                            str(exc),
                        )
                    )


def _check_verifiers(loaded: _Loaded, problems: list[Problem]) -> None:
    """``toolrun.autoVerify``: an empty command or a pattern pathspec cannot read would
    keep a verifier from ever running; each is a located error."""
    section = loaded.spec.toolrun
    specs = _verifiers(section)
    if not specs:
        return
    from toolrun.verify.files import pattern_error
    from toolrun.yamlfile import format_path

    for v, spec in enumerate(specs):
        where: tuple[str | int, ...] = ("toolrun", "autoVerify", v)
        if not spec.command.strip():
            problems.append(
                Problem(
                    loaded.doc.value_location((*where, "command")),
                    format_path((*where, "command")),
                    "empty command: the verifier would do nothing",
                )
            )
        for p, pattern in enumerate(spec.files):
            error = pattern_error(pattern)
            if error is not None:
                problems.append(
                    Problem(
                        loaded.doc.value_location((*where, "files", p)),
                        format_path((*where, "files", p)),
                        f"invalid pattern {pattern!r}: {error}",
                    )
                )


def _check_network(loaded: _Loaded, problems: list[Problem]) -> None:
    """``sandbox.network``: no over-broad ``allowedDomains`` entry (``*``, ``*.com``), as
    sandbox-runtime refuses them; ``allowPrivateHosts`` names exact hosts only."""
    sandbox = loaded.spec.sandbox
    net = sandbox.network if sandbox is not None else None
    if net is None:
        return
    from toolrun.permissions.domains import host_port, overbroad, url_host
    from toolrun.yamlfile import format_path

    found: list[tuple[str, int, str | None]] = [
        ("allowedDomains", i, overbroad(p)) for i, p in enumerate(net.allowedDomains or ())
    ]
    for i, entry in enumerate(net.allowPrivateHosts):
        parsed = host_port(entry)
        found.append(("allowPrivateHosts", i, parsed if isinstance(parsed, str) else None))
    for i, entry in enumerate(net.deniedDomains):
        # an entry no host can match would leave its domain reachable: say so
        host = _without_port(entry.strip())
        probe = host.removeprefix("*.").replace("*", "x")
        odd = any(c in host for c in "/@?#") or (":" in host and not host.startswith("["))
        if odd or url_host(f"http://{probe}/").name is None:
            why = (
                f"{entry!r} is not a domain, wildcard or IP literal (with an optional :port): "
                "it would deny nothing"
            )
            found.append(("deniedDomains", i, why))
    for key, i, message in found:
        if message is not None:
            where = ("sandbox", "network", key, i)
            problems.append(Problem(loaded.doc.value_location(where), format_path(where), message))


def _check_bypass(config: Config, loaded: list[_Loaded], examples: tuple[RuleExample, ...]) -> None:
    """``permissions.disableBypassPermissionsMode: disable`` in any source forbids the mode,
    whoever asks for it (``--mode``, a ``defaultMode``, a self-test's ``mode``): an error
    naming both places."""
    asker: object = config.mode_source or "the config"
    if config.default_mode != "bypassPermissions":
        example = next((e for e in examples if e.mode == "bypassPermissions"), None)
        if example is None:
            return
        asker = f"{example.location.file}:{example.location.line}"
    for item in loaded:
        perms = item.spec.permissions
        if perms is not None and perms.disableBypassPermissionsMode == "disable":
            from toolrun.yamlfile import format_path

            where = ("permissions", "disableBypassPermissionsMode")
            raise ConfigError(
                [
                    Problem(
                        item.doc.value_location(where),
                        format_path(where),
                        "bypassPermissions mode is disabled by this setting; it was asked for by "
                        f"{asker}",
                    )
                ]
            )
