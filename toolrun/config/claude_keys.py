"""Every key of Claude Code's settings reference, and what toolrun does with it.

Source: Claude Code docs, "All settings" (https://code.claude.com/docs/en/settings-reference),
its "Settings index", read on 2026-12-01 from the mirror ``thevibeworks/claude-code-docs``
(``content/en/docs/claude-code/settings-reference.md``, commit 10e0643), Claude Code
about v2.1.26x. Keys the older pages named and the index no longer does are kept as
``legacy`` entries, so that an older settings file is not read as full of typos.

Each key is one of:

- ``enforced``: toolrun reads it and acts on it (the schema has the field);
- ``ignored``: toolrun does not act on it, and that can only leave toolrun as strict as
  Claude Code or stricter (a display setting; a key that loosens, such as
  ``sandbox.filesystem.disabled``; a feature toolrun never runs, such as skills);
- ``restricting``: Claude Code would refuse or block something because of it and toolrun
  does not: a check under such a file is looser than Claude Code. A loud warning, and an
  error under ``--strict``.

With every documented key here, a key that is in no list is a typo (see
:mod:`toolrun.config.keys`). Keys are dotted paths; only the sections toolrun reads
(``permissions``, ``sandbox`` and its blocks) are walked key by key.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final, Literal

Status = Literal["enforced", "ignored", "restricting"]

_ENFORCED = (
    "allowManagedHooksOnly", "allowManagedPermissionRulesOnly", "disableAllHooks", "hooks",
    "allowedHttpHookUrls", "httpHookAllowedEnvVars",
    "permissions", "sandbox",
    "permissions.additionalDirectories", "permissions.allow", "permissions.ask",
    "permissions.defaultMode", "permissions.deny", "permissions.disableBypassPermissionsMode",
    "sandbox.allowUnsandboxedCommands", "sandbox.autoAllowBashIfSandboxed", "sandbox.bwrapPath",
    "sandbox.credentials", "sandbox.credentials.envVars", "sandbox.credentials.files",
    "sandbox.enabled", "sandbox.excludedCommands", "sandbox.failIfUnavailable",
    "sandbox.filesystem", "sandbox.filesystem.allowManagedReadPathsOnly",
    "sandbox.filesystem.allowRead", "sandbox.filesystem.allowWrite",
    "sandbox.filesystem.denyRead", "sandbox.filesystem.denyWrite",
    "sandbox.network", "sandbox.network.allowAllUnixSockets", "sandbox.network.allowedDomains",
    "sandbox.network.allowLocalBinding", "sandbox.network.allowManagedDomainsOnly",
    "sandbox.network.allowUnixSockets", "sandbox.network.deniedDomains",
)  # fmt: skip

#: Keys Claude Code enforces as a restriction that toolrun does not (with why it matters).
RESTRICTING: Final[Mapping[str, str]] = {
    "allowedMcpServers": "an allowlist of the MCP servers that may run",
    "deniedMcpServers": "MCP servers that may not run",
    "allowManagedMcpServersOnly": "only the managed MCP allowlist applies",
    "permissions.blockReadsOutsideWorkingDirectories": (
        "the file tools refuse reads outside the working directories (toolrun asks)"
    ),
    "policyHelper": "a program that computes managed settings (toolrun does not run it)",
    "strictPluginOnlyCustomization": "hooks, MCP servers, skills and agents only from plugins "
    "and managed settings",
}

_IGNORED = (
    # model and responses
    "advisorModel", "alwaysThinkingEnabled", "availableModels", "effortLevel",
    "enforceAvailableModels", "fallbackModel", "fastMode", "fastModePerSessionOptIn",
    "language", "maxEffortLevel", "model", "modelOverrides", "modelPicker", "modelPricing",
    "modelSettings", "outputStyle", "promptCacheTtl", "showThinkingSummaries",
    "subagentPromptCacheTtl", "switchModelsOnFlag", "ultracode",
    # agents, sessions, worktrees
    "agent", "crossSessionInbound", "disableAgentView", "isolatePeerMachines",
    "processWrapper", "teammateMode", "worktree", "worktree.baseRef", "worktree.bgIsolation",
    "worktree.sparsePaths", "worktree.symlinkDirectories",
    # remote, desktop, notifications
    "agentPushNotifEnabled", "awaySummaryEnabled", "disableArtifact",
    "disableDeepLinkRegistration", "disableDesktopLocalSessions", "disableRemoteControl",
    "enableArtifact", "inputNeededNotifEnabled", "preferredNotifChannel",
    "remote", "remote.defaultEnvironmentId", "remoteControlAtStartup", "sshConfigs",
    "sshHostAllowlist",
    # MCP (servers toolrun never starts from these keys)
    "allowAllClaudeAiMcps", "disableClaudeAiConnectors", "disabledMcpjsonServers",
    "enableAllProjectMcpServers", "enabledMcpjsonServers", "managedMcpServers",
    # plugins and skills (toolrun runs neither)
    "allowedChannelPlugins", "blockedMarketplaces", "channelsEnabled",
    "disableBundledSkills", "disableCommandPluginSources", "disableSkillShellExecution",
    "enabledPlugins", "extraKnownMarketplaces", "pluginConfigs",
    "pluginSuggestionMarketplaces", "pluginTrustMessage", "skillOverrides",
    "strictKnownMarketplaces", "syncClaudeAiPlugins", "syncClaudeAiSkills",
    # automation: workflows are not run
    "disableWorkflows", "enableWorkflows",
    "workflowKeywordTriggerEnabled", "workflowSizeGuideline",
    # permission settings about auto mode: toolrun decides auto as default (no classifier)
    "autoMode", "autoMode.classifyAllShell", "disableAutoMode", "skipAutoPermissionPrompt",
    "skipDangerousModePermissionPrompt", "useAutoModeDuringPlan",
    # memory and context
    "autoCompactEnabled", "autoCompactWindow", "autoMemoryDirectory", "autoMemoryEnabled",
    "bashOutputMaxChars", "claudeMd", "claudeMdExcludes", "env", "fileCheckpointingEnabled",
    "plansDirectory", "skillListingBudgetFraction", "skillListingMaxDescChars",
    "taskOutputMaxChars",
    # authentication and providers
    "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "forceLoginGatewayUrl",
    "forceLoginMethod", "forceLoginOrgUUID", "gatewayInternalNetworks", "gcpAuthRefresh",
    "otelHeadersHelper",
    # enterprise and managed settings
    "disableSideloadFlags", "forceRemoteSettingsRefresh", "managedSourcesBehavior",
    "parentSettingsBehavior", "policyHelper.path", "policyHelper.refreshIntervalMs",
    "policyHelper.timeoutMs", "wslInheritsWindowsSettings",
    # updates, git, privacy
    "autoUpdatesChannel", "minimumVersion", "requiredMaximumVersion", "requiredMinimumVersion",
    "attribution", "attribution.commit", "attribution.pr", "attribution.sessionUrl",
    "includeCoAuthoredBy", "includeGitInstructions", "prUrlTemplate",
    "cleanupPeriodDays", "desktopSessionCleanupPeriodDays", "feedbackDrafts",
    "feedbackSurveyRate", "skipWebFetchPreflight",
    # tools toolrun has no counterpart of (the desktop app's panes)
    "browserExternalPageTools", "disableBrowserExternalNavigation",
    "disableMobileSimulatorTools",
    # interface and terminal
    "askUserQuestionTimeout", "autoContinueAtUsageLimit", "autoScrollEnabled", "axScreenReader",
    "bashEditDiffEnabled", "companyAnnouncements", "defaultShell", "dialogExpiry",
    "editorMode", "emojiCompletionEnabled", "fileSuggestion", "footerLinksRegexes",
    "keybindingFlavor", "prefersReducedMotion", "promptSuggestionEnabled", "respectGitignore",
    "respondToBashCommands", "showClearContextOnPlanAccept", "showTurnDuration",
    "spellcheck", "spinnerTipsEnabled", "spinnerTipsOverride", "spinnerVerbs", "statusLine",
    "subagentStatusLine", "syntaxHighlightingDisabled", "terminalProgressBarEnabled",
    "terminalTitleFromRename", "theme", "timeFormat", "timeZone", "tui", "verbose", "viewMode",
    "vimInsertModeRemaps", "voice", "voiceEnabled", "wheelScrollAccelerationEnabled",
    # kept in ~/.claude.json ("Global config"); harmless in a settings file
    "autoConnectIde", "autoInstallIdeExtension", "copyOnSelect", "diffTool",
    "externalEditorContext", "permissionExplainerEnabled", "teammateDefaultModel",
    # sandbox keys that loosen, or that only macOS or a custom proxy reads: ignoring them
    # keeps toolrun's sandbox as strict or stricter
    "sandbox.allowAppleEvents", "sandbox.enableWeakerNestedSandbox",
    "sandbox.enableWeakerNetworkIsolation", "sandbox.ignoreViolations", "sandbox.ripgrep",
    "sandbox.socatPath", "sandbox.filesystem.disabled",
    "sandbox.credentials.allowPlaintextInject", "sandbox.credentials.awsPairs",
    "sandbox.credentials.sigv4",
    "sandbox.network.allowMachLookup", "sandbox.network.httpProxyPort",
    "sandbox.network.socksProxyPort", "sandbox.network.tlsTerminate",
    # toolrun's proxy never prompts: a host outside the allowlist is always refused
    "sandbox.network.strictAllowlist",
)  # fmt: skip

#: Keys older Claude Code pages documented in another place (read as ignored).
_LEGACY = (
    "permissions.disableAutoMode", "sandbox.httpProxyPort", "sandbox.socksProxyPort",
)  # fmt: skip

KEYS: Final[Mapping[str, Status]] = {
    **dict.fromkeys(_IGNORED, "ignored"),
    **dict.fromkeys(_LEGACY, "ignored"),
    **dict.fromkeys(RESTRICTING, "restricting"),
    **dict.fromkeys(_ENFORCED, "enforced"),
}
#: Keys Claude Code reads only from managed settings; toolrun does the same.
MANAGED_ONLY: Final = frozenset(
    {
        "allowManagedHooksOnly", "allowManagedPermissionRulesOnly",
        "sandbox.filesystem.allowManagedReadPathsOnly", "sandbox.network.allowManagedDomainsOnly",
    }
)  # fmt: skip


@functools.cache
def children(section: str, status: Status) -> frozenset[str]:
    """The keys directly under ``section`` ("" for the top level) with that status."""
    prefix = f"{section}." if section else ""
    return frozenset(
        key[len(prefix) :]
        for key, s in KEYS.items()
        if s == status and key.startswith(prefix) and "." not in key[len(prefix) :]
    )
