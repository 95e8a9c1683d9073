"""A reply's own words: quoted history and signatures stripped, greeting and sign-off found.

Quoted history ("On Mon, Dana wrote:", "-----Original Message-----", "Am … schrieb …") and
signatures ("--", "Sent from my iPhone", "Kind regards, …") are cut by `mail-parser-reply`, a
maintained parser with the headers and sign-offs of a dozen languages, before anything is
learned from a reply or quoted to a model. The greeting ("Hi Dana,") and the sign-off
("Cheers,") are then read from the first and last short lines of what is left.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from mailparser_reply import EmailMessage, EmailReplyParser
from mailparser_reply.constants import MAIL_LANGUAGES

# The parser's languages: headers and signatures of each are recognised (English always).
LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt", "sv", "pl", "cs", "da", "ja")
MAX_PARSE_CHARS = 50_000  # of a message: the reply is at its top; the parser is regex-heavy
# A line longer than this is never taken for a reply header ("On … wrote:"): the parser's header patterns
# take time in the square of a line's length (a stranger's 48 KB line starting "On " held the GIL ~70 s).
MAX_HEADER_LINE = 400
MAX_GREETING_CHARS = 60
MAX_SIGN_OFF_CHARS = 40

# fmt: off
_GREETING_WORDS = (
    "hi", "hello", "hey", "dear", "good morning", "good afternoon", "good evening", "morning", "greetings",
    "hallo", "liebe", "lieber", "sehr geehrte", "sehr geehrter", "guten tag", "moin", "servus", "hej", "hoi",
    "bonjour", "salut", "chère", "cher", "hola", "estimado", "estimada", "buenos días", "ciao", "buongiorno",
    "gentile", "olá", "caro", "cara", "beste", "geachte", "dag", "witam", "dzień dobry", "hei", "yo",
)
_SIGN_OFF_WORDS = (
    "best", "best regards", "kind regards", "regards", "warm regards", "warmly", "cheers", "thanks", "thank you",
    "many thanks", "thanks again", "all the best", "sincerely", "yours sincerely", "yours faithfully", "yours",
    "talk soon", "speak soon", "take care", "br", "rgds", "thx", "ta", "love", "with thanks",
    "viele grüße", "beste grüße", "liebe grüße", "mit freundlichen grüßen", "freundliche grüße", "grüße", "lg", "vg",
    "gruß", "herzliche grüße", "cordialement", "bien à vous", "bien cordialement", "amitiés", "bises",
    "saludos", "un saludo", "atentamente", "un abrazo", "cordiali saluti", "saluti", "un saluto",
    "met vriendelijke groet", "groeten", "abraços", "atenciosamente", "med vänlig hälsning", "hälsningar",
    "pozdrawiam", "s pozdravem", "med venlig hilsen",
)
# fmt: on
_GREETING = re.compile(
    r"^(?:" + "|".join(re.escape(w) for w in sorted(_GREETING_WORDS, key=len, reverse=True)) + r")\b.{0,50}$",
    re.IGNORECASE,
)
_SIGN_OFF = re.compile(
    r"^(?:" + "|".join(re.escape(w) for w in sorted(_SIGN_OFF_WORDS, key=len, reverse=True)) + r")\b[ \w.!,]{0,25}$",
    re.IGNORECASE,
)
# Where the parser's reply headers can begin: each of its header patterns starts at a line's start, at a
# newline, or (Danish, "-----Oprindelig meddelelse-----") at a dash (tests/drafting/test_reply_text.py).
_HEADER_STARTS = re.compile(r"^|\n|-", re.MULTILINE)
_SIGNATURE_STARTS = re.compile(r"^|\n(?=\n)", re.MULTILINE)
_YEAR = "年"  # in every Japanese reply header
_local = threading.local()


class _HeadersAtLineStarts:
    """The parser's header pattern, tried only where a header can begin: the same `findall`, without
    trying two dozen languages' headers at every character of a long line (most of a reply's cost).

    `unless_han` is the same pattern without the Japanese "2026年3月3日(月) … :" header, used for a
    text without "年" (it cannot match there; its `(?!.*…)` scans the whole line at every start)."""

    def __init__(self, pattern: re.Pattern[str], unless_han: re.Pattern[str] | None = None) -> None:
        self.pattern = pattern
        self.unless_han = unless_han or pattern

    def findall(self, text: str) -> list[tuple[str, ...]]:
        pattern = self.pattern if _YEAR in text else self.unless_han
        found: list[tuple[str, ...]] = []
        after = 0  # matches do not overlap: the next one starts where the last ended
        tried = -1
        for candidate in _HEADER_STARTS.finditer(text):
            start = candidate.start()
            if start < after or start == tried:
                continue
            tried = start
            end = text.find("\n", start + 1)
            if (end if end >= 0 else len(text)) - start > MAX_HEADER_LINE:
                continue  # no reply header is this long; trying one costs the square of the line (a stranger's)
            match = pattern.match(text, start)
            if match is not None:  # the groups of the other alternatives are empty either way: none is kept
                found.append(tuple(group or "" for group in match.groups()))
                after = max(match.end(), start + 1)
        return found


class _SignatureAtLineStarts:
    """The parser's signature pattern, tried only where one can begin: a line's start or a newline
    before another (its Outlook separator, "\\n\\n____"). A match runs to the text's end, so the
    parser's `search` finds the same signature: it may begin earlier on the blank space before that
    line, which the parser strips off."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern

    def search(self, text: str) -> re.Match[str] | None:
        tried = -1
        for candidate in _SIGNATURE_STARTS.finditer(text):
            start = candidate.start()
            if start == tried:
                continue
            tried = start
            match = self.pattern.match(text, start)
            if match is not None:
                return match
        return None


class _NoDisclaimers:
    """Disclaimers are not looked for: latest_reply keeps them in the reply (the parser's `full_body`)."""

    @staticmethod
    def findall(text: str) -> list[str]:
        return []


def _without(pattern: re.Pattern[str], alternative: str | None) -> re.Pattern[str] | None:
    """`pattern` without one of its top-level alternatives (None when it is not there exactly once)."""
    if alternative is None or pattern.pattern.count(alternative + "|") != 1:
        return None
    return re.compile(pattern.pattern.replace(alternative + "|", ""), pattern.flags)


def _parser() -> EmailReplyParser:
    parser = getattr(_local, "parser", None)
    if parser is None:  # one per thread, with the patterns compiled once (a message would compile its own)
        parser = _local.parser = EmailReplyParser(languages=list(LANGUAGES))
        model = EmailMessage(text="", languages=list(parser.languages))
        _local.patterns = {
            "_header_regex": _HeadersAtLineStarts(
                model.HEADER_REGEX, _without(model.HEADER_REGEX, MAIL_LANGUAGES["ja"].get("wrote_header"))
            ),
            "_signature_regex": _SignatureAtLineStarts(model.SIGNATURE_REGEX),
            "_disclaimers_regex": _NoDisclaimers(),
        }
    return parser


def _read(text: str) -> EmailMessage:
    """`EmailReplyParser.read`, with this thread's compiled patterns (and no disclaimers: unused here)."""
    parser = _parser()
    return EmailMessage(text=text, languages=list(parser.languages), **_local.patterns).read()


@dataclass(frozen=True, slots=True)
class ReplyParts:
    """A message split into what its author wrote now: greeting, body, sign-off, and the name after it."""

    greeting: str | None
    body: str  # without greeting, sign-off and signature
    sign_off: str | None
    signed: str | None  # the line(s) after the sign-off: usually the author's name

    @property
    def text(self) -> str:
        """The reply as written, without quoted history or signature block (greeting and sign-off kept)."""
        parts = [self.greeting or "", self.body, "\n".join(p for p in (self.sign_off, self.signed) if p)]
        return "\n\n".join(p for p in parts if p).strip()


def latest_reply(text: str) -> tuple[str, str]:
    """The newest reply of a message (quoted history cut) and its signature block ("" when none)."""
    message = _read(text[:MAX_PARSE_CHARS])
    if not message.replies:
        return "", ""
    reply = message.replies[0]
    return reply.full_body.strip(), reply.signatures.strip()


def strip_quoted(text: str) -> str:
    """The newest reply's words: quoted history and signature cut (what a prompt may quote)."""
    reply, signature = latest_reply(text)
    if signature and reply.endswith(signature):
        reply = reply[: -len(signature)]
    return reply.strip()


def split_reply(text: str) -> ReplyParts:
    """Find the greeting and the sign-off of a reply (quoted history and signature cut first)."""
    reply, signature = latest_reply(text)
    if signature and reply.endswith(signature):
        reply = reply[: -len(signature)].rstrip()
    lines = [line.strip() for line in reply.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    greeting = None
    if lines and len(lines[0]) <= MAX_GREETING_CHARS and _GREETING.match(lines[0]):
        greeting = lines.pop(0)
    sign_off, signed = _sign_off(lines, signature)
    body = "\n".join(lines).strip()
    return ReplyParts(greeting, body, sign_off, signed)


def _sign_off(lines: list[str], signature: str) -> tuple[str | None, str | None]:
    """Take the sign-off (and the name lines under it) off the end of `lines`, or read it from the signature."""
    if signature:
        first, _, rest = signature.partition("\n")
        if len(first) <= MAX_SIGN_OFF_CHARS and _SIGN_OFF.match(first.strip()):
            name = rest.strip().split("\n", 1)[0].strip() or None
            return first.strip(), name
    while lines and not lines[-1]:
        lines.pop()
    # The last paragraph: "Cheers,\nAlex" or just "Cheers," (at most 3 short lines).
    start = len(lines)
    while start > 0 and lines[start - 1]:
        start -= 1
    block = lines[start:]
    if not block or len(block) > 3:
        return None, None
    for index, line in enumerate(block):
        if len(line) <= MAX_SIGN_OFF_CHARS and _SIGN_OFF.match(line):
            name = " ".join(block[index + 1 :]).strip() or None
            if name is not None and len(name) > MAX_SIGN_OFF_CHARS:
                return None, None
            del lines[start + index :]
            while lines and not lines[-1]:
                lines.pop()
            return line, name
    return None, None


def looks_like_greeting(line: str) -> bool:
    return len(line) <= MAX_GREETING_CHARS and _GREETING.match(line.strip()) is not None


def looks_like_sign_off(line: str) -> bool:
    return len(line) <= MAX_SIGN_OFF_CHARS and _SIGN_OFF.match(line.strip()) is not None
