"""toolrun as a live guard: the engine answering an agent's own hooks, one call at a time.

``hook`` is ``toolrun hook`` as a library function (one payload in, the agent's answer
out); ``payload`` reads what Claude Code (PreToolUse, PermissionRequest) or Gemini CLI
(BeforeTool) sends on a hook's stdin; ``answer`` turns a decision into what they read back
(and says which decisions are answered); ``session`` journals each decision in a run per
agent session; ``engines`` keeps a loaded config and its engine while their files are
unchanged; ``server`` keeps one warm per user, which ``client`` asks, and ``fastcli`` is
``python -m toolrun hook`` without click, so a warm call costs an interpreter and a
connection, not an import of the engine.
"""
