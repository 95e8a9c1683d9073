"""How the owner writes, learned from their sent replies: greeting and sign-off per recipient,
typical length, formality, language — and the greeting and sign-off a new reply gets.

A reply to someone the owner has written to opens and closes the way the owner's latest
replies to them did (the most used of the last VOICE_WINDOW, ties to the newest) — replies that
spoke to them (their first To:), never mail they were only Cc'd on. A sign-off is whatever the
owner consistently ends with: a known closing ("Cheers,") or any short last paragraph ("— J.")
that recurs. Anyone else gets the profile's greeting and sign-off — or, for an email in another
language or a formal register than the profile's, H0's own in that language and register
(h0.drafting.register). Greetings are kept as templates: "Hi Dana," to Dana is learned as
"Hi {first_name},", so the overall habit carries over to a new person.

The profile's learned section is a note any MCP client can read (`profile_section`): it is learned from the
past replies the disclosure gate gave (none of a private thread), and a private person (the gate's
`Disclosure.address_private`, asked once per address) is neither listed nor learned from — the section says
how many were left out.
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from h0.drafting.pastreply import PastReply
from h0.drafting.profile import Profile, RecipientVoice, fill_names, render_learned
from h0.drafting.register import is_formal, local_voice
from h0.drafting.replytext import looks_like_sign_off

VOICE_WINDOW = 5  # the latest replies to one person that decide their greeting and sign-off
MAX_CLOSING_LINE = 40  # a learned closing is a short last paragraph: at most two lines this long
MAX_RECIPIENTS_SHOWN = 50
# fmt: off
_FORMAL = ("dear", "sehr geehrte", "sehr geehrter", "geachte", "estimado", "estimada", "gentile", "madame",
           "monsieur", "kind regards", "yours sincerely", "sincerely", "yours faithfully", "mit freundlichen grüßen",
           "cordialement", "atentamente", "cordiali saluti", "met vriendelijke groet", "respectfully")
_INFORMAL = ("hi", "hey", "hallo", "hello", "cheers", "thanks", "talk soon", "lg", "liebe grüße", "bises", "ciao",
             "salut", "hola", "best,", "best", "yo", "moin", "servus", "thx")
_LANGUAGE_WORDS = {
    "en": "the and you for with that this have will are your thanks please would could about from our can "
          "what when there not but all was been next week let know just also any they them which",
    "de": "und der die das ich sie nicht mit für ist wir ihnen danke bitte ein eine auf den dem zu auch "
          "ich habe hast du dir dich mir uns noch wie kann können gerne über oder aber wenn schon",
    "fr": "le la les et je vous pour avec est nous merci une des pas dans que qui sur mais ou votre "
          "bien être avez suis cette sont très aussi tout bonjour peux pouvez",
    "es": "el la los las y que para con por una gracias usted nos del al como pero más este esta "
          "muy también puede hola está tengo tiene sobre gracias cuando",
    "it": "il la che per con una sono grazie non della del gli di le ho hai anche come questo "
          "questa ma più tutto ciao buongiorno essere sei siamo quando",
    "nl": "de het een en van ik je voor met niet dank bedankt is dat op zijn te ook maar wat "
          "als bij heb hebben kunnen graag jullie wij",
    "pt": "o os as que para com uma obrigado não por você do da dos das em mas como muito "
          "também está tenho olá ou seu sua isso",
}
# fmt: on
_LANG_SETS = {lang: frozenset(words.split()) for lang, words in _LANGUAGE_WORDS.items()}
_LANGS_OF = {  # each common word: the languages it is common in (one look-up a word, not one a language)
    word: tuple(lang for lang, vocab in _LANG_SETS.items() if word in vocab)
    for word in frozenset().union(*_LANG_SETS.values())
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_NOT_ASCII_LETTERS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalpha()})


def language_of(text: str) -> str | None:
    """The likely language of a text by its common words ("en", "de", …), None when too short to tell."""
    # One-letter words ("a", "o", "e", "y") are in too many languages to tell them apart.
    head = text[:4000]
    # ASCII: the same words, lowered first and split at what is not a letter (~5x faster than the pattern);
    # other text is lowered word by word ("İ", one letter, lowers to two: "i" and a combining dot).
    if head.isascii():
        words = [w for w in head.lower().translate(_NOT_ASCII_LETTERS).split() if len(w) > 1]
    else:
        words = [w.lower() for w in _WORD.findall(head) if len(w) > 1]
    if len(words) < 4:
        return None
    counts = dict.fromkeys(_LANG_SETS, 0)
    for word in words:
        for lang in _LANGS_OF.get(word, ()):
            counts[lang] += 1
    ranked = sorted(counts, key=lambda k: -counts[k])
    best, second = ranked[0], ranked[1]
    # At least two common words, and clearly more than any other language has.
    return best if counts[best] >= 2 and counts[best] > counts[second] else None


def as_template(greeting: str, display_names: Sequence[str]) -> str:
    """'Hi Dana,' written to Dana Rivera → 'Hi {first_name},' (names the greeting does not use stay)."""
    out = greeting
    for name in display_names:
        words = [w for w in name.replace(",", " ").split() if "@" not in w]
        if not words:
            continue
        full = " ".join(words)
        if full and full in out and len(words) > 1:
            out = out.replace(full, "{name}")
        for word, slot in ((words[0], "{first_name}"), (words[-1], "{last_name}")):
            if len(word) > 1:
                out = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", slot, out, flags=re.IGNORECASE)
    return out


@dataclass(frozen=True, slots=True)
class LearnedVoice:
    """Everything learned from the owner's sent replies."""

    replies: int
    greeting: str | None  # the most used greeting template
    sign_off: str | None
    words: int | None  # median length of the body
    formality: str | None  # "formal", "informal" or "mixed"
    language: str | None
    recipients: tuple[RecipientVoice, ...]
    private_people: int = 0  # private people whose replies were left out (not listed, not learned from)

    def section(self) -> str:
        """The profile's learned section, as H0 writes it."""
        left_out = []
        if self.private_people:
            people = "person" if self.private_people == 1 else "people"
            left_out = ["", f"_Replies to {self.private_people} private {people} are not listed or learned from._"]
        if not self.replies:
            return render_learned(["Nothing yet: H0 fills this in from the replies you send.", *left_out])
        stamp = time.strftime("%Y-%m-%d", time.gmtime())
        lines = [
            (
                f"_H0 rewrites this section from your {self.replies} latest sent replies (updated {stamp}). "
                "Change the properties above to override it._"
            ),
            "",
        ]
        facts = [
            ("Greeting", self.greeting),
            ("Sign-off", self.sign_off),
            ("Typical length", f"{self.words} words" if self.words else None),
            ("Formality", self.formality),
            ("Language", self.language),
        ]
        lines += [f"- {label}: {_cell(value, 80)}" for label, value in facts if value]
        if self.recipients:
            lines += ["", "| recipient | greeting | sign-off | replies | latest |", "|---|---|---|---|---|"]
            for voice in self.recipients[:MAX_RECIPIENTS_SHOWN]:
                lines.append(
                    f"| {_cell(voice.address)} | {_cell(voice.greeting or '—')} | "
                    f"{_cell(voice.sign_off or '—')} | {voice.replies} | {voice.last or ''} |"
                )
        return render_learned(lines + left_out)


def _cell(text: object, limit: int = 60) -> str:
    value = " ".join(str(text).split())[:limit]
    return re.sub(r"([|\[\]<>`*_#%\\])", r"\\\1", value)


def profile_section(replies: Sequence[PastReply], private_person: Callable[[str], bool]) -> str:
    """The profile's learned section from the owner's sent replies (newest first, as the gate gave them:
    h0.drafting.past), as written into the vault: `private_person(address)` asked of the gate once per address."""
    return learn(replies, private=private_person).section()


def learn(
    replies: Sequence[PastReply],
    names: dict[str, str] | None = None,
    limit: int = 500,
    *,
    private: Callable[[str], bool] | None = None,
) -> LearnedVoice:
    """Learn the owner's voice from sent replies (newest first). `names`: display names by address,
    so greetings become templates. `private(address)`: whether it is a private person's (asked once per
    address); a reply to one is left out, and counted."""
    replies = list(replies)[:limit]
    names = names or {}
    hidden: set[str] = set()
    if private is not None:
        asked: dict[str, bool] = {}
        for address in (a for reply in replies for a in reply.to):
            if address not in asked:
                asked[address] = private(address)
        hidden = {address for address, secret in asked.items() if secret}
        replies = [reply for reply in replies if not hidden.intersection(reply.to)]
    greetings: Counter[str] = Counter()
    sign_offs: Counter[str] = Counter()
    formal = informal = 0
    lengths: list[int] = []
    languages: Counter[str] = Counter()
    per: dict[str, list[PastReply]] = {}
    for reply in replies:
        parts = reply.parts
        shown = [names.get(a, "") for a in reply.to] + [a.split("@")[0].replace(".", " ") for a in reply.to]
        if parts.greeting:
            greetings[as_template(parts.greeting, shown)] += 1
        if closing_of(reply):
            sign_offs[closing_of(reply) or ""] += 1
        lowered = f"{parts.greeting or ''} {parts.sign_off or ''}".lower()
        formal += any(w in lowered for w in _FORMAL)
        informal += any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", lowered) for w in _INFORMAL)
        if parts.body:
            lengths.append(len(parts.body.split()))
            lang = language_of(parts.body)
            if lang:
                languages[lang] += 1
        if reply.addressee:  # who the reply speaks to; never someone on Cc
            per.setdefault(reply.addressee, []).append(reply)
    recipients = []
    for address, theirs in per.items():
        window = theirs[:VOICE_WINDOW]
        recipients.append(
            RecipientVoice(
                address,
                _most_used([r.parts.greeting for r in window]),
                _owners_closing(window),
                len(theirs),
                theirs[0].link if theirs[0].path else None,
            )
        )
    recipients.sort(key=lambda r: (-r.replies, r.address))
    formality = None
    if formal or informal:
        formality = "formal" if formal > 2 * informal else "informal" if informal > 2 * formal else "mixed"
    return LearnedVoice(
        replies=len(replies),
        greeting=greetings.most_common(1)[0][0] if greetings else None,
        sign_off=_consistent(sign_offs),
        words=int(statistics.median(lengths)) if lengths else None,
        formality=formality,
        language=languages.most_common(1)[0][0] if languages else None,
        recipients=tuple(recipients),
        private_people=len(hidden),
    )


def _most_used(values: Sequence[str | None]) -> str | None:
    """The most frequent value; a tie goes to the newest (values are newest first)."""
    present = [v for v in values if v]
    if not present:
        return None
    counts = Counter(present)
    top = max(counts.values())
    return next(v for v in present if counts[v] == top)


@dataclass(frozen=True, slots=True)
class Voice:
    """The greeting and sign-off of one reply, and where they came from."""

    greeting: str
    sign_off: str  # with the signature under it, when the profile has one
    source: str  # "your last replies to dana@…" or "your profile"


def closing_of(reply: PastReply) -> str | None:
    """How one reply ends: its known sign-off ("Cheers,"), else its last paragraph when that is at most
    two short lines ("— J.", "Speak soon\nJ") — a candidate that counts once the owner repeats it."""
    if reply.parts.sign_off:
        return reply.parts.sign_off
    paragraphs = [p.strip() for p in reply.parts.body.strip().split("\n\n") if p.strip()]
    if len(paragraphs) < 2:
        return None  # the whole reply is one paragraph: no closing of its own
    lines = [line.strip() for line in paragraphs[-1].splitlines() if line.strip()]
    if not lines or len(lines) > 2 or any(len(line) > MAX_CLOSING_LINE for line in lines):
        return None
    if lines[-1].endswith(("?", ":")) or len(" ".join(lines).split()) > 6:
        return None  # a question or a sentence, not a sign-off
    return "\n".join(lines)


def _consistent(counts: Counter[str]) -> str | None:
    """The most used closing, if it is a known sign-off or recurs (a one-off last line is not a habit)."""
    if not counts:
        return None
    value, seen = counts.most_common(1)[0]
    return value if seen >= 2 or "\n" not in value and looks_like_sign_off(value) else None


def _owners_closing(window: Sequence[PastReply]) -> str | None:
    """The sign-off of these replies (newest first): the most used known one, else a recurring last paragraph."""
    known = _most_used([r.parts.sign_off for r in window])
    if known:
        return known
    return _consistent(Counter(c for c in (closing_of(r) for r in window) if c))


def voice_for(
    address: str,
    display_name: str,
    profile: Profile,
    history: Sequence[PastReply],
    *,
    formal: bool = False,
    language: str | None = None,
) -> Voice:
    """How a reply to `address` opens and closes: as the owner's latest replies that spoke to them did
    (`history`, newest first; replies they were only Cc'd on are skipped), else as the profile says —
    in the email's `language` and, when the sender wrote formally, a formal register."""
    key = address.strip().lower()
    window = [r for r in history if r.addressee == key][:VOICE_WINDOW]
    greeting = _most_used([r.parts.greeting for r in window])
    sign_off = _owners_closing(window)
    signed = (
        _most_used([r.parts.signed for r in window])
        if sign_off and _most_used([r.parts.sign_off for r in window])
        else None
    )
    source = f"your last {'reply' if len(window) == 1 else 'replies'} to {address}" if greeting or sign_off else ""
    local = _local_defaults(profile, formal, language)
    if greeting:
        # Written to this person before: their own greeting, names re-filled should the display name differ.
        greeting = fill_names(as_template(greeting, [display_name]), display_name) if display_name else greeting
    else:
        greeting = fill_names(local[0] if local else profile.greeting, display_name)
    if sign_off:
        closing, name_line = sign_off, signed
    else:
        closing, name_line = (
            (local[1] if local else profile.sign_off),
            profile.signature or (profile.name if local else ""),
        )
    if name_line and name_line not in closing:
        closing = f"{closing}\n{name_line}" if closing else name_line
    if local and not source:
        source = "H0's " + ("formal " if formal else "") + f"greeting and sign-off in {language or 'your language'}"
    return Voice(greeting, closing, source or "your profile")


def _local_defaults(profile: Profile, formal: bool, language: str | None) -> tuple[str, str] | None:
    """H0's own greeting and sign-off when the profile's do not fit: the email is in a language other
    than the profile's first, or formal while the profile's greeting is not. None: the profile's fit."""
    own = (profile.languages[0] if profile.languages else "en").lower()[:2]
    other_language = language is not None and language[:2] != own
    too_casual = formal and not is_formal(profile.greeting)
    if not (other_language or too_casual):
        return None
    return local_voice(language or own, formal)
