"""HTML to Markdown for WebFetch, as Claude Code returns it: headings, links, lists and
``<pre>`` blocks (fenced, indentation kept) survive; scripts, styles and the like go.

markdownify (over BeautifulSoup's stdlib parser) was chosen over html2text after both
converted three real pages (tests/tools/pages/): it fences code blocks, so their
indentation is unambiguous, where html2text indents them and wraps link-heavy lines.
Imported on first use only.
"""

from __future__ import annotations

import re

#: Elements whose content is not text a reader sees.
SKIP = ("script", "style", "noscript", "template", "svg", "head")


def html_to_markdown(html: str) -> str:
    """The title as a ``#`` heading, a blank line, then the page as Markdown."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = " ".join(soup.title.get_text().split()) if soup.title is not None else ""
    for tag in soup.find_all(SKIP):
        tag.decompose()
    body = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    body = re.sub(r"\n{3,}", "\n\n", body).strip()
    return f"# {title}\n\n{body}" if title and body else title or body
