"""Long run of the differential test against real bash (issue 9 point 9).

Run:  .venv/bin/python bench/differential_bash.py --count 2000 [--seed N]

Generates commands from tests/permissions/shell_grammar.py, decides each with toolrun
under deny: ["Bash(marker *)"] (default mode and bypassPermissions), runs it under bash
in a scratch directory with the marker on PATH, and reports how many inputs ran, how
many ran the marker, and every command toolrun allowed although bash ran the marker.
Exit 1 when there is one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, given, seed, settings

from tests.permissions.shell_grammar import Outcome, commands, make_bin, run_one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="commands to generate")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bindir = make_bin(root)

        @settings(
            max_examples=args.count,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(command=commands)
        def one(command: str) -> None:
            outcomes.append(run_one(command, root / f"s{len(outcomes)}", bindir))

        if args.seed is not None:
            one = seed(args.seed)(one)
        one()
    ran = [o for o in outcomes if o.ran_marker]
    unsafe = [o for o in outcomes if o.unsafe]
    print(
        f"inputs run under bash: {len(outcomes)}; ran the marker: {len(ran)}; "
        f"allowed by toolrun although the marker ran: {len(unsafe)}"
    )
    for o in unsafe:
        print(f"  UNSAFE default={o.default} bypass={o.bypass} allowing={o.allowing}: "
              f"{o.command!r}")
    return 1 if unsafe else 0


if __name__ == "__main__":
    sys.exit(main())
