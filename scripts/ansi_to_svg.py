"""Turn a terminal capture (text with ANSI colour codes, as `script` records it) into an
SVG for the README: `python scripts/ansi_to_svg.py < capture.txt > docs/picture.svg`.

With `--annotations`, the input is `toolrun check --format github` output, drawn as a pull
request lists the annotations: level, file and line, title, message.

The README's pictures (run from the repository's root):
    script -qc "COLUMNS=118 toolrun exec plan.yaml --ask deny" /dev/null | grep -v journal: \
        | python scripts/ansi_to_svg.py > docs/exec-table.svg        # the plan: docs/demo/
    (cd plans/ci && GITHUB_WORKSPACE=$PWD/../.. toolrun check 'agent-plans/**/*.yaml' \
        --format github) | python scripts/ansi_to_svg.py --annotations > docs/annotations.svg

Only what toolrun prints is handled: SGR codes for the 8 foreground colours, bold and
reset; other escape sequences are dropped.
"""

from __future__ import annotations

import html
import re
import sys

COLOURS = {
    "30": "#3b4252",
    "31": "#e5534b",
    "32": "#57ab5a",
    "33": "#c69026",
    "34": "#539bf5",
    "35": "#b083f0",
    "36": "#39c5cf",
    "37": "#d0d7de",
}
FOREGROUND, BACKGROUND = "#d0d7de", "#22272e"
CHAR_W, LINE_H, PAD = 8.4, 18, 14
SGR = re.compile(r"\x1b\[([0-9;]*)m")
OTHER = re.compile(r"\x1b\[[0-9;?]*[A-Za-ln-z]|\r")  # every CSI sequence but SGR (m)


def spans(line: str) -> list[tuple[str, str | None, bool]]:
    """(text, colour, bold) runs of one line."""
    out: list[tuple[str, str | None, bool]] = []
    colour: str | None = None
    bold = False
    pos = 0
    for m in SGR.finditer(line):
        if m.start() > pos:
            out.append((line[pos : m.start()], colour, bold))
        for code in (m[1] or "0").split(";"):
            if code in ("0", ""):
                colour, bold = None, False
            elif code == "1":
                bold = True
            elif code == "22":
                bold = False
            elif code in COLOURS:
                colour = COLOURS[code]
        pos = m.end()
    out.append((line[pos:], colour, bold))
    return out


def svg(text: str) -> str:
    lines = [OTHER.sub("", line) for line in text.rstrip("\n").split("\n")]
    width = max(len(SGR.sub("", line)) for line in lines) * CHAR_W + 2 * PAD
    height = len(lines) * LINE_H + 2 * PAD
    rows = []
    for i, line in enumerate(lines):
        parts = []
        for chunk, colour, bold in spans(line):
            if not chunk:
                continue
            style = f' fill="{colour}"' if colour else ""
            style += ' font-weight="bold"' if bold else ""
            parts.append(f"<tspan{style}>{html.escape(chunk)}</tspan>")
        y = PAD + (i + 1) * LINE_H - 5
        rows.append(f'<text x="{PAD}" y="{y}" xml:space="preserve">{"".join(parts)}</text>')
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
        f'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14" '
        f'fill="{FOREGROUND}">\n<rect width="100%" height="100%" rx="6" fill="{BACKGROUND}"/>\n'
        + "\n".join(rows)
        + "\n</svg>\n"
    )


ANNOTATION = re.compile(r"^::(error|warning) (.*?)::(.*)$")


def annotations(text: str) -> str:
    """Workflow commands as a pull request shows them, in ANSI colours for :func:`svg`."""
    out = []
    for line in text.splitlines():
        m = ANNOTATION.match(line)
        if not m:
            out.append(line)
            continue
        props = dict(p.split("=", 1) for p in m[2].split(","))
        unescape = lambda v: (
            v.replace("%3A", ":").replace("%2C", ",").replace("%0A", " ").replace("%25", "%")
        )
        colour, mark = ("31", "✖ Error") if m[1] == "error" else ("33", "⚠ Warning")
        out.append(f"\x1b[{colour};1m{mark}\x1b[0m  \x1b[1m{unescape(props['title'])}\x1b[0m")
        out.append(f"   {unescape(props['file'])}#L{props['line']}")
        message = unescape(m[3])
        out.append("   " + (message if len(message) <= 110 else message[:109] + "…"))
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    text = sys.stdin.read()
    sys.stdout.write(svg(annotations(text) if "--annotations" in sys.argv else text))
