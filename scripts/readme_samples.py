"""Write the sample outputs in README.md and docs/*.md from real runs, or check them.

A sample is a block the documentation marks::

    <!-- sample: NAME -->
    ```console
    $ toolrun ...
    (what it printed)
    ```
    <!-- /sample -->

``NAME`` is one of :data:`SAMPLES`: the command, the folder it runs in (relative to the
repository) and the environment. ``python scripts/readme_samples.py`` runs each sample with
this checkout's toolrun and writes its stdout into the block; ``--check`` only compares, and
``tests/examples/test_readme_samples.py`` does the same, so a sample can never drift from what
toolrun prints. What changes from run to run (times, execution and run ids) is masked when
comparing, and the checkout's own path prints as ``/src/toolrun``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHOWN_ROOT = "/src/toolrun"
SHOWN_COPY = "/home/me/project"  # as long as a copy's path, /tmp/tr-XXXXXXXX


@dataclass(frozen=True)
class Sample:
    name: str
    command: str  # as shown after "$ ", a toolrun command line
    cwd: str = "."  # relative to the repository
    columns: int = 100
    stderr: bool = False  # show stderr too (validate prints its problems there)
    #: run in a copy of ``cwd`` at a path as long as :data:`SHOWN_COPY`, which it prints as:
    #: a table wraps absolute paths, so the path must have the same length everywhere
    copy: bool = False


SAMPLES: tuple[Sample, ...] = (
    Sample("exec-fanout", "toolrun exec plans/fanout.yaml --format text"),
    Sample("explain-push", "toolrun explain-permission Bash 'git push origin main && rm -rf /'"),
    Sample("validate-broken", "toolrun validate docs/demo/broken.yaml", stderr=True),
    Sample("validate-typos", "toolrun validate plan.yaml", cwd="docs/demo/typos", stderr=True),
    Sample(
        "check-ci",
        "toolrun check 'agent-plans/**/*.yaml' --problems --format table --width 100",
        cwd="plans/ci",
        copy=True,
    ),
    Sample(
        "policy-diff",
        "toolrun check 'agent-plans/**/*.yaml' --compare-config proposed/toolrun.yaml"
        " --fail-on loosen --format text",
        cwd="plans/ci",
    ),
)

BLOCK = re.compile(
    r"(<!-- sample: (?P<name>[\w-]+) -->\n```console\n)(?P<body>.*?)(```\n<!-- /sample -->)",
    re.DOTALL,
)
_VOLATILE = (
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s)\b"), "N ms"),
    (re.compile(r"\bexec_[0-9a-f][0-9a-f-]*…?"), "exec_ID"),
    (re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]+\b"), "RUN_ID"),
)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def run(sample: Sample) -> str:
    """What the sample's command prints on stdout, from this checkout."""
    argv = shlex.split(sample.command)
    assert argv[0] == "toolrun", sample
    env = {
        **os.environ,
        "COLUMNS": str(sample.columns),
        "NO_COLOR": "1",
        "TOOLRUN_HOOK_SERVER": "off",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("GITHUB_ACTIONS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    cwd = ROOT / sample.cwd
    if sample.copy:
        scratch = tempfile.mkdtemp(prefix="tr-", dir="/tmp")  # /tmp/tr- and 8 characters
        assert len(scratch) == len(SHOWN_COPY), scratch
        os.rmdir(scratch)
        shutil.copytree(cwd, scratch, ignore=shutil.ignore_patterns(".toolrun"))
        cwd = Path(scratch)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "toolrun", *argv[1:]],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if sample.stderr else subprocess.DEVNULL,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        if sample.copy:
            shutil.rmtree(cwd, ignore_errors=True)
    out = done.stdout
    if sample.copy:
        out = out.replace(str(cwd), SHOWN_COPY)
    return out.replace(str(ROOT), SHOWN_ROOT)


def masked(text: str) -> str:
    """The text with what changes between runs masked, and its white space folded: a time
    one character longer moves where a wrapped line breaks, not what it says."""
    for pattern, stand_in in _VOLATILE:
        text = pattern.sub(stand_in, text)
    return " ".join(text.split())


def block_body(sample: Sample, output: str) -> str:
    return f"$ {sample.command}\n{output.rstrip()}\n"


def blocks(text: str) -> list[tuple[str, str]]:
    """(name, body) of every sample block in a document."""
    return [(m["name"], m["body"]) for m in BLOCK.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a drift")
    args = parser.parse_args(argv)
    by_name = {s.name: s for s in SAMPLES}
    outputs: dict[str, str] = {}
    drift = 0
    for doc in documents():
        text = doc.read_text(encoding="utf-8")

        def fill(match: re.Match[str], doc: Path = doc) -> str:
            nonlocal drift
            sample = by_name.get(match["name"])
            if sample is None:
                raise SystemExit(f"{doc.name}: unknown sample {match['name']!r}")
            if sample.name not in outputs:
                outputs[sample.name] = run(sample)
            body = block_body(sample, outputs[sample.name])
            if args.check and masked(body) != masked(match["body"]):
                drift += 1
                sys.stderr.write(
                    f"{doc.relative_to(ROOT)}: sample {sample.name} differs from real output\n"
                )
            return match[1] + body + match[4]

        new = BLOCK.sub(fill, text)
        if not args.check and new != text:
            doc.write_text(new, encoding="utf-8")
    unused = set(by_name) - set(outputs)
    if unused:
        sys.stderr.write(f"samples no document shows: {', '.join(sorted(unused))}\n")
        return 1
    return 1 if args.check and drift else 0


if __name__ == "__main__":
    raise SystemExit(main())
