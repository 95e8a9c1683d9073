"""Mail bodies as text: HTML as readable plain text, and a stranger's text made inert in a note.

`html_to_text` uses the standard library's html.parser. Good enough for triage and for a
human reading a note: paragraphs and line breaks kept, list items bulleted, links shown as
"text (url)", scripts, styles and head dropped, entities decoded. Images become
`[image: alt]` (nothing at all without alt text: a tracking pixel leaves no trace), and
javascript:, vbscript:, data: and file: links lose their target. (html2text would do
more, but it is GPL.)

`inert_block` is how an email's body enters its note: one fenced code block, its fence
longer than any backtick run in the text, so no line of the email can close it. Inside a
code block Obsidian renders nothing — no image or HTML that fetches (tracking pixels), no
link, no `![[embed]]` or `[[wikilink]]`, no `%%` or `<!--` comment hiding text, no `---`
rule, no #tag or inline field polluting the vault's indexes. One construct CommonMark
guarantees beats escaping each of Obsidian's dozen constructs and missing the next one.
Only H0's own cut-off line still needs defusing (`defuse_cutoff`): `h0.mail.compose.drafts` finds it
by text, not by Markdown structure, so it must not appear in an email note or in a reply
drafted from one. `block_text` gives triage the words back; `inert_inline` (one line of
H0's own notes quoting a stranger's words) and `disarm_reply` (a drafted reply, which is
sent, so it cannot be fenced) cover the rest.
"""

from __future__ import annotations

import contextlib
import re
from html.parser import HTMLParser

from h0.vault.sendable import CUTOFF

_BLOCK = frozenset(
    "address article aside blockquote div dl dt dd fieldset figure footer form h1 h2 h3 h4 h5 h6 header "
    "hr main nav ol p pre section table tr ul".split()
)
_SKIP = frozenset(("script", "style", "head", "title", "template", "noscript"))
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_UNSAFE_SCHEMES = ("javascript:", "vbscript:", "data:", "file:")
_URL_NOISE = re.compile(r"[\x00-\x20\x7f-\x9f]+")  # browsers ignore these inside a scheme: "java\tscript:"


def unsafe_link(href: str) -> bool:
    """True for a link target that runs code or carries content inline instead of pointing somewhere."""
    return _URL_NOISE.sub("", href).lower().startswith(_UNSAFE_SCHEMES)


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
            alt = " ".join((dict(attrs).get("alt") or "").split())
            if alt:
                self.out.append(f"[image: {alt}]")
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
            if href and not href.startswith("#") and not unsafe_link(href) and href not in text:
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
    with contextlib.suppress(Exception):  # html.parser is lenient, but a mail body is hostile input
        parser.feed(html)
        parser.close()
    text = "".join(parser.out)
    lines = [line.strip(" ") for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def truncate(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to `limit` characters, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True


# -- a stranger's text in a note ---------------------------------------------------------------

_CUTOFF_LIKE = re.compile(r"%%\s*h0\s*:\s*not\s+sent\s+below\s*%%", re.IGNORECASE)
_CUTOFF_DEFUSED = "% % h0: not sent below % %"
_BODY_CONTROLS = {code: None for code in [*range(0x20), *range(0x7F, 0xA0)] if chr(code) not in "\t\n"}
_BACKTICKS = re.compile(r"`+")
_FETCHING_TAGS = re.compile(
    r"<(?=\s*/?\s*(?:img|image|iframe|frame|frameset|video|audio|source|track|picture|object|embed|link|"
    r"script|style|svg|meta|base|input|form)\b)",
    re.IGNORECASE,
)
_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]<>!%#|~=^${}])")
assert _CUTOFF_LIKE.fullmatch(CUTOFF) and not _CUTOFF_LIKE.search(_CUTOFF_DEFUSED)


def defuse_cutoff(text: str) -> str:
    """`text` with anything resembling H0's cut-off line (any case or spacing) made visibly inert."""
    return _CUTOFF_LIKE.sub(_CUTOFF_DEFUSED, text)


def inert_block(text: str, info: str = "text") -> str:
    """`text` as one fenced code block that no line of it can close, ending in a newline.

    Every Unicode line boundary becomes "\n" (a lone CR or U+2028 is a line end to some
    renderers), other control characters but tab go, and the cut-off line is defused.
    """
    lines = "\n".join(text.splitlines()).translate(_BODY_CONTROLS)
    lines = defuse_cutoff(lines)
    longest = max((len(run) for run in _BACKTICKS.findall(lines)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{lines}\n{fence}\n"


_OPENING = re.compile(r"(`{3,})text\n")


def block_text(body: str) -> str:
    """The text of a note body written by `inert_block` (plus whatever H0 added after the block),
    for a reader that wants the email's words, not its Markdown (triage). Other bodies unchanged."""
    opening = _OPENING.match(body)
    if opening is None:
        return body
    closing = re.compile(rf"^ {{0,3}}`{{{len(opening.group(1))},}}[ \t]*$", re.MULTILINE).search(body, opening.end())
    if closing is None:
        return body
    inside = body[opening.end() : closing.start()].removesuffix("\n")
    after = body[closing.end() :].strip("\n")
    return f"{inside}\n\n{after}\n" if after else f"{inside}\n"


def inert_inline(text: str) -> str:
    """One line of a stranger's words inside H0's own Markdown: line breaks and controls become
    spaces, the cut-off line is defused, and every character Markdown or Obsidian give a meaning
    (images, links, embeds, HTML, comments, tags, code) is backslash-escaped."""
    one_line = " ".join("\n".join(text.splitlines()).translate(_BODY_CONTROLS).split())  # tabs, breaks: spaces
    return _MARKDOWN_ACTIVE.sub(r"\\\1", defuse_cutoff(one_line))


def disarm_reply(text: str) -> str:
    """A drafted reply (it is sent as written, so it cannot be fenced or escaped) that fetches
    nothing when the draft is opened: Markdown images and embeds become links (`![x](u)` →
    `[x](u)`, `![[n]]` → `[[n]]`), tags that fetch lose their `<` to `&lt;`, and the cut-off
    line is defused. The human reads the result before approving it."""
    text = defuse_cutoff(text).replace("![", "[")
    return _FETCHING_TAGS.sub("&lt;", text)
