"""Labelled drafts for `h0 eval`'s judge: for each reply of the owner's in the world that answers a person's
email, a set of candidate drafts and, for each, whether a person would send it as it is — and if not, why.

The owner's own reply is send-ready, and so are the drafts a person sends without a second look: the same
reply with another greeting or sign-off ("Hello" for "Hi"), the same answer in other words, the reply with
one line of ordinary courtesy added. Not send-ready, each with the failure a person names:

| variant | the draft | failure |
|---|---|---|
| truncated | stops mid-sentence, about half-way | missed ask |
| answer-dropped | the answer to the email left out, the rest kept | missed ask |
| wrong-fact | one fact changed (a day, an amount, a time) | wrong fact |
| invented-fact | a deadline added that nobody agreed (for a reply that holds no fact) | wrong fact |
| commitment | the answer said the other way round ("leider nicht") | wrong commitment |
| placeholder | a fact left as `[FILL: …]` | placeholder |
| other-language | the whole reply in English (German and French replies) or German (English ones) | voice |
| padded | wrapped in stock courtesy of a model's | padding |

The labeller's knowledge of the owner's sentences is scripts/world/candidate_phrases.py; the judge is never
given it. Deterministic: the world's labels and mailbox decide every candidate (no random draw).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.world import candidate_phrases as phrases
from scripts.world.judge import Read
from scripts.world.model import Truth
from scripts.world.persona import PEOPLE, Person

BY_ADDRESS = {p.address: p for p in PEOPLE}
_DU_FORMS = re.compile(r"\b(?:du|dir|dich|dein\w*)\b", re.IGNORECASE)
_TU_FORMS = re.compile(r"\b(?:tu|te|toi|ton|ta|tes)\b|\bt'", re.IGNORECASE)
_MARKER = re.compile(r"^(?:[-*•–] |\d+[.)] )")


@dataclass(frozen=True)
class Pair:
    """One reply of the owner's and the email it answers."""

    reply: Truth
    email: Truth
    email_text: str  # as `h0 import` reads it (quoted history included)
    known: str  # the notes a good reply needs (the email's truth names them), as text
    person: Person


@dataclass(frozen=True)
class Candidate:
    reply: str  # the truth's name of the owner's reply
    variant: str
    draft: str
    send_ready: bool
    failure: str | None  # the failure a person names (h0.drafting.sendready.Failure's words)
    email: str
    reference: str
    known: str
    lang: str


def eval_pairs(reads: Sequence[Read], vault: Path) -> list[Pair]:
    """The owner's replies of the world that answer a person's email (the message just before them in their thread)."""
    by_thread: dict[str, list[Read]] = {}
    for read in reads:
        by_thread.setdefault(read.truth.thread, []).append(read)
    pairs: list[Pair] = []
    for thread in by_thread.values():
        thread.sort(key=lambda r: r.truth.date)
        for before, read in itertools.pairwise(thread):
            truth, email = read.truth, before.truth
            if not truth.sent or not truth.reply_text or email.sent or email.category != "person":
                continue
            person = BY_ADDRESS.get(email.sender)
            if person is None:
                continue
            known = "\n\n".join(_note(vault, note) for note in email.notes)
            pairs.append(Pair(truth, email, before.body, known, person))
    pairs.sort(key=lambda p: p.reply.date)
    return pairs


def _note(vault: Path, rel: str) -> str:
    try:
        return (vault / rel).read_text(encoding="utf-8")
    except OSError:
        return ""


def candidates(pairs: Iterable[Pair]) -> list[Candidate]:
    return [c for pair in pairs for c in _for_pair(pair)]


def _split(truth: Truth) -> tuple[str, str, str]:
    """(opener line, body, sign-off paragraph) of the owner's reply, as its truth's shape says it is laid out."""
    paragraphs = (truth.reply_text or "").split("\n\n")
    tail = paragraphs.pop() if truth.shape.get("sign_off", "none") != "none" and len(paragraphs) > 1 else ""
    head = "\n\n".join(paragraphs)
    if truth.shape.get("opener", "none") == "none":
        return "", head, tail
    first, _, rest = head.partition("\n")
    return first, rest.strip("\n"), tail


def _join(opener: str, body: str, tail: str) -> str:
    return "\n\n".join(part for part in (opener, body, tail) if part.strip())


def _formal(pair: Pair) -> bool:
    text = pair.reply.reply_text or ""
    if pair.person.lang == "de" and _DU_FORMS.search(text):
        return False
    if pair.person.lang == "fr" and _TU_FORMS.search(text):
        return False
    return pair.person.formal


def _for_pair(pair: Pair) -> list[Candidate]:
    reply = pair.reply.reply_text or ""
    lang = pair.person.lang
    opener, body, tail = _split(pair.reply)
    known = [s for s in phrases.SENTENCES if s in body]
    out: list[tuple[str, str, bool, str | None]] = [("own", reply, True, None)]

    light = _light(opener, tail)
    if light != (opener, tail):
        out.append(("light", _join(light[0], body, light[1]), True, None))
    paraphrased = body
    for sentence in known:
        paraphrased = paraphrased.replace(sentence, phrases.SENTENCES[sentence][0])
    paraphrased = re.sub(r"^- ", "• ", paraphrased, flags=re.MULTILINE)
    if paraphrased != body:
        out.append(("paraphrase", _join(opener, paraphrased, tail), True, None))
    courtesy = phrases.COURTESY[(lang, _formal(pair))]
    out.append(("courtesy", _join(opener, f"{body}\n\n{courtesy}", tail), True, None))

    words = body.split(" ")
    if len(body.split()) >= 6:
        cut = max(3, len(words) * 55 // 100)
        while cut < len(words) - 1 and words[cut - 1].rstrip().endswith((".", "!", "?", ":")):
            cut += 1
        out.append(("truncated", _join(opener, " ".join(words[:cut]).rstrip(" ,;:"), ""), False, "missed ask"))
    answers = [s for s in known if phrases.SENTENCES[s][2] is not None or s in phrases.WRONG]
    if answers:
        dropped = body
        for sentence in answers:
            dropped = dropped.replace(sentence, "")
        dropped = "\n\n".join(p.strip() for p in dropped.split("\n\n") if p.strip())
        if re.search(r"\w", dropped):
            out.append(("answer-dropped", _join(opener, dropped, tail), False, "missed ask"))
    wrong = next((s for s in known if s in phrases.WRONG), None)
    if wrong is not None:
        out.append(("wrong-fact", _join(opener, body.replace(wrong, phrases.WRONG[wrong]), tail), False, "wrong fact"))
        out.append(("placeholder", _join(opener, body.replace(wrong, phrases.FILL[wrong]), tail), False, "placeholder"))
    else:
        first, _, rest = body.partition("\n\n")
        invented = (
            f"{first} {phrases.INVENTED[lang]}" if not _MARKER.match(first) else f"{phrases.INVENTED[lang]}\n{first}"
        )
        out.append(
            ("invented-fact", _join(opener, "\n\n".join(p for p in (invented, rest) if p), tail), False, "wrong fact")
        )
        holed = "[FILL: your answer]" + ("\n\n" + rest if rest else "")
        out.append(("placeholder", _join(opener, holed, tail), False, "placeholder"))
    negated = next((s for s in known if phrases.SENTENCES[s][2] is not None), None)
    if negated is not None:
        said = phrases.SENTENCES[negated][2] or ""
        out.append(("commitment", _join(opener, body.replace(negated, said), tail), False, "wrong commitment"))
    translated = _translated(pair, opener, body, tail, known)
    if translated is not None:
        out.append(("other-language", translated, False, "voice"))
    before, after = phrases.PADDING[(lang, _formal(pair))]
    out.append(("padded", _join(opener, f"{before}\n\n{body}\n\n{after}", tail), False, "padding"))
    return [
        Candidate(pair.reply.name, variant, draft, ready, failure, pair.email_text, reply, pair.known, lang)
        for variant, draft, ready, failure in out
    ]


def _light(opener: str, tail: str) -> tuple[str, str]:
    word = opener.split(" ", 1)[0]
    if word in phrases.LIGHT_GREETING and opener.endswith(","):
        opener = phrases.LIGHT_GREETING[word] + opener[len(word) :]
    lines = tail.split("\n")
    if lines and lines[0] in phrases.LIGHT_SIGN_OFF:
        lines[0] = phrases.LIGHT_SIGN_OFF[lines[0]]
    return opener, "\n".join(lines)


def _translated(pair: Pair, opener: str, body: str, tail: str, known: list[str]) -> str | None:
    """The reply in the other language, when every sentence of it is one the labeller knows."""
    rest = body
    out = body
    for sentence in sorted(known, key=len, reverse=True):
        rest = rest.replace(sentence, "")
        out = out.replace(sentence, phrases.SENTENCES[sentence][1])
    for item, other in sorted(phrases.ITEMS.items(), key=lambda kv: -len(kv[0])):
        if re.search(rf"^(?:[-*•–] |\d+[.)] ){re.escape(item)}$", out, re.MULTILINE):
            rest = re.sub(rf"(?m)^((?:[-*•–] |\d+[.)] )){re.escape(item)}$", r"\1", rest)
            out = re.sub(
                rf"(?m)^((?:[-*•–] |\d+[.)] )){re.escape(item)}$", lambda m, other=other: m.group(1) + other, out
            )
    if re.search(r"[^\W\d_]", _MARKER.sub("", "\n".join(_MARKER.sub("", line) for line in rest.split("\n")))):
        return None  # a sentence the labeller cannot translate
    target = "de" if pair.person.lang == "en" else "en"
    first = pair.person.first
    if opener:
        opener = (phrases.THANKS if opener.startswith(("Thanks", "Danke", "Merci")) else phrases.GREETING)[target]
        opener = opener.format(first=first)
    lines = tail.split("\n")
    if tail and not lines[0].startswith("Lena"):
        lines[0] = phrases.SIGN_OFF[target] if "Lena" not in lines[0] else f"{phrases.SIGN_OFF[target]} Lena"
    return _join(opener, out, "\n".join(lines))


def hand_written(path: Path) -> list[Candidate]:
    """The hand-written drafts of `hard_cases/eval_drafts.jsonl`: real shapes of a model's drafts, each labelled."""
    import json

    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            c = json.loads(line)
            out.append(
                Candidate(
                    c["name"],
                    "hand-written",
                    c["draft"],
                    c["send_ready"],
                    c["failure"],
                    c["email"],
                    c["reply"],
                    c["known"],
                    c["lang"],
                )
            )
    return out


@dataclass
class Agreement:
    """How often the judge agrees with the labels: send-ready or not, and (where both say not) on the failure."""

    agreed: int = 0
    total: int = 0
    kind_agreed: int = 0  # labelled not send-ready, judged not send-ready, and the labelled failure among the judge's
    kind_total: int = 0
    by_variant: dict[str, list[int]] | None = None  # variant: [agreed, total]
    disagreed: list[str] | None = None  # "reply/variant"

    @property
    def share(self) -> float:
        return self.agreed / self.total if self.total else 1.0

    @property
    def kind_share(self) -> float:
        return self.kind_agreed / self.kind_total if self.kind_total else 1.0

    def line(self, name: str) -> str:
        return (
            f"{name:<22} agreement {self.share:6.1%}  ({self.agreed}/{self.total}); the failure named: "
            f"{self.kind_share:.1%} ({self.kind_agreed}/{self.kind_total})"
        )


def agreement(found: Iterable[Candidate]) -> Agreement:
    """`h0 eval`'s judge (h0.drafting.sendready.judge_draft) on each candidate, against its label."""
    from h0.drafting.sendready import judge_draft

    score = Agreement(by_variant={}, disagreed=[])
    for c in found:
        verdict = judge_draft(c.draft, c.reference, email=c.email, known=c.known)
        right = verdict.send_ready == c.send_ready
        score.total += 1
        score.agreed += right
        counts = score.by_variant.setdefault(c.variant, [0, 0])  # type: ignore[union-attr]
        counts[0] += right
        counts[1] += 1
        if not right:
            score.disagreed.append(f"{c.reply}/{c.variant}")  # type: ignore[union-attr]
        if not c.send_ready and not verdict.send_ready and c.failure:
            score.kind_total += 1
            score.kind_agreed += c.failure in {f.value for f in verdict.failures}
    return score
