"""The forward draft of a delegated email: to the colleague triage named, with a line for them and the
original included, waiting in Drafts/ for the owner's approval like any draft.

The line is written for the colleague, in the thread's language (the email's, else the sender's People note
`language:`, else the owner's first), addressing them as the owner does (du / Sie, tu / vous: the owner's
replies to them; informal when there are none) and greeting them as the owner does: "Kannst du das
übernehmen? Sabine Kranich hat mir wegen „Rechnung“ geschrieben, die Nachricht steht unten." Why H0 delegated
(its reasoning, in English) is for the owner: it stays below the cut-off line, never in the message.

Who: `delegate_to` is an address, or a name whose People note (found as a `[[link]]` is: by file
name or alias) gives the address in its `email:` property. Without an address there is no draft:
the email stays `delegated` and says how to fix it (add `email:` to the People note). The draft is
not a reply: no `reply_to_message_id`, no thread; `source:` is the email, so sending the forward
files the email in Done/ as a sent reply would.
"""

from __future__ import annotations

from h0.drafting import Drafting
from h0.drafting.profile import fill_names
from h0.drafting.register import local_voice
from h0.drafting.replytext import strip_quoted
from h0.drafting.replyvoice import owners_form
from h0.drafting.voice import VOICE_WINDOW, language_of, voice_for
from h0.handlers.reply import draft_head
from h0.mail.compose.drafts import NEXT_STEP, REVISE_HINT
from h0.mail.headers import clean_address_header, clean_header_text
from h0.mail.incoming.htmltext import block_text, defuse_cutoff, disarm_reply, inert_inline
from h0.vault import Note
from h0.vault.api import Write
from h0.vault.layout import DRAFTS
from h0.vault.sendable import CUTOFF
from h0.vault.values import named_addresses

_FWD_PREFIX = ("fwd:", "fw:", "wg:", "tr:")
# The line for the colleague, per language: (informal, formal). {who}: the sender; {subject}: the email's.
ASK: dict[str, tuple[str, str]] = {
    "en": ("Could you take this one? {who} wrote to me about “{subject}”; the message is below.",) * 2,
    "de": (
        "Kannst du das übernehmen? {who} hat mir wegen „{subject}“ geschrieben, die Nachricht steht unten.",
        "Könnten Sie das übernehmen? {who} hat mir wegen „{subject}“ geschrieben, die Nachricht steht unten.",
    ),
    "fr": (
        "Tu peux t'en occuper ? {who} m'a écrit au sujet de « {subject} » ; le message est ci-dessous.",
        "Pourriez-vous vous en occuper ? {who} m'a écrit au sujet de « {subject} » ; le message est ci-dessous.",
    ),
    "es": (
        "¿Puedes encargarte de esto? {who} me escribió sobre «{subject}»; el mensaje está abajo.",
        "¿Podría encargarse de esto? {who} me escribió sobre «{subject}»; el mensaje está abajo.",
    ),
    "it": (
        "Puoi occupartene tu? {who} mi ha scritto riguardo a «{subject}»; il messaggio è qui sotto.",
        "Potrebbe occuparsene Lei? {who} mi ha scritto riguardo a «{subject}»; il messaggio è qui sotto.",
    ),
    "nl": (
        "Kun jij dit oppakken? {who} schreef me over ‘{subject}’; het bericht staat hieronder.",
        "Kunt u dit oppakken? {who} schreef me over ‘{subject}’; het bericht staat hieronder.",
    ),
    "pt": ("Você pode cuidar disto? {who} me escreveu sobre “{subject}”; a mensagem está abaixo.",) * 2,
}
# The forwarded message's head as mail clients write it in each language (Gmail's wording).
HEAD: dict[str, tuple[str, str, str, str, str]] = {
    "en": ("---------- Forwarded message ----------", "From", "Date", "Subject", "To"),
    "de": ("---------- Weitergeleitete Nachricht ---------", "Von", "Datum", "Betreff", "An"),
    "fr": ("---------- Message transféré ---------", "De", "Date", "Objet", "À"),
}


def colleague(delegate_to: str, drafting: Drafting | None) -> tuple[str, str, str | None]:
    """(name, address, the People note's link) of whom `delegate_to` names; address "" when unknown."""
    name, address = next(iter(named_addresses(delegate_to)), ("", ""))
    if "@" in address:
        return (name or address), address.strip().lower(), None
    who = delegate_to.strip().strip("[]").strip()
    if drafting is None or not who:
        return who, "", None
    note = drafting.knowledge.resolve_link(who)
    if note is None:
        return who, "", None
    found = note.person.addresses
    return note.title, (found[0].lower() if found else ""), note.link


def forward_subject(subject: str) -> str:
    clean = clean_header_text(subject or "").strip()
    return clean if clean.lower().startswith(_FWD_PREFIX) else f"Fwd: {clean or '(no subject)'}"


def forward_draft(
    note: Note, delegate_to: str, reasoning: str, drafting: Drafting | None
) -> tuple[Write | None, str | None]:
    """The forward draft of `note` to whom `delegate_to` names (created only if absent), or (None, why not)."""
    name, address, link = colleague(delegate_to, drafting)
    if not address:
        where = f"the `email:` property of {link or f'a People note named {name!r}'}"
        return None, f"no address for {inert_inline(name or 'the colleague')}: add it to {where}, then triage again"
    facts = note.facts
    original = block_text(note.body).strip()
    language, formal = _thread_language(original, facts.sender, drafting), False
    own = local_voice(language, False) or ("Hi {first_name},", "")  # H0's own, when there is no drafting state
    greeting, sign_off = fill_names(own[0], name if "@" not in name else ""), own[1]
    if drafting is not None:
        profile, history = drafting.profile(), drafting.past.addressed_to(address, VOICE_WINDOW)
        formal = owners_form(history, language) == "formal"  # the owner's way with them; a colleague: informal
        voice = voice_for(address, name if "@" not in name else "", profile, history, formal=formal, language=language)
        greeting, sign_off = voice.greeting or greeting, voice.sign_off
    who = inert_inline(next(iter(named_addresses(facts.sender_text)), ("", ""))[0] or facts.sender or "Someone")
    subject = inert_inline(clean_header_text(facts.subject) or "(no subject)")
    context_line = ASK.get(language, ASK["en"])[1 if formal else 0].format(who=who, subject=subject)
    head = HEAD.get(language, HEAD["en"])
    header = [
        head[0],
        f"{head[1]}: {clean_address_header(facts.sender_text)}",
        f"{head[2]}: {facts.email.received_written}",  # as the email said it, not as an epoch
        f"{head[3]}: {clean_header_text(facts.subject)}",
        f"{head[4]}: {clean_address_header(', '.join(facts.email.to_written))}",  # display names kept, as written
    ]
    text = "\n\n".join(
        part for part in (greeting, context_line, sign_off, "\n".join(header) + "\n\n" + original) if part
    )
    text = disarm_reply(defuse_cutoff(text))
    file_name = note.path.rsplit("/", 1)[-1]
    path = f"{DRAFTS}/FWD_{file_name}"
    draft_fm = draft_head(f"FWD_{file_name[:-3]}", note.path, address, forward_subject(facts.subject))
    draft_fm |= {"decision": "delegate", "drafted_by": "rules"}
    body = (
        f"{text}\n\n{CUTOFF}\n"
        f"Forwarding [[{file_name[:-3]}]] to {inert_inline(name)} ({address})"
        + (f", from {link}" if link else "")
        + f" — H0's reasoning: {inert_inline(reasoning)}\n{NEXT_STEP}\n\n{REVISE_HINT}\n"
    )
    return Write(path, draft_fm, body, create_only=True), None


def _thread_language(text: str, sender: str, drafting: Drafting | None) -> str:
    """The thread's language: the email's own words', else the sender's People note `language:`, else the owner's
    first language, else English — as a code H0 has the colleague's line in."""
    found = language_of(strip_quoted(text) or text)
    if found is None and drafting is not None:
        found = drafting.person_language(sender) or next(iter(drafting.profile().languages), None)
    code = (found or "en").lower()[:2]
    return code if code in ASK else "en"
