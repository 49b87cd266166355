"""A PreToolUse hook (Claude Code's protocol): deny `git push --force` whatever the rules say.

It reads the call as JSON on stdin and answers with a permission decision on stdout.
"""

import json
import sys

call = json.load(sys.stdin)
command = call.get("tool_input", {}).get("command", "")
words = command.split()
if words[:2] == ["git", "push"] and ({"--force", "-f"} & set(words) or any(
    w.startswith("--force-with-lease") for w in words
)):
    json.dump(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "force pushes rewrite shared history",
            }
        },
        sys.stdout,
    )
