"""HTML to readable text, crudely: drop scripts and styles, keep blocks on their own lines."""

from __future__ import annotations

import re
from html.parser import HTMLParser

SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
BLOCK = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
        "tr", "ul",
    }
)  # fmt: skip


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.skipping = 0
        self.in_title = False
        self.in_pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre":
            self.in_pre += 1
        if tag == "title":
            self.in_title = True
        elif tag in SKIP:
            self.skipping += 1
        elif tag in BLOCK:
            self.parts.append("\n- " if tag == "li" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self.in_pre = max(0, self.in_pre - 1)
        if tag == "title":
            self.in_title = False
        elif tag in SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.skipping:
            self.parts.append(data if self.in_pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """The title, a blank line, then the text with one line per block element."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    lines = [line.strip() for line in "".join(parser.parts).split("\n")]
    body = "\n".join(line for line in lines if line)
    title = " ".join("".join(parser.title).split())
    return f"{title}\n\n{body}" if title and body else title or body
