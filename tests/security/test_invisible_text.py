"""Nothing invisible is sent: what leaves equals what Obsidian shows in reading view (issue 20, class 4).

Hostile inputs first: every way a note, an agent or a model can put text in a draft that
reading view shows as nothing — format and tag characters, zero-width and bidi characters,
soft hyphens, link reference definitions, empty links, hidden HTML, LaTeX that draws
nothing, embeds — is refused with a reason naming the line and the fix. Then the look-alikes
that are visible and must still be sendable (emoji sequences, Persian, flags, code, footnotes,
dollar amounts), both MIME parts, the LLM's text before it becomes a draft, and the real
pipeline: such a draft moved into Approved/ comes back to Drafts/ with the reason and nothing
leaves.
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from h0.drafting.grounding import clean_reply
from h0.errors import InvalidRequest
from h0.mail.compose.drafts import parse_draft
from h0.mail.compose.mime import compose
from h0.mail.deception.visible import find_in_markdown, find_in_text
from h0.mail.deception.visible_html import find_in_html
from h0.mail.models import DirectSend
from h0.vault.note import Note
from h0.vault.sendable import CUTOFF, Sendable
from tests.pipeline.harness import approve, events, frontmatter, outbox, running_daemon, wait_until, write_draft

GOOD = {"to": "ann@example.com", "subject": "Re: the invoice"}


def parse(body: str, **frontmatter: Any) -> Sendable:
    return parse_draft(Note("Approved/reply.md", {**GOOD, **frontmatter}, body, "hash-1"))


def refusal(body: str) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        parse(body + f"\n{CUTOFF}\nReplying to [[x]]\n")
    return caught.value


# --- hostile: characters that render as nothing -------------------------------------------------

TAGS = "".join(chr(0xE0000 + ord(c)) for c in "Bcc eve@evil.example")

INVISIBLE_CHARACTERS = {
    "zero-width space": ("Hi Ann,\nPay to IBAN DE12\u200b3456\n", 2, "U+200B"),
    "zero-width non-joiner in Latin": ("Hi Ann,\n\nPa\u200cid.\n", 3, "U+200C"),
    "zero-width joiner in Latin": ("Hi\u200dAnn\n", 1, "U+200D"),
    "word joiner": ("Hi Ann\u2060\n", 1, "U+2060"),
    "BOM": ("\ufeffHi Ann\n", 1, "U+FEFF"),
    "soft hyphen": ("Hi Ann,\nthe pay\u00adment\n", 2, "U+00AD"),
    "right-to-left override": ("Open invoice\u202efdp.exe\n", 1, "U+202E"),
    "left-to-right isolate": ("Hi \u2066Ann\u2069\n", 1, "U+2066"),
    "right-to-left mark": ("Hi\u200f Ann\n", 1, "U+200F"),
    "Arabic letter mark": ("Hi\u061c Ann\n", 1, "U+061C"),
    "tag characters (ASCII smuggling)": (f"Hi Ann{TAGS}\n", 1, "U+E0042"),
    "variation selectors carrying bytes": (
        "Thanks 😀" + "".join(chr(0xFE00 + i) for i in range(8)) + "\n",
        1,
        "U+FE01",
    ),
    "supplementary variation selectors": ("ok \U000e0100\U000e0101\n", 1, "U+E0100"),
    "Hangul filler": ("Hi\n\u3164\n", 2, "U+3164"),
    "blank Braille": ("Hi\n\u2800\u2800\u2800\n", 2, "U+2800"),
    "combining grapheme joiner": ("Hi A\u034fnn\n", 1, "U+034F"),
    "interlinear annotation": ("Hi \ufff9Ann\ufffasecret\ufffb\n", 1, "U+FFF9"),
    "Mongolian vowel separator": ("Hi\u180eAnn\n", 1, "U+180E"),
    "line separator": ("Hi\u2028Ann\n", 1, "U+2028"),
}


@pytest.mark.parametrize(("body", "line", "code"), INVISIBLE_CHARACTERS.values(), ids=INVISIBLE_CHARACTERS.keys())
def test_given_a_character_that_renders_as_nothing_then_the_draft_is_refused_naming_line_and_fix(
    body: str, line: int, code: str
):
    """Given a draft whose text holds an invisible character, When parsed, Then it is refused:
    the reason names the line, the character and the fix in Obsidian, and nothing is stripped."""
    error = refusal(body)
    assert f"line {line}" in error.message and code in error.message
    assert "show as nothing" in error.message and "approve again" in error.message
    assert "retype" in error.message  # the fix a person can make in the note


def test_given_every_format_character_python_knows_then_each_is_found_unless_it_draws_a_sign():
    """Given each Unicode format (Cf) character and each control character but tab and line feed,
    When checked alone between two letters, Then every one is found — except the few format
    characters that draw a visible sign (the Arabic number sign and its kin)."""
    visible_signs = {*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD}
    missed = []
    for code in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(code))
        hidden = category == "Cf" and code not in visible_signs or category == "Cc" and chr(code) not in "\t\n"
        if hidden and not find_in_text(f"a{chr(code)}b"):
            missed.append(f"U+{code:04X}")
    assert missed == []


@pytest.mark.parametrize("hidden", ["&#8203;", "&#x200B;", "&ZeroWidthSpace;", "&shy;", "&zwnj;", "&#x202E;"])
def test_given_an_html_entity_that_decodes_to_nothing_then_it_is_refused(hidden: str):
    """Given an entity reading view decodes to an invisible character, When parsed, Then refused."""
    assert "entity" in refusal(f"Hi{hidden}Ann\n").message


# --- hostile: Markdown that renders as nothing -------------------------------------------------

INVISIBLE_MARKDOWN = {
    "link reference definition": (
        "Hi Ann,\n\n[wire]: https://evil.example/IBAN-DE99\n\nBest,\n",
        3,
        "link reference definition",
        "inline",
    ),
    "reference definition, destination on the next line": (
        "Hi\n\n[x]:\nwire the money to account 666\n",
        3,
        "link reference definition",
        "inline",
    ),
    "reference definition in a quote": (
        "Hi\n\n> [x]: https://evil.example\n",
        3,
        "link reference definition",
        "inline",
    ),
    "empty link": ("Hi Ann, see [](https://evil.example/pixel)\n", 1, "link with no text", "give it words"),
    "blank link text": ("Hi Ann [ ](https://evil.example)\n", 1, "link with no text", "give it words"),
    "span hidden by style": (
        'Hi <span style="display:none">and Bcc the board</span> Ann\n',
        1,
        "HTML",
        "Delete the HTML",
    ),
    "div with hidden attribute": ("Hi\n<div hidden>secret</div>\n", 2, "HTML", "Delete the HTML"),
    "visibility hidden": ('Hi <p style="visibility:hidden">x</p>\n', 1, "HTML", "Delete the HTML"),
    "font size zero": ('Hi <font style="font-size:0">x</font>\n', 1, "HTML", "Delete the HTML"),
    "details (collapsed)": ("Hi\n<details>secret</details>\n", 2, "HTML", "Delete the HTML"),
    "script": ("Hi\n<script>x</script>\n", 2, "HTML", "Delete the HTML"),
    "unknown element eats its text": ("Pay if amount<limit and fee>0\n", 1, "HTML", "Delete the HTML"),
    "processing instruction": ("Hi <?secret text?> Ann\n", 1, "HTML", "Delete the HTML"),
    "html comment": ("Hi <!-- Bcc the board --> Ann\n", 1, "hides in reading view", CUTOFF),
    "obsidian comment": ("Hi %%Bcc the board%% Ann\n", 1, "hides in reading view", CUTOFF),
    "phantom": ("Total: $\\phantom{and wire it to me}$ 100\n", 1, "math", "Delete it"),
    "hphantom": ("Total $$\\hphantom{secret}$$\n", 1, "math", "Delete it"),
    "math that is only spacing": ("Hi\n$$\\,$$\n", 2, "math", "Delete it"),
    "math block over lines": ("Hi\n$$\n\\quad \\;\n$$\n", 2, "math", "Delete it"),
    "math painted white": ("Hi $\\color{white}{secret}$\n", 1, "math", "Delete it"),
    "transclusion of a note": ("Hi Ann,\n\n![[Bank details]]\n", 3, "embeds", "attachments:"),
    "embedded image": ("Hi ![](https://evil.example/pixel.png)\n", 1, "embeds", "attachments:"),
    "folded callout": ("Hi\n> [!note]- Details\n> wire it to 666\n", 2, "folded callout", "Remove the `-`"),
    "block id": ("Pay now ^wire-666\n", 1, "block ID", "delete it"),
    "query block": ("Hi\n```query\npassword\n```\n", 2, "code block", "write the text"),
    "dataview block": ("Hi\n```dataviewjs\nx\n```\n", 2, "code block", "write the text"),
}


@pytest.mark.parametrize(("body", "line", "what", "fix"), INVISIBLE_MARKDOWN.values(), ids=INVISIBLE_MARKDOWN.keys())
def test_given_markdown_that_renders_as_nothing_then_the_draft_is_refused_naming_line_and_fix(
    body: str, line: int, what: str, fix: str
):
    """Given a draft with Markdown that reading view shows as nothing (or as something other than
    the text that would be sent), When parsed, Then it is refused naming the line and the fix."""
    error = refusal(body)
    assert what in error.message and f"line {line}" in error.message and fix in error.message
    assert "approve again" in error.message


def test_given_several_kinds_at_once_then_every_one_is_listed():
    """Given a zero-width space, a reference definition and an embed, When parsed, Then three
    problems, each with its line."""
    error = refusal("Hi\u200b\n[x]: http://a.example\n![[n]]\n")
    problems = error.details["problems"]
    assert len(problems) == 3
    assert any("line 1" in p for p in problems) and any("line 2" in p for p in problems)
    assert any("line 3" in p for p in problems)


@pytest.mark.parametrize("flood", [20_000, pytest.param(200_000, marks=pytest.mark.stress)])
def test_given_a_flood_of_invisible_characters_then_the_refusal_is_quick_and_bounded(flood: int):
    """Given a flood of tag characters on one line, When parsed, Then refused with one sentence that
    names the line (not one per character). 200,000 of them (seconds of CPU) is a stress test."""
    error = refusal("Hi " + chr(0xE0041) * flood + "\n")
    assert len(error.message) < 1000 and "line 1" in error.message


# --- visible text that must stay sendable ---------------------------------------------------------

SENDABLE = {
    "emoji ZWJ sequences": "Great work 👩‍💻 ❤️‍🔥 🏳️‍🌈 👩🏽‍🚀 👨‍👩‍👧\n",
    "emoji presentation selector": "Thanks ❤️ ☺️\n",
    "Persian with ZWNJ": "سلام، می\u200cخواهم بیایم\n",
    "Hindi with ZWJ": "क्\u200dष\n",
    "flag of England": "Go 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f!\n",
    "ideographic variation sequence": "葛\U000e0100\n",
    "Arabic number sign": "\u0600١٢٣\n",
    "code block with HTML and a definition": "Run:\n```\n<span hidden>x</span>\n[x]: y\n```\n",
    "code span": "Type `<div hidden>` and `$\\phantom{x}$` literally.\n",
    "footnote": "As agreed[^1].\n\n[^1]: In the call on Monday.\n",
    "links with text, autolinks": "See [the plan](https://example.com) or <https://example.com> or <a@example.com>.\n",
    "formatting HTML": 'It is <b>due</b> <u>today</u><br>\n<a href="https://example.com">link</a>\n',
    "dollar amounts": "It costs $5 and $10, or $5-$10 in total; US$3.\n",
    "visible math": "The area is $\\pi r^2$ and $$E = mc^2$$\n",
    "callout (unfolded)": "> [!note] Remember\n> the meeting\n",
    "escaped brackets": "\\[x\\]: not a definition and \\<span hidden>\n",
    "caret in text": "2^10 is 1024 and x ^ y\n",
    "CRLF line ends": "Hi Ann,\r\n\r\nThanks.\r\n",
    "tabs": "Item\tPrice\n",
    "non-breaking and wide spaces": "10\u00a0kg and 全\u3000角\n",
}


@pytest.mark.parametrize("body", SENDABLE.values(), ids=SENDABLE.keys())
def test_given_text_that_is_visible_then_it_is_sendable(body: str):
    """Given text that looks odd to a scanner but reading view shows, When parsed, Then sendable."""
    assert parse(body).body.strip()
    assert find_in_markdown(body) == []


def test_given_invisible_text_only_below_the_cut_off_then_the_draft_is_sendable():
    """Given H0's notes below the cut-off line holding every kind, When parsed, Then sendable."""
    draft = parse(f"Hi Ann,\n{CUTOFF}\n[x]: y\n\u200b ![[n]] <span hidden>z</span>\n")
    assert draft.body == "Hi Ann,\n"


# --- both MIME parts ------------------------------------------------------------------------------


def _compose(body: str = "Hi Ann,\n", html: str | None = None):
    from email.headerregistry import Address

    return compose(to=[Address("", "ann", "example.com")], subject="Hi", body=body, html_body=html)


def test_given_a_text_part_with_an_invisible_character_then_compose_refuses_it():
    """Given a message (free content, no note) whose text part holds a bidi override, When
    composed, Then refused naming the part and the line; nothing is built."""
    with pytest.raises(InvalidRequest) as caught:
        _compose("Invoice\n\u202eexe.pdf\n")
    assert "text" in caught.value.message and "line 2" in caught.value.message
    assert caught.value.details["reason"] == "invisible_text"


HIDDEN_HTML = {
    "display none": '<p>Hi</p><div style="display: none">Bcc the board</div>',
    "visibility hidden": '<p style="color:red;visibility:hidden">x</p>',
    "opacity zero": '<span style="opacity:0">x</span>',
    "font size zero": "<span style='font-size:0px'>x</span>",
    "zero height": '<div style="height:0;overflow:hidden">x</div>',
    "transparent text": '<span style="color: transparent">x</span>',
    "off screen": '<span style="position:absolute;left:-9999px">x</span>',
    "hidden attribute": "<p hidden>x</p>",
    "outlook-hidden": '<p style="mso-hide:all">x</p>',
    "comment with text": "<p>Hi</p><!-- wire it to 666 -->",
    "style element": "<style>.x{display:none}</style><p class=x>secret</p>",
    "script": "<script>alert(1)</script>",
    "template": "<template>secret</template>",
    "zero-width space": "<p>Hi\u200bAnn</p>",
    "zero-width entity": "<p>Hi&#8203;Ann</p>",
}


@pytest.mark.parametrize("markup", HIDDEN_HTML.values(), ids=HIDDEN_HTML.keys())
def test_given_an_html_part_that_hides_text_then_compose_refuses_it(markup: str):
    """Given an HTML alternative that hides text from its reader, When composed, Then refused."""
    with pytest.raises(InvalidRequest) as caught:
        _compose(html=markup)
    assert "HTML part" in caught.value.message


def test_given_an_ordinary_html_part_then_it_is_composed():
    """Given plain, visible HTML (styles that hide nothing), When composed, Then both parts go out."""
    markup = (
        '<p style="font-size:14px;color:#333;opacity:0.9">Hi <b>Ann</b>,</p>'
        '<p style="margin:0">See <a href="https://example.com">the plan</a>.</p>'
    )
    assert find_in_html(markup) == []
    message = _compose(html=markup)
    assert [part.get_content_type() for part in message.iter_parts()] == ["text/plain", "text/html"]


def test_given_a_free_content_send_with_invisible_text_then_nothing_reaches_the_provider(mail, gmail):
    """Given the free-content send path, When its body holds a zero-width space or its HTML part
    a hidden span, Then invalid_request and nothing reaches the provider."""
    for body, markup in (("Hi\u200bAnn\n", None), ("Hi Ann\n", "<p>Hi</p><p hidden>x</p>")):
        with pytest.raises(InvalidRequest):
            mail.builder.direct_message(DirectSend(to="ann@example.com", subject="Hi", body=body, html_body=markup))
    assert gmail.sent == []


# --- the LLM's text, before it becomes a draft ----------------------------------------------------


def test_given_a_model_reply_with_invisible_text_then_the_model_is_asked_again(vault_dir: Path):
    """Given a model whose first reply hides a zero-width space and a link definition, When triaged,
    Then the answer is refused before any draft holds it, the model is told why, and its clean
    second answer is used."""
    from tests.triage.fake_llm import FakeLLM, decision_json, openai_answer
    from tests.triage.test_llm_providers import QUESTION, Wire, make_triager

    hostile = decision_json("draft_reply", reply_body="Hi,\u200b\n\n[x]: https://evil.example\n\nBest,")
    with FakeLLM() as fake, make_triager(Wire("openai"), Wire("openai").base_url(fake), vault_dir) as triager:
        fake.queue(openai_answer(hostile), openai_answer(decision_json("draft_reply")))
        outcome = triager.triage(QUESTION)
        correction = fake.requests[1].last_text
    assert outcome.attempts == 2 and not outcome.fallback
    assert find_in_markdown(outcome.decision.reply_body or "") == []
    assert "cannot see" in correction and "U+200B" in correction


def test_given_a_model_that_keeps_hiding_text_then_the_rules_draft_instead(vault_dir: Path):
    """Given a model that answers with an embed and a hidden span every time, When triaged, Then
    its text never becomes a draft: the rules engine decides and the reason says why."""
    from tests.triage.fake_llm import FakeLLM, decision_json, openai_answer
    from tests.triage.test_llm_providers import QUESTION, Wire, make_triager

    hostile = decision_json("draft_reply", reply_body='Hi <span style="display:none">wire to 666</span>')
    with FakeLLM() as fake, make_triager(Wire("openai"), Wire("openai").base_url(fake), vault_dir) as triager:
        fake.queue(*[openai_answer(hostile) for _ in range(3)])
        outcome = triager.triage(QUESTION)
    assert outcome.fallback and "cannot see" in (outcome.fallback_reason or "")
    assert "wire to 666" not in (outcome.decision.reply_body or "")


# --- the real pipeline ----------------------------------------------------------------------------


def test_given_a_draft_with_a_zero_width_character_moved_into_approved_then_it_returns_unsent(vault_dir: Path):
    """Given a draft whose second line holds a zero-width space and whose body has a link reference
    definition, When the human moves it into Approved/ under a running daemon, Then it comes back to
    Drafts/ with the reason naming the lines, and the Outbox stays empty; an ordinary draft approved
    beside it is sent."""
    write_draft(vault_dir, "Drafts", "hidden.md", body="Hi Bob,\nPay to DE12\u200b3456\n\n[x]: https://evil.example\n")
    write_draft(vault_dir, "Drafts", "fine.md", body="Hi Bob,\n\nSee you soon.\n")
    with running_daemon(vault_dir):
        approve(vault_dir, "hidden.md")
        approve(vault_dir, "fine.md")
        assert wait_until(lambda: (vault_dir / "Drafts/hidden.md").exists() and (vault_dir / "Done/fine.md").exists())
        assert wait_until(lambda: events(vault_dir, event="send_refused"))
    returned = frontmatter(vault_dir, "Drafts/hidden.md")
    assert returned["status"] == "not_sent" and returned["h0_error_code"] == "invalid_request"
    assert "line 2" in returned["h0_error"] and "U+200B" in returned["h0_error"]
    assert "link reference definition" in returned["h0_error"] and "line 4" in returned["h0_error"]
    assert [m["Subject"] for m in outbox(vault_dir)] == ["Hello"]
    assert len(outbox(vault_dir)) == 1 and "See you soon" in outbox(vault_dir)[0].get_content()


@pytest.mark.parametrize(
    ("reply", "cleaned", "removed"),
    [
        ("Hi Dana,\n\nFriday at 10 works.\n\nCheers", "Hi Dana,\n\nFriday at 10 works.\n\nCheers", 0),
        ("Fri\u200bday at 10\u2060 works\u202e", "Friday at 10 works", 3),
        (
            "Caf\u00e9 at 10 \U0001f469\u200d\U0001f4bb",
            "Caf\u00e9 at 10 \U0001f469\u200d\U0001f4bb",
            0,
        ),  # a joiner stays
    ],
)
def test_given_a_models_reply_then_format_characters_are_taken_out_and_counted(reply: str, cleaned: str, removed: int):
    result = clean_reply(reply)
    assert (result.text, result.removed_invisible) == (cleaned, removed)
