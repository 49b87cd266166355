"""toolrun as a live guard: the engine answering an agent's own hooks, one call at a time.

``payload`` reads what Claude Code (PreToolUse, PermissionRequest) or Gemini CLI
(BeforeTool) sends on a hook's stdin; ``answer`` turns a decision into what they read back;
``session`` journals each decision in a run per agent session; ``engines`` keeps a loaded
config and its engine while their files are unchanged; ``server`` keeps one warm per
workspace so that a hook call costs a connection, not an interpreter's import of the engine.
"""
