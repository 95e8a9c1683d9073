"""Link text that is a different address: `[https://bank.example](https://bank-example.co)` is held at send.

A link whose visible text reads as one web address or mail address and opens another is the
oldest phishing trick there is, and H0 would put its owner's name under it: a model can write
one (told to by an email it read), an agent can, a template can. Like a look-alike domain
(`h0.mail.deception.lookalike`), such a draft is held with the reason (`h0.mail.sending.hold`), never
rewritten: the owner decides.

What is checked: Markdown inline links `[text](url)` and reference links `[text][ref]` with
their `[ref]: url` lines, and HTML anchors `<a href="url">text</a>` (inline HTML in a Markdown
body, or the HTML part of a direct send). The text "reads as" an address when it holds a
mail address, a URL, `www.…` or a bare domain (`bank.example`; a name ending in a common file
extension such as `report.pdf` is a file, not a domain). It matches when the link goes to the
same host or one of its sub-domains (`bank.example` → `https://login.bank.example/…`), or,
for a mail address, to `mailto:` that address. Links whose text is words ("our site") and
relative links are left alone. A domain the note confirms (`confirm_domains:`) passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

from h0.errors import H0Error, Refusal, refuse
from h0.mail.deception.lookalike import ascii_domain, shown
from h0.printable import printable

__all__ = ["Mismatch", "check_link_texts", "linked_hosts", "mismatched_links"]

MAX_SCANNED_CHARS = 2_000_000  # a body past this is refused elsewhere (h0.mail.compose.mime.check_body)
_INLINE = re.compile(r"\[([^[\]\n]{1,1000})\]\(\s*<?([^()\s<>]{1,4000})>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_REF_USE = re.compile(r"\[([^[\]\n]{1,1000})\]\[([^\]\n]{0,200})\]")
_REF_DEF = re.compile(r"^ {0,3}\[([^\]\n]{1,200})\]:\s*<?(\S{1,4000}?)>?(?:\s|$)", re.MULTILINE)
# Each starts only where a word starts (the look-behinds): a regex that may start anywhere in a
# 1,000-character word rescans it from every position, and a body holds thousands of links.
_MAIL = re.compile(r"(?<![\w.+'-])[\w.+'-]{1,200}@([\w-]+(?:\.[\w-]+)+)", re.UNICODE)
_URL = re.compile(r"(?i)(?<![a-z0-9+.-])(?:[a-z][a-z0-9+.-]{0,30}://|www\.)[^\s<>\"'()\[\]]+")
_DOMAIN = re.compile(r"(?<![\w@.-])((?:[\w-]+\.)+[^\W\d_]{2,24})(?![\w-])", re.UNICODE)
_FILE_ENDINGS = frozenset(
    "pdf doc docx xls xlsx ppt pptx odt ods txt csv rtf png jpg jpeg gif svg webp heic zip gz tar 7z "
    "eml msg ics vcf mp3 mp4 mov wav json xml yaml yml py js exe dmg pkg iso html htm".split()
)
_WEB_SCHEMES = frozenset({"http", "https", "ftp", "ftps"})


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One link whose text reads as `shows` and that opens `goes_to` (host, or mail address)."""

    text: str
    href: str
    shows: str
    goes_to: str


def check_link_texts(
    body: str, html_body: str | None = None, *, confirmed: frozenset[str] = frozenset(), path: str | None = None
) -> None:
    """Hold (Conflict, hold=True) a message with a link whose text reads as another address."""
    found = mismatched_links(body, html_body, confirmed=confirmed)
    if found:
        raise _held(found, path)


def mismatched_links(
    body: str, html_body: str | None = None, *, confirmed: frozenset[str] = frozenset()
) -> list[Mismatch]:
    """Every link in `body` (Markdown and inline HTML) and `html_body` whose text reads as an address
    other than where it goes, in order."""
    found: list[Mismatch] = []
    for text, href in _links(body[:MAX_SCANNED_CHARS], html_body[:MAX_SCANNED_CHARS] if html_body else None):
        mismatch = _compare(text, href, confirmed)
        if mismatch is not None and mismatch not in found:
            found.append(mismatch)
    return found


def linked_hosts(text: str) -> list[str]:
    """The web hosts `text` links to (Markdown and HTML links, and bare URLs), ascii, in order, once each."""
    text = text[:MAX_SCANNED_CHARS]
    hrefs = [href for _, href in _links(text, None)] + [m.group(0) for m in _URL.finditer(text)]
    hosts: dict[str, None] = {}
    for href in hrefs:
        target = _href_target(href.strip())
        if target is not None and target[0] == "web" and target[1] != "(no host)":
            hosts[target[1]] = None
    return list(hosts)


def _links(body: str, html_body: str | None) -> Iterator[tuple[str, str]]:
    yield from ((m.group(1), m.group(2)) for m in _INLINE.finditer(body))
    refs = {label.strip().casefold(): url for label, url in _REF_DEF.findall(body)}
    for text, label in _REF_USE.findall(body):
        url = refs.get((label or text).strip().casefold())
        if url:
            yield text, url
    for source in (body, html_body):
        if source and "<" in source:
            yield from _anchors(source)


class _Anchors(HTMLParser):
    """(href, text) of each <a href> in a piece of HTML, nested markup's text included."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self._open: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = next((value or "" for name, value in attrs if name == "href"), "")
            self._open.append((href, []))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open:
            href, parts = self._open.pop()
            self.found.append(("".join(parts), href))

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][1].append(data)


def _anchors(html: str) -> list[tuple[str, str]]:
    parser = _Anchors()
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):  # malformed markup: what was read so far still counts
        pass
    return [(text, href) for text, href in parser.found if href]


def _compare(text: str, href: str, confirmed: frozenset[str]) -> Mismatch | None:
    shows = _shown_target(" ".join(text.split()))
    if shows is None:
        return None
    goes = _href_target(href.strip())
    if goes is None:
        return None
    (shows_kind, shows_value), (goes_kind, goes_value) = shows, goes
    if shows_kind == goes_kind == "mail":
        same = shows_value == goes_value
    elif shows_kind == goes_kind == "web":
        same = goes_value == shows_value or goes_value.endswith("." + shows_value)
    else:
        same = False
    host = goes_value.rpartition("@")[2]
    if same or host in confirmed:
        return None
    return Mismatch(text=text, href=href, shows=shows_value, goes_to=goes_value)


def _shown_target(text: str) -> tuple[str, str] | None:
    """('mail', address) or ('web', host) that a link's text reads as, or None for words."""
    mail = _MAIL.search(text) if "@" in text else None
    if mail:
        local, _, domain = mail.group(0).rpartition("@")
        return "mail", f"{local.casefold()}@{_host(domain)}"
    url = _URL.search(text)
    if url:
        host = _url_host(url.group(0) if "://" in url.group(0) else "http://" + url.group(0))
        return ("web", host) if host else None
    for match in _DOMAIN.finditer(text):
        name = match.group(1)
        if name.rsplit(".", 1)[1].casefold() not in _FILE_ENDINGS:
            return "web", _host(name)
    return None


def _href_target(href: str) -> tuple[str, str] | None:
    """('mail', address) or ('web', host) a link opens; None for a relative or other link."""
    lowered = href.lower()
    if lowered.startswith("mailto:"):
        address = unquote(href[7:].split("?", 1)[0]).split(",", 1)[0].strip()
        local, at, domain = address.rpartition("@")
        return ("mail", f"{local.casefold()}@{_host(domain)}") if at else None
    if lowered.startswith("www."):
        href = "http://" + href
    elif lowered.startswith("//"):
        href = "http:" + href
    try:
        scheme = urlsplit(href).scheme.lower()
    except ValueError:
        return None
    if scheme not in _WEB_SCHEMES:
        return None
    host = _url_host(href)
    return ("web", host) if host else ("web", "(no host)")


def _url_host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return _host(unquote(host))


def _host(domain: str) -> str:
    host = ascii_domain(domain)
    return host.removeprefix("www.")


def _held(found: list[Mismatch], path: str | None) -> H0Error:
    first = found[0]
    others = f" (and {len(found) - 1} more such link(s))" if len(found) > 1 else ""
    goes = first.goes_to if "@" in first.goes_to else shown(first.goes_to)
    return refuse(
        Refusal.LINK_TEXT_MISMATCH,
        {
            "text": printable(first.text, 120),
            "goes": printable(goes, 120),
            "shows": printable(first.shows, 120),
            "others": others,
            "confirm": first.goes_to.rpartition("@")[2],
        },
        path=path,
        links=[[m.text[:200], m.href[:400]] for m in found[:20]],
    )
