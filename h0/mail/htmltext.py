"""HTML mail bodies as readable plain text, with the standard library's html.parser.

Good enough for triage and for a human reading a note: paragraphs and line breaks kept,
list items bulleted, links shown as "text (url)", scripts, styles and head dropped,
entities decoded. (html2text would do more, but it is GPL.)
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCK = frozenset(
    "address article aside blockquote div dl dt dd fieldset figure footer form h1 h2 h3 h4 h5 h6 header "
    "hr main nav ol p pre section table tr ul".split()
)
_SKIP = frozenset(("script", "style", "head", "title", "template", "noscript"))
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_BLANK_LINES = re.compile(r"\n{3,}")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._skip_depth = 0
        self._pre_depth = 0
        self._href: list[str | None] = []
        self._link_text_start: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip_depth += 1
        elif tag == "br":
            self.out.append("\n")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag in ("td", "th"):
            self.out.append("\t")
        elif tag == "a":
            self._href.append(dict(attrs).get("href"))
            self._link_text_start.append(len(self.out))
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self.out.append(f"[{alt}]")
        if tag == "pre":
            self._pre_depth += 1
        if tag in _BLOCK:
            self.out.append("\n\n" if tag in ("p", "h1", "h2", "h3", "blockquote", "table") else "\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in ("br", "img", "hr"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag == "a" and self._href:
            href = self._href.pop()
            start = self._link_text_start.pop()
            text = "".join(self.out[start:]).strip()
            if href and not href.startswith(("#", "javascript:")) and href not in text:
                shown = href.removeprefix("mailto:")
                self.out.append(f" ({shown})" if text else shown)
        if tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        if tag in _BLOCK:
            self.out.append("\n\n" if tag in ("p", "h1", "h2", "h3", "blockquote", "table") else "\n")

    def handle_data(self, data: str) -> None:
        if self._skip_depth:
            return
        if self._pre_depth:
            self.out.append(data)
        else:
            self.out.append(_SPACES.sub(" ", data.replace("\n", " ")))


def html_to_text(html: str) -> str:
    """Readable text from an HTML body (never raises on malformed markup)."""
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient, but a mail body is hostile input
        pass
    text = "".join(parser.out)
    lines = [line.strip(" ") for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def truncate(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to `limit` characters, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True
