"""A reply's own words: quoted history and signatures stripped, greeting and sign-off found.

Quoted history ("On Mon, Dana wrote:", "-----Original Message-----", "Am … schrieb …", "Le … a écrit :")
is cut where `mail-parser-reply`, a maintained parser with the reply headers of a dozen languages, cuts
it (`parsed_reply`: exactly the parser's cut). What H0 keeps of the reply is then its own rule, not the
parser's guess at a signature: the parser takes a bullet list ("- first") or any line that opens with
"Thanks", "Best regards" or "Merci" for the start of a signature and drops everything after it (a
reply opening "Thanks, Dana – …" lost its whole body). Here a signature is only what a person reads as
one: the block under a "-- " line, or a device footer at the end ("Sent from my iPhone", "Von meinem
iPhone gesendet", "Envoyé de mon iPhone", "Get Outlook for iOS"). A bottom-posted reply (the quoted
message first, the answer below it) is the answer below; a message that is only a quote has no reply.
The greeting ("Hi Dana,") and the sign-off ("Cheers,") are then read from the first and last short
lines of what is left. Measured on the labelled world (docs/judgments.md): every owner's reply exactly.
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
    "pozdrawiam", "s pozdravem", "med venlig hilsen", "bonne journée", "belle journée", "bonne soirée",
    "à bientôt", "merci", "merci beaucoup", "danke", "vielen dank", "bis bald", "schöne grüße", "danke und viele grüße",
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


def parsed_reply(text: str) -> tuple[str, str]:
    """The parser's own cut: its newest reply (quoted history cut, lines trimmed) and its guess at a signature."""
    message = _read(text[:MAX_PARSE_CHARS])
    if not message.replies:
        return "", ""
    reply = message.replies[0]
    return reply.full_body.strip(), reply.signatures.strip()


def latest_reply(text: str) -> tuple[str, str]:
    """The newest reply of a message (quoted history cut; its signature block included) and that signature
    block ("" when none): the answer under a bottom-posted quote, nothing for a message that is only a quote."""
    text = _one_blank_line_at_most(text[:MAX_PARSE_CHARS])
    below = _below_leading_quote(text)
    if below is not None:
        if not below.strip():
            return "", ""
        text = below
    reply, _ = parsed_reply(text)
    reply = _without_rule_below(reply)
    return reply, _signature(reply)


_QUOTED = re.compile(r"^\s*>")
_FOOTER = re.compile(
    r"^(?:sent from (?:my |mail for |outlook|yahoo|proton)|sent with |get outlook for |von meinem .{1,30} gesendet|"
    r"gesendet von (?:meinem )?|envoyé (?:de|depuis) (?:mon |outlook)|envoyé avec |obtenir outlook pour )",
    re.IGNORECASE,
)


def _one_blank_line_at_most(text: str) -> str:
    """`text` with each run of blank lines made one: the parser tries its signature pattern from every blank
    line over all the blank lines below it (50,000 blank lines held it for minutes); its cut is the same."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() or (kept and kept[-1].strip()):
            kept.append(line)
    return "\n".join(kept)


def _below_leading_quote(text: str) -> str | None:
    """For a message that opens with quoted history (a reply header over "> " lines, or "> " lines): the text
    below it ("" when nothing is); None for a message that opens with its own words."""
    lines = text.replace("\r\n", "\n").split("\n")
    index = _next_text(lines, 0)
    if index is None:
        return None
    if not _QUOTED.match(lines[index]):
        if len(lines[index]) > MAX_HEADER_LINE:
            return None  # never a header (see MAX_HEADER_LINE)
        # Gmail wraps a long "On … wrote:" onto a second line: the header may run on into it.
        head = "\n".join(line.strip() for line in lines[index : index + 2] if len(line) <= MAX_HEADER_LINE)
        _parser()
        header = _local.patterns["_header_regex"].pattern.match(head)
        if header is None:
            return None
        quote = _next_text(lines, index + 1 + head[: header.end()].rstrip("\n").count("\n"))
        if quote is None or not _QUOTED.match(lines[quote]):
            return None  # a header above unquoted history (Outlook's, a forward): the parser's own split
        index = quote
    while index < len(lines) and (not lines[index].strip() or _QUOTED.match(lines[index])):
        index += 1
    return "\n".join(lines[index:])


# The rule a client writes above the history it quotes ("-----Ursprüngliche Nachricht-----", "-----Message
# d'origine-----", Outlook's "_____"): the parser cuts at the header under it, which leaves the rule in the reply.
_RULE = re.compile(r"^(?:-{3,}[^-\n]{1,40}-{3,}|[_-]{10,})$")


def _without_rule_below(reply: str) -> str:
    lines = reply.split("\n")
    while lines and (not lines[-1].strip() or _RULE.match(lines[-1].strip())):
        lines.pop()
    return "\n".join(lines)


def _next_text(lines: list[str], index: int) -> int | None:
    """The index of the first line from `index` on that is not blank (None when there is none)."""
    for at in range(index, len(lines)):
        if lines[at].strip():
            return at
    return None


def _signature(reply: str) -> str:
    """The signature block at the end of `reply` (lines already trimmed by the parser): from a "-- " line,
    else the device footers ("Sent from my iPhone") that end it; "" when none."""
    lines = reply.split("\n")
    for index, line in enumerate(lines):
        if line.strip() == "--":  # "-- ", trimmed
            return "\n".join(lines[index:]).strip()
    end = len(lines)
    start = end
    while start > 0 and (not lines[start - 1].strip() or _FOOTER.match(lines[start - 1].strip())):
        start -= 1
    while start < end and not lines[start].strip():
        start += 1
    return "\n".join(lines[start:]).strip()


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
