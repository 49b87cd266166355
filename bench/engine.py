"""The permission engine's cost per distinct call, in microseconds, by kind (issue 31).

Run:  .venv/bin/python bench/engine.py [--calls 3000] [--rounds 5] [--against DIR]
                                       [--kinds compound,read,edit,grep] [--no-frozen]

Decides, in-process and engine only (``PermissionEngine(config, memo=False)``), calls
that are each new: ``compound`` is the Bash quarter of ``bench/check.py --mix compound``
(``git log -n N --oneline && ls src/dN | head -K``, every dN new), ``read``, ``edit`` and
``grep`` the rest of that mix. The 50 rules are bench/check.py's. As ``toolrun check``
decides them: the tree frozen (``frozen_tree``, --no-frozen for exec's way), the
collector off. Prints the median CPU time (``time.process_time``) per call of each kind
over the rounds; each round decides calls never seen before.

--against DIR times DIR's engine too (``PYTHONPATH=DIR``), each of its rounds right after
the same round of this checkout (interleaved: on a shared machine both see the same
load). Budget (issue 31): compound Bash <= 120 us, Read/Edit/Grep <= 20 us each.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _bytecode import compile_package
from check import RULES

KINDS = ("compound", "read", "edit", "grep")
HERE = Path(__file__).resolve().parent


def make_calls(kind: str, n: int, offset: int) -> list[tuple[str, dict[str, Any]]]:
    """``n`` calls of ``kind``, none like a call of another offset (as bench/check.py's mix)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for j in range(n):
        i = offset + j
        if kind == "compound":
            n_, h = 1 + i * 7 % 49, 1 + i * 11 % 29
            out.append(("Bash", {"command": f"git log -n {n_} --oneline && ls src/d{i} | head -{h}"}))
        elif kind == "read":
            out.append(("Read", {"file_path": f"src/d{i}/m{i}.py"}))
        elif kind == "edit":
            out.append(("Edit", {"file_path": f"src/d{i}/m{i}.py", "old_string": f"v{i}",
                                 "new_string": f"w{i}"}))
        else:
            out.append(("Grep", {"pattern": f"name{i}", "path": f"src/d{i}"}))
    return out


def side(ws: Path, kinds: list[str], calls: int, round_: int, frozen: bool) -> dict[str, float]:
    """One round of this interpreter's toolrun: microseconds per call of each kind."""
    from toolrun.config.loader import load_config
    from toolrun.permissions import PermissionEngine
    from toolrun.permissions.paths import frozen_tree

    loaded = load_config(workspace=ws)
    config = loaded[0] if isinstance(loaded, tuple) else loaded
    engine = PermissionEngine(config, memo=False)
    gc.disable()
    out: dict[str, float] = {}
    for k, kind in enumerate(kinds):
        # a warm-up batch (caches of recurring parts filled as in a long check), then the timed one
        for batch in range(2):
            todo = make_calls(kind, calls, ((round_ * len(kinds) + k) * 2 + batch) * calls)
            start = time.process_time()
            with frozen_tree() if frozen else contextlib.nullcontext():
                for tool, call in todo:
                    engine.decide(tool, call, cwd=ws)
            out[kind] = (time.process_time() - start) / calls * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--against", type=Path)
    parser.add_argument("--no-frozen", action="store_true")
    parser.add_argument("--side", help=argparse.SUPPRESS)  # (workspace: one round, as JSON)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    if args.side:
        print(json.dumps(side(Path(args.side), kinds, args.calls, args.round, not args.no_frozen)))
        return
    here = HERE.parent
    compile_package(here, args.against)
    sides = [("this", here)] + ([("against", args.against.resolve())] if args.against else [])
    results: dict[str, dict[str, list[float]]] = {name: {k: [] for k in kinds} for name, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "toolrun.yaml").write_text(json.dumps({"permissions": RULES}))
        for round_ in range(args.rounds):
            for name, tree in sides:
                env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
                env["PYTHONPATH"] = str(tree)
                command = [sys.executable, str(Path(__file__).resolve()), "--side", str(ws),
                           "--round", str(round_), "--calls", str(args.calls), "--kinds",
                           args.kinds] + (["--no-frozen"] if args.no_frozen else [])
                done = subprocess.run(command, env=env, cwd=ws, capture_output=True, text=True,
                                      check=True)
                for kind, us in json.loads(done.stdout).items():
                    results[name][kind].append(us)
    print(f"engine only, {args.calls} new calls per kind and round, median of {args.rounds} "
          f"rounds ({'tree frozen, as check' if not args.no_frozen else 'tree live, as exec'})")
    for kind in kinds:
        line = f"  {kind:9s}"
        for name, tree in sides:
            line += f"  {name} ({tree.name}): {statistics.median(results[name][kind]):6.1f} us"
        print(line)


if __name__ == "__main__":
    main()
