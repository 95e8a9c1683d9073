"""Header text written by strangers: decoded completely, then cleaned (mail in) or refused (mail out).

A header value is one line, but an RFC 2047 encoded word can carry anything inside that
line: `=?utf-8?q?Hi=0D=0ABcc:_eve@evil.example?=` decodes to a CR LF and a Bcc header, and
CPython before 3.13 writes what such a word decodes to back out as real line breaks when it
folds the header (CVE-2024-6923). H0 therefore never relies on the interpreter: every value
is decoded here — to a fixed point, since a word may decode to another word — by a decoder
more permissive than any reader's (words mid-word, inside quotes, with spaces, in unknown
charsets), and judged on what it decodes to as well as on what it is.

- Mail in (subjects, display names, anything a note or a tool result shows):
  `clean_header_text` and `clean_address_header` remove every control character — line
  breaks and tabs become a space — and never raise, so a hostile subject is one more odd
  subject, not a handler error retried in a loop.
- Mail out: `check_header_text` refuses (InvalidRequest) a value that has, or decodes to, a
  control character; `check_wire` then parses the serialised bytes back and refuses any
  header or recipient other than the ones set (`mime.compose` and `mime.raw_bytes` use it).

"Control" means Unicode category Cc (C0 with NUL, BEL, ESC and TAB; DEL; C1 with NEL), Zl
and Zp (U+2028, U+2029): everything a header parser or a terminal may take for a line end.

"""

from __future__ import annotations

import binascii
import contextlib
import datetime as dt
import re
import secrets
import unicodedata
from collections import Counter
from collections.abc import Sequence
from email import policy
from email.header import decode_header
from email.headerregistry import Address
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.utils import getaddresses, parsedate_to_datetime

from h0.errors import InvalidRequest
from h0.mail.incoming.mimebounds import bounded_address_list

CONTROL_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})
# Headers whose value is a list of addresses: their display names are decoded one by one, after
# the list is split, so a decoded comma or angle bracket can never conjure another address.
ADDRESS_HEADERS = frozenset(
    "from sender reply-to to cc bcc resent-from resent-sender resent-to resent-cc resent-bcc "
    "delivered-to return-path disposition-notification-to".split()
)
# Headers kept as they came (controls removed, nothing decoded): their structure is read by
# machines (MIME parameters, authentication results), and none of them carries encoded words.
_RAW_HEADERS = ("content-", "authentication-results", "arc-", "dkim-signature", "received-spf")

# Any =?charset?q|b?text?= — the legacy decoder's pattern, widened to span line ends: whatever
# a reader could take for an encoded word, this finds.
_WORD = re.compile(r"=\?([^?]*)\?([qQbB])\?(.*?)\?=", re.DOTALL)
_HEX = re.compile(rb"=([0-9A-Fa-f]{2})")
_WSP = re.compile(r"\s+")
_SPACES = re.compile(r" {2,}")
_MAX_ROUNDS = 16  # an honest value nests no words at all; 16 levels is already an attack
# Line-like controls become a space (two words stay two words); every other control goes.
_LINE_LIKE = "\t\n\v\f\r\x1c\x1d\x1e\x1f\x85\u2028\u2029"
_CONTROL_TABLE = {
    code: (" " if chr(code) in _LINE_LIKE else None) for code in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]
}
_ADDR_JUNK = re.compile(r"[\s<>,;\"()\\]")
_ADDR_NO_WORD = re.compile(r"=\?+")  # an address never carries an encoded word: no '=?' is left to decode
# An encoded word as a list parser would see one token: no space, no '?' inside its parts.
_WORD_TOKEN = re.compile(r"=\?[^?\s]*\?[qQbB]\?[^?\s]*\?=")
_SURROGATES = re.compile("[\ud800-\udfff]")  # undecodable bytes the email package keeps as surrogates
_NEEDS_QUOTES = re.compile(r"[()<>\[\]:;@\\,.\"]")


def has_control(text: str) -> bool:
    """True if `text` itself holds a control character (see the module's docstring)."""
    return any(unicodedata.category(ch) in CONTROL_CATEGORIES for ch in text)


def remove_controls(text: str) -> str:
    """`text` with line-like controls turned into spaces and every other control removed."""
    return text.translate(_CONTROL_TABLE)


def decode_words(text: str) -> str:
    """One round of RFC 2047 decoding, as permissive as any reader; undecodable words stay as they are.

    Whitespace between two decoded words is dropped (RFC 2047 §6.2).
    """
    out: list[str] = []
    pos = 0
    previous_decoded = False
    for match in _WORD.finditer(text):
        gap = text[pos : match.start()]
        decoded = _decode_word(match)
        if decoded is None:
            out += [gap, match.group()]
            previous_decoded = False
        else:
            if not (previous_decoded and (not gap or gap.isspace())):
                out.append(gap)
            out.append(decoded)
            previous_decoded = True
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def _decode_word(match: re.Match[str]) -> str | None:
    charset = match.group(1).split("*", 1)[0].strip() or "utf-8"
    payload = match.group(3)
    data: bytes | None
    if match.group(2) in "qQ":
        data = _HEX.sub(lambda m: bytes([int(m.group(1), 16)]), payload.encode("utf-8", "replace").replace(b"_", b" "))
    else:
        data = _b64(_WSP.sub("", payload))
        if data is None:
            return None
    try:
        return data.decode(charset, "replace")
    except Exception:  # noqa: BLE001 - unknown charset, a bytes-to-bytes codec, a codec without 'replace'
        return data.decode("utf-8", "replace")


def _b64(text: str) -> bytes | None:
    # a2b_base64 skips characters outside the alphabet, as lenient readers do; try the padding
    # fixes they try, in turn.
    for candidate in (text, text + "=" * (-len(text) % 4), text[: len(text) - len(text) % 4]):
        try:
            return binascii.a2b_base64(candidate.encode("ascii", "ignore"))
        except (binascii.Error, ValueError):
            continue
    return None


def _stdlib_decodings(text: str) -> list[str]:
    """What the email package's two decoders make of `text` (they differ in edge cases)."""
    found = []
    with contextlib.suppress(Exception):  # a parser bug on hostile input is not our answer
        found.append(str(policy.default.header_factory("subject", text)))
    with contextlib.suppress(Exception):  # unknown charsets raise LookupError here
        found.append(
            "".join(
                part.decode(charset or "utf-8", "replace") if isinstance(part, bytes) else part
                for part, charset in decode_header(text)
            )
        )
    return found


def hides_control(text: str) -> bool:
    """True if `text`, or any decoding of it at any depth by any reader, holds a control character.

    Words nested deeper than any honest value would count as hiding one.
    """
    seen = text
    for _ in range(_MAX_ROUNDS):
        if has_control(seen) or any(has_control(d) for d in _stdlib_decodings(seen)):
            return True
        decoded = decode_words(seen)
        if decoded == seen:
            return False
        seen = decoded
    return True


def check_header_text(field: str, value: str) -> str:
    """Mail out: `value` unchanged, or InvalidRequest if it has or decodes to a control character."""
    if hides_control(value):
        raise InvalidRequest(
            f"The {field} contains a line break or another control character (RFC 2047 encoded words are "
            "checked after decoding); header values must be one line (header injection refused). Retype it in the "
            "frontmatter as plain text on one line, then approve again.",
            field=field,
        )
    return value


def decode_fully(text: str) -> str:
    """`text` with every encoded word decoded, to a fixed point (bounded); controls left in place."""
    for _ in range(_MAX_ROUNDS):
        decoded = decode_words(text)
        if decoded == text:
            break
        text = decoded
    return text


def clean_header_text(value: object) -> str:
    """Mail in: the text a header shows, decoded completely, with no control character left. Never raises.

    Line breaks and tabs become a space and runs of spaces one space. An encoded word left
    over (one nobody can decode, or nested beyond the bound) loses its `=?`, so no reader
    later decodes it into something else.
    """
    text = "" if value is None else str(value)
    if text.isascii() and text.isprintable() and "=?" not in text and "  " not in text and text == text.strip():
        return text  # most headers: no control, no encoded word, no run of spaces — nothing to clean
    for _ in range(_MAX_ROUNDS):
        step = remove_controls(decode_words(text))
        if step == text:
            break
        text = step
    text = _SURROGATES.sub("\ufffd", remove_controls(text))
    if _WORD.search(text):
        text = text.replace("=?", "= ?")
    return _SPACES.sub(" ", text).strip()


_HELD_WORD = re.compile(r"h0w([0-9a-f]{12})n([0-9]+)e")


def clean_address_header(value: object) -> str:
    """Mail in: an address list with every display name cleaned (`header_addresses`), rendered so any
    parser splits it alike."""
    return ", ".join(format_address(name, addr) for name, addr in header_addresses(value))


def header_addresses(value: object) -> list[tuple[str, str]]:
    """Mail in: (display name, address) of each mailbox an address header names, names cleaned — the one
    reader of an address header's raw value (From, To, Cc, …).

    The list is split first, each encoded word one token whatever it holds, and only display
    names are decoded: a comma or `<` inside an encoded word stays inside its name.
    Addresses are never decoded (an encoded word is not an address): controls, list
    punctuation and the `=?` that opens an encoded word are dropped from them. A name without an
    address is no mailbox (shown alone it could pass for one) and is left out.
    """
    text = bounded_address_list(remove_controls("" if value is None else str(value)))
    found = []
    for name, addr in _mailboxes(text):
        addr = _ADDR_NO_WORD.sub("=", _ADDR_JUNK.sub("", addr))
        if addr:
            found.append((clean_header_text(name), addr))
    return found


def _mailboxes(text: str) -> list[tuple[str, str]]:
    """(display name, address) pairs of an address list, groups flattened, nothing decoded yet.

    Each encoded word is first set aside as a plain token, so that nothing it holds (a comma,
    a quote, an angle bracket, even after decoding) can take part in splitting the list; the
    list is then split by the standard library's `getaddresses`, and the words are put back.
    """
    nonce = secrets.token_hex(6)
    while nonce in text:  # pragma: no cover - 48 random bits
        nonce = secrets.token_hex(6)
    words: list[str] = []

    def hold(match: re.Match[str]) -> str:
        words.append(match.group(0))
        return f"h0w{nonce}n{len(words) - 1}e"

    held = _WORD_TOKEN.sub(hold, text)

    def restore(part: str) -> str:
        # One pattern for every call (a pattern per nonce cost a compile per header: the re cache holds 512).
        if not words:
            return part
        return _HELD_WORD.sub(lambda m: words[int(m.group(2))] if m.group(1) == nonce else m.group(0), part)

    try:
        pairs = getaddresses([held])
    except Exception:  # noqa: BLE001 - a parser error on hostile input is an empty list, not a crash
        return []
    return [(restore(name), restore(addr)) for name, addr in pairs]


# What reads as an address to the eye inside a display name (`"ceo@bank.com" <evil@x.com>`).
_SHOWN_ADDRESS = re.compile(r"[^\s<>()\[\]\"',;:@]+@[^\s<>()\[\]\"',;:@]+\.[^\s<>()\[\]\"',;:@]+")
MAX_SHOWN_NAME = 800  # of a display name, what is looked at for addresses


def addresses_shown(name: str) -> list[str]:
    """The addresses a display name shows (lower-case, in order), compatibility forms counted (a fullwidth
    ＠ is an @ to the eye): the one reader of that question, for the send path's check of a recipient and
    the attack checks of a sender."""
    shown = unicodedata.normalize("NFKC", name[:MAX_SHOWN_NAME])
    if "@" not in shown:
        return []
    return [found.strip(".").casefold() for found in _SHOWN_ADDRESS.findall(shown)]


def header_date(value: object) -> dt.datetime | None:
    """Mail in: when a Date header (RFC 5322) says the message was written, as an aware datetime with the
    header's own offset; `-0000` (zone not said) is UTC; None when the header is absent or unreadable. The
    one reader of a Date header, for the fetched message's date and an import's."""
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(str(value))
        moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
        moment.timestamp()  # a year the platform cannot hold is no date
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None
    return moment


def format_address(name: str, addr: str) -> str:
    """'name <addr>', the name quoted when it holds anything an address parser reads as structure."""
    if not name:
        return addr
    if _NEEDS_QUOTES.search(name) or name != name.strip():
        name = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{name} <{addr}>" if addr else name


def clean_inbound_header(name: str, value: object) -> str:
    """Mail in: one header's value as H0 keeps it (address lists, raw structured headers, or text)."""
    lowered = name.lower()
    if lowered in ADDRESS_HEADERS:
        return clean_address_header(value)
    if lowered.startswith(_RAW_HEADERS):
        return remove_controls("" if value is None else str(value))
    return clean_header_text(value)


# -- mail out: the serialised message -----------------------------------------------------------


def checked_addresses(field: str, addresses: Sequence[Address]) -> list[Address]:
    """The addresses with their display names decoded, each part refused if it hides a control."""
    checked = []
    for address in addresses:
        for part in (address.display_name, address.username, address.domain):
            check_header_text(f"{field} address", part)
        try:
            # Whitespace runs become one space: where the email package folds after a non-ASCII
            # space it may encode the comma that follows (a recipient vanishes; check_wire refuses).
            name = " ".join(decode_fully(address.display_name).split())
            checked.append(Address(display_name=name, username=address.username, domain=address.domain))
        except (ValueError, TypeError) as exc:
            raise InvalidRequest(
                f"{field}: {address.addr_spec!r} cannot be encoded: {exc}. Retype the address and "
                f"name in `{field}:` as plain text, then approve again.",
                field=field,
            ) from None
    return checked


def check_wire(
    msg: EmailMessage, *, subject: str | None = None, recipients: dict[str, list[Address]] | None = None
) -> bytes:
    """The message's bytes, after proving they carry exactly its headers (and recipients, subject).

    The header block is parsed back as a receiving server would: the same header names,
    each as often as set; no bare CR or LF and no other control byte; every value free of
    control characters once decoded; with `recipients`, each list exactly the addresses
    (and display names) meant; with `subject`, the same subject. Anything else is refused.
    """
    try:
        raw = msg.as_bytes(policy=policy.SMTP)
    except (ValueError, TypeError, UnicodeError, LookupError) as exc:
        raise _wire_refused(f"it cannot be serialised ({exc})") from None
    head = raw.split(b"\r\n\r\n", 1)[0]
    if re.search(rb"\r(?!\n)|(?<!\r)\n|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", head):
        raise _wire_refused("its header block holds a bare line break or a control byte")
    parsed = BytesHeaderParser(policy=policy.default).parsebytes(raw)
    wanted = Counter(name.lower() for name in msg)
    found = Counter(name.lower() for name in parsed)
    if found != wanted:
        extra = sorted((found - wanted).elements())
        raise _wire_refused(f"its serialised headers differ from the ones set (unexpected: {extra or 'none'})")
    try:
        values = {name.lower(): parsed[name] for name in parsed}
        if any(hides_control(str(value)) for value in values.values()):
            raise _wire_refused("a header value decodes to a control character")
        for name, meant in (recipients or {}).items():
            header = values.get(name.lower())
            got = [(_words(a.display_name), a.addr_spec.lower()) for a in header.addresses] if header else []
            if got != [(_words(a.display_name), a.addr_spec.lower()) for a in meant]:
                raise _wire_refused(f"its {name} recipients differ from the ones meant")
    except (ValueError, TypeError, AttributeError):  # the email package refuses to parse an address part
        raise _wire_refused("a header of it cannot be parsed back") from None
    # A literal encoded word in the subject may go out as it is or decoded, depending on the Python version.
    if subject is not None and _words(str(values.get("subject", ""))) not in (
        _words(subject),
        _words(decode_fully(subject)),
    ):
        raise _wire_refused("its serialised subject differs from the one meant")
    return raw


def _words(text: str) -> str:
    # Folding may add or drop whitespace between encoded words (the email package's phrase parser
    # keeps a space RFC 2047 says to drop); what counts is every other character.
    return "".join(text.split())


def _wire_refused(why: str) -> InvalidRequest:
    return InvalidRequest(
        f"The message was not sent: {why} (header injection refused). Retype the subject and the "
        "recipients' names in the frontmatter as plain text, one line each, then approve again.",
        reason="header_check",
    )
