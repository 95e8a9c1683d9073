"""How the owner writes, learned from their sent replies: greeting and sign-off per recipient,
typical length, formality, language — and the greeting and sign-off a new reply gets.

A reply to someone the owner has written to opens and closes the way the owner's latest
replies to them did (the most used of the last VOICE_WINDOW, ties to the newest). Anyone else
gets the profile's greeting and sign-off. Greetings are kept as templates: "Hi Dana," to Dana
is learned as "Hi {first_name},", so the overall habit carries over to a new person.
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from h0.drafting.past import PastReply
from h0.drafting.profile import Profile, RecipientVoice, fill_names, render_learned

VOICE_WINDOW = 5  # the latest replies to one person that decide their greeting and sign-off
MAX_RECIPIENTS_SHOWN = 50
# fmt: off
_FORMAL = ("dear", "sehr geehrte", "sehr geehrter", "geachte", "estimado", "estimada", "gentile", "madame",
           "monsieur", "kind regards", "yours sincerely", "sincerely", "yours faithfully", "mit freundlichen grüßen",
           "cordialement", "atentamente", "cordiali saluti", "met vriendelijke groet", "respectfully")
_INFORMAL = ("hi", "hey", "hallo", "hello", "cheers", "thanks", "talk soon", "lg", "liebe grüße", "bises", "ciao",
             "salut", "hola", "best,", "best", "yo", "moin", "servus", "thx")
_LANGUAGE_WORDS = {
    "en": "the and you for with that this have will are your thanks please",
    "de": "und der die das ich sie nicht mit für ist wir ihnen danke bitte",
    "fr": "le la les et je vous pour avec est nous merci une des pas",
    "es": "el la los las y que para con por una gracias usted nos",
    "it": "il la che per con una sono grazie non della del gli",
    "nl": "de het een en van ik je voor met niet dank bedankt",
    "pt": "o a os as que para com uma obrigado não por você",
}
# fmt: on
_LANG_SETS = {lang: frozenset(words.split()) for lang, words in _LANGUAGE_WORDS.items()}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def language_of(text: str) -> str | None:
    """The likely language of a text by its common words ("en", "de", …), None when too short to tell."""
    words = [w.lower() for w in _WORD.findall(text[:4000])]
    if len(words) < 5:
        return None
    counts = {lang: sum(1 for w in words if w in vocab) for lang, vocab in _LANG_SETS.items()}
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] >= 2 else None


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

    def for_address(self, address: str) -> RecipientVoice | None:
        key = address.strip().lower()
        return next((r for r in self.recipients if r.address == key), None)

    def section(self) -> str:
        """The profile's learned section, as H0 writes it."""
        if not self.replies:
            return render_learned(["Nothing yet: H0 fills this in from the replies you send."])
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
        return render_learned(lines)


def _cell(text: object, limit: int = 60) -> str:
    value = " ".join(str(text).split())[:limit]
    return re.sub(r"([|\[\]<>`*_#%\\])", r"\\\1", value)


def learn(replies: Sequence[PastReply], names: dict[str, str] | None = None, limit: int = 500) -> LearnedVoice:
    """Learn the owner's voice from sent replies (newest first). `names`: display names by address,
    so greetings become templates."""
    replies = list(replies)[:limit]
    names = names or {}
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
        if parts.sign_off:
            sign_offs[parts.sign_off] += 1
        lowered = f"{parts.greeting or ''} {parts.sign_off or ''}".lower()
        formal += any(w in lowered for w in _FORMAL)
        informal += any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", lowered) for w in _INFORMAL)
        if parts.body:
            lengths.append(len(parts.body.split()))
            lang = language_of(parts.body)
            if lang:
                languages[lang] += 1
        for address in reply.to[:1]:  # the first To: is who the reply speaks to
            per.setdefault(address, []).append(reply)
    recipients = []
    for address, theirs in per.items():
        window = theirs[:VOICE_WINDOW]
        recipients.append(
            RecipientVoice(
                address,
                _most_used([r.parts.greeting for r in window]),
                _most_used([r.parts.sign_off for r in window]),
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
        sign_off=sign_offs.most_common(1)[0][0] if sign_offs else None,
        words=int(statistics.median(lengths)) if lengths else None,
        formality=formality,
        language=languages.most_common(1)[0][0] if languages else None,
        recipients=tuple(recipients),
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


def voice_for(address: str, display_name: str, profile: Profile, history: Sequence[PastReply]) -> Voice:
    """How a reply to `address` opens and closes: as the owner's latest replies to them did (`history`,
    newest first), else as the profile says."""
    window = list(history)[:VOICE_WINDOW]
    greeting = _most_used([r.parts.greeting for r in window])
    sign_off = _most_used([r.parts.sign_off for r in window])
    signed = _most_used([r.parts.signed for r in window]) if sign_off else None
    source = f"your last {'reply' if len(window) == 1 else 'replies'} to {address}" if greeting or sign_off else ""
    if greeting:
        # Written to this person before: their own greeting, names re-filled should the display name differ.
        greeting = fill_names(as_template(greeting, [display_name]), display_name) if display_name else greeting
    else:
        greeting = fill_names(profile.greeting, display_name)
    closing = sign_off or profile.sign_off
    name_line = signed if sign_off else profile.signature
    if name_line:
        closing = f"{closing}\n{name_line}" if closing else name_line
    return Voice(greeting, closing, source or "your profile")
