"""WebFetch's HTML to Markdown on three real pages saved as fixtures (the rustdoc book and
the std_detect API page, from the Rust toolchain's own documentation, MIT/Apache-2.0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.tools.builtins._html import html_to_markdown

PAGES = Path(__file__).with_name("pages")


def page(name: str) -> str:
    return html_to_markdown((PAGES / name).read_text(encoding="utf-8"))


def test_links_survive_as_markdown_links() -> None:
    text = page("rustdoc-references.html")
    assert text.startswith("# References - The rustdoc book\n\n")
    assert (
        "- [Rust By Example](https://doc.rust-lang.org/stable/rust-by-example/meta/doc.html)"
        in text
    )


def test_pre_blocks_are_fenced_with_their_indentation() -> None:
    text = page("rustdoc-what-is-rustdoc.html")
    assert "```\n$ cargo new docs --lib\n$ cd docs\n```" in text
    assert "[Here is a link!](https://www.rust-lang.org)" in text


def test_api_pages_keep_code_spans_and_relative_links() -> None:
    text = page("std-detect-index.html")
    assert "[`is_x86_feature_detected`](macro.is_x86_feature_detected.html" in text


@pytest.mark.parametrize("name", sorted(p.name for p in PAGES.glob("*.html")))
def test_nothing_a_reader_does_not_see(name: str) -> None:
    raw = (PAGES / name).read_text(encoding="utf-8")
    assert "<script" in raw  # the pages do carry scripts and styles
    text = page(name)
    for leftover in ("<script", "function(", "window.", "{display", "<style"):
        assert leftover not in text


def test_scripts_styles_and_templates_go_even_inline() -> None:
    html = (
        "<html><head><title>T</title><style>p{color:red}</style></head><body>"
        "<script>steal()</script><noscript>no js</noscript><template>tpl</template>"
        "<p>kept <a href='https://x.example/'>link</a></p><pre>  a\n    b</pre></body></html>"
    )
    assert html_to_markdown(html) == "# T\n\nkept [link](https://x.example/)\n\n```\n  a\n    b\n```"
