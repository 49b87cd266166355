"""AutoVerify (``toolrun.autoVerify``): diagnostics commands run after file edits.

After a successful Edit, MultiEdit, Write or ApplyPatch, every verifier whose ``files``
patterns match a written file runs once on those files; its report is parsed
(:mod:`toolrun.verify.parsers`), kept to the written files and the lines the edit touched
(:mod:`toolrun.verify.files`), and added to the call's result as ``verify``
(:mod:`toolrun.execution.autoverify`). Verifier commands come from the config, like hook
commands: the permission engine does not decide them.

Nothing is imported here: the config loader reads :mod:`toolrun.verify.files` for its
checks, and a run without verifiers never loads the rest.
"""
