"""Bash under bubblewrap with Claude Code's ``sandbox`` settings (design §9).

:mod:`~toolrun.sandbox.policy` says whether a call runs sandboxed,
:mod:`~toolrun.sandbox.mounts` and :mod:`~toolrun.sandbox.bwrap` build the
``bwrap`` command line, :mod:`~toolrun.sandbox.proxy` is the domain proxy that
toolrun runs outside the sandbox, reached from inside through
:mod:`~toolrun.sandbox.bridge`, and :mod:`~toolrun.sandbox.run` ties them to one
Bash call. Nothing here imports click or prints.
"""
