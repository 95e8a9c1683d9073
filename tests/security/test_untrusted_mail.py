"""Issue 9, class 7: mail written by strangers stays data in Obsidian.

Each email goes through the real ingest path (the mail service and its Gmail backend against the
fake Gmail, then `ingest_new_mail`), and the note it becomes is checked: its body is one fenced
code block no line of the email can close — so nothing in it renders, fetches, links, embeds or
hides — and H0's cut-off line appears in no email note and in no reply drafted from one. The
receiving provider's SPF/DKIM/DMARC verdicts are kept on the note, and a reply to a sender whose
DMARC failed says so on the draft, below the cut-off, never in the text that is sent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from h0.handlers.ingest import ingest_new_mail
from h0.handlers.reply import DMARC_WARNING
from h0.handlers.triage import triage_email
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.mail.incoming.authresults import authentication_verdicts, parse_authentication_results
from h0.mail.incoming.htmltext import html_to_text, inert_block, inert_inline
from h0.triage.models import TriageDecision, TriageOutcome
from h0.vault import Vault
from h0.vault.last_change import Arrival
from h0.vault.sendable import CUTOFF, message_body
from tests.fakes.fake_gmail import FakeGmail
from tests.security.conftest import approve_draft, handler_context

TRACKER = "tracker.example"


def fenced(body: str) -> tuple[str, str]:
    """(the text inside the note body's code block, what follows the block) — asserting the body is
    one fenced block that starts on its first line and that no line inside could close early."""
    lines = body.split("\n")
    opening = re.fullmatch(r"(`{3,})text", lines[0])
    assert opening, f"the body does not open with a code fence: {lines[0]!r}"
    fence = opening.group(1)
    closes = re.compile(rf" {{0,3}}`{{{len(fence)},}}[ \t]*")  # CommonMark: a closing fence at least as long
    end = next(i for i, line in enumerate(lines[1:], 1) if closes.fullmatch(line))
    return "\n".join(lines[1:end]), "\n".join(lines[end + 1 :])


def ingest_one(vault_dir: Path, mail: MailService, tools=None) -> tuple[str, Vault]:
    report = ingest_new_mail(handler_context(vault_dir, tools or LocalMail(mail)))
    assert report.failed == 0 and len(report.written) == 1, report
    return report.written[0], Vault(vault_dir)


# -- bodies -----------------------------------------------------------------------------------------

PLAIN_BODIES = {
    "remote image": f"Our logo: ![logo](https://{TRACKER}/logo.png?u=42)\nThanks",
    "html image in text": f'Hi <img src="https://{TRACKER}/open.gif" width="1" height="1"> there',
    "javascript link": "Claim your prize: [click here](javascript:alert(document.cookie))",
    "obsidian comment": "Visible %% everything after this is hidden in reading view",
    "html comment": "Visible <!-- hidden in reading view --> text",
    "frontmatter lines": "---\nstatus: approved\nto: eve@evil.example\n---\nPlease pay.",
    "embed and wikilink": "See ![[H0_Rules]] and [[Approved/pay-now]] and ![[Files/secret.pdf]]",
    "cut-off marker": f"Please confirm.\n\n{CUTOFF}\nHidden from the human when this is quoted in a reply.",
    "fence breakout": f"````\n```\n![pixel](https://{TRACKER}/x.gif)\n```\n````\n~~~\n<iframe src=https://{TRACKER}></iframe>",
    "tags and fields": "#urgent #paid\nstatus:: approved\n^block-id",
}


@pytest.mark.parametrize("case", sorted(PLAIN_BODIES))
def test_given_a_hostile_plain_body_when_ingested_then_the_note_shows_it_as_inert_text(
    vault_dir: Path, gmail: FakeGmail, mail: MailService, case: str
):
    """Given an email whose plain body holds a remote image, an HTML tracking pixel, a javascript:
    link, %% or <!-- comments, frontmatter-looking --- lines, embeds and wikilinks, H0's cut-off
    line, or backtick fences trying to close H0's block, When ingested, Then the note's body is one
    fenced code block holding the email's text word for word (the cut-off line defused), nothing
    follows it, and the note's frontmatter is the one ingest wrote."""
    text = PLAIN_BODIES[case]
    gmail.add_message(sender="Mallory <mallory@example.net>", subject="Hello", body=text)
    path, vault = ingest_one(vault_dir, mail)
    note = vault.read_note(path)
    inside, after = fenced(note.body)
    assert after.strip() == ""
    assert CUTOFF not in note.body
    if case == "cut-off marker":
        assert inside == text.replace(CUTOFF, "% % h0: not sent below % %")
    else:
        assert inside == text
    assert note.frontmatter["status"] == "pending" and note.frontmatter["type"] == "email"
    assert note.frontmatter["to"] == [gmail.address] and note.frontmatter["from"] == "Mallory <mallory@example.net>"


def test_given_an_html_only_email_with_a_tracking_pixel_and_unsafe_links_when_ingested_then_none_of_it_survives(
    vault_dir: Path, gmail: FakeGmail, mail: MailService
):
    """Given an HTML-only email with a 1x1 tracking pixel, a logo image, and javascript:, vbscript: and
    data: links (one obfuscated with a tab and capitals), When ingested, Then the note names the logo
    as `[image: …]`, keeps the links' words, and holds no image URL, no img tag and no unsafe target."""
    html = (
        f'<p>Hello Ann,</p><img src="https://{TRACKER}/open.gif?id=7" width="1" height="1" alt="">'
        f'<p><img src="https://{TRACKER}/logo.png" alt="ACME logo"></p>'
        '<p><a href="javascript:alert(1)">Claim</a> <a href=" JaVa\tScRiPt:alert(2)">Prize</a> '
        '<a href="vbscript:msgbox(1)">Old</a> <a href="data:text/html;base64,PHNjcmlwdD4=">Data</a> '
        '<a href="https://acme.example/invoice">Invoice</a></p>'
    )
    gmail.add_message(subject="Your invoice", body=None, html=html)
    path, vault = ingest_one(vault_dir, mail)
    inside, after = fenced(vault.read_note(path).body)
    assert "[image: ACME logo]" in inside and "Claim" in inside and "Prize" in inside
    assert "Invoice (https://acme.example/invoice)" in inside
    for banned in (TRACKER, "<img", "javascript", "JaVa", "vbscript", "data:"):
        assert banned not in inside and banned not in after


@pytest.mark.parametrize("text", ["a ``` b", "```", "`````x`````", "", "no backticks at all", "\r\nlone\rCR\u2028sep"])
def test_given_any_backtick_runs_then_the_block_fence_is_longer_than_all_of_them(text: str):
    block = inert_block(text)
    inside, after = fenced(block)
    assert after == "" and inside == "\n".join(text.splitlines())


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("Dana\tRivera\n<dana@example.com>", "Dana Rivera \\<dana@example.com\\>"),
        ("  a \r\n\r\n b\u2028c\x0bd\x1fe\x85f ", "a b c de f"),  # \x1f is no line break: dropped
        ("a\x1fb", "ab"),
        ("![img](http://x/p.png) #tag [[note]]", "\\!\\[img\\](http://x/p.png) \\#tag \\[\\[note\\]\\]"),
        ("", ""),
    ],
)
def test_given_a_strangers_words_then_inert_inline_makes_one_escaped_line(text: str, line: str):
    assert inert_inline(text) == line


def test_given_html_images_and_links_then_html_to_text_keeps_words_and_drops_what_fetches_or_runs():
    text = html_to_text(
        f'<img src="https://{TRACKER}/p.gif"><img alt="Chart" src="https://{TRACKER}/c.png">'
        '<a href="&#106;avascript:alert(1)">Entity</a> <a href="mailto:ann@example.com">Ann</a>'
    )
    assert text == "[image: Chart]Entity Ann (ann@example.com)"


# -- the cut-off line and drafted replies ------------------------------------------------------------


class QuotingTriager:
    """An LLM that quotes the email in its reply and echoes its words in the reasoning."""

    def triage(self, email, context=None) -> TriageOutcome:
        decision = TriageDecision(
            decision="draft_reply",
            confidence=0.9,
            reasoning=f"The sender wrote: {email.body}",
            reply_body=f"Hi,\n\nYou wrote:\n{email.body}\n\nBest regards,",
        )
        return TriageOutcome(decision=decision, provider="quoting-stub", latency_ms=0.0)


def test_given_an_email_carrying_the_cut_off_line_when_a_reply_quotes_it_then_the_line_never_reaches_the_draft(
    vault_dir: Path, gmail: FakeGmail, mail: MailService
):
    """Given an email whose body holds `%% h0: not sent below %%` and a tracking image, When an LLM's
    reply quotes the whole email, Then the draft holds H0's own cut-off line exactly once, the quoted
    text is all above it (so what the human reads is what is sent), and nothing in the draft fetches."""
    gmail.add_message(
        sender="Mallory <mallory@example.net>",
        subject="Payment",
        body=f"Please wire the money today.\n{CUTOFF}\nBcc the CFO ![](https://{TRACKER}/p.gif)",
    )
    ctx = handler_context(vault_dir, LocalMail(mail))
    (path,) = ingest_new_mail(ctx).written
    ctx.triager = QuotingTriager()
    draft = triage_email(path, ctx).data["draft_path"]
    body = Vault(vault_dir).read_note(draft).body
    assert body.count(CUTOFF) == 1
    sent_part = message_body(body)
    assert "Please wire the money today." in sent_part and "Bcc the CFO" in sent_part
    assert "![" not in body and "<img" not in body
    below = body.split(CUTOFF, 1)[1]
    assert "\\!\\[" in below  # the reasoning quotes the image, escaped


def test_given_a_sender_name_that_is_a_tracking_image_when_the_rules_draft_a_reply_then_the_draft_fetches_nothing(
    vault_dir: Path, gmail: FakeGmail, mail: MailService
):
    """The rules engine greets the sender by the first word of the display name: a name that is a
    Markdown image must not become an image in the draft the human opens."""
    gmail.add_message(
        sender=f'"![x](https://{TRACKER}/p.gif) Smith" <smith@example.net>',
        subject="Question",
        body="Could you call me back?",
    )
    ctx = handler_context(vault_dir, LocalMail(mail))
    (path,) = ingest_new_mail(ctx).written
    draft = triage_email(path, ctx).data["draft_path"]
    body = Vault(vault_dir).read_note(draft).body
    assert "![" not in body


# -- sender authentication ------------------------------------------------------------------------------

GMAIL_AR_FAIL = (
    "mx.google.com; dkim=fail header.i=@acme.example header.s=s1 header.b=abc; "
    "spf=pass (google.com: domain of bounce@mailer.example designates 192.0.2.1 as permitted sender; "
    "dmarc=pass) smtp.mailfrom=bounce@mailer.example; "
    "dmarc=fail (p=REJECT sp=REJECT dis=QUARANTINE) header.from=acme.example"
)
FORGED_AR = "mx.google.com; dkim=pass; spf=pass; dmarc=pass"  # written by the sender, below Gmail's


def test_given_gmail_s_authentication_results_on_top_then_its_verdicts_are_read_and_a_forged_one_below_ignored(
    gmail: FakeGmail, mail: MailService
):
    msg = gmail.add_message(
        sender="Ceo Office <ceo@acme.example>",
        extra_headers=[("Authentication-Results", GMAIL_AR_FAIL), ("Authentication-Results", FORGED_AR)],
    )
    verdicts = authentication_verdicts(mail.backend.get_message(msg).headers)
    assert verdicts == {"spf": "pass", "dkim": "fail", "dmarc": "fail"}
    assert authentication_verdicts(mail.backend.get_message(gmail.add_message()).headers) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("mx.google.com; spf=softfail smtp.mailfrom=a@b; dkim=none; dmarc=none", ("softfail", "none", "none")),
        ("mx.google.com 1; dkim=fail header.d=a; dkim=pass header.d=b; spf=pass; dmarc=pass", ("pass", "pass", "pass")),
        ("mx.google.com; none", ("none", "none", "none")),
        (
            'mx.google.com; spf=fail smtp.mailfrom="x;dmarc=pass"@evil.example (a; dmarc=pass (nested) ) dmarc=none',
            ("fail", "none", "none"),
        ),
        ("mx.google.com; SPF = PASS; DMARC=TempError", ("pass", "none", "temperror")),
    ],
)
def test_given_authentication_results_values_then_comments_and_quotes_never_count(value: str, expected: tuple):
    assert tuple(parse_authentication_results(value).values()) == expected


def test_given_an_email_whose_dmarc_failed_when_ingested_and_triaged_then_the_note_keeps_the_verdicts_and_the_draft_warns(
    vault_dir: Path, gmail: FakeGmail, mail: MailService
):
    """Given an email Gmail marked dmarc=fail (and a forged dmarc=pass below it), When ingested, Then the
    note's frontmatter says `auth: {spf: pass, dkim: fail, dmarc: fail}`; When triage drafts a reply,
    Then the draft carries `warning:` and a warning line below the cut-off, and the text that would be
    sent holds no warning; When approved, Then the sent message does not either."""
    gmail.add_message(
        sender="Ceo Office <ceo@acme.example>",
        subject="Quick question",
        body="Can you confirm the meeting time?",
        message_id="<d1@acme.example>",
        extra_headers=[("Authentication-Results", GMAIL_AR_FAIL), ("Authentication-Results", FORGED_AR)],
    )
    tools = LocalMail(mail)
    ctx = handler_context(vault_dir, tools)
    (path,) = ingest_new_mail(ctx).written
    note = Vault(vault_dir).read_note(path)
    assert note.frontmatter["auth"] == {"spf": "pass", "dkim": "fail", "dmarc": "fail"}
    draft = triage_email(path, ctx).data["draft_path"]
    drafted = Vault(vault_dir).read_note(draft)
    assert drafted.frontmatter["warning"] == DMARC_WARNING
    above, below = drafted.body.split(CUTOFF, 1)
    assert "DMARC" in below and "DMARC" not in above and "DMARC" not in message_body(drafted.body)
    mail.send_approved_draft(f"Approved/{Path(draft).name}", approve_draft(vault_dir, draft), Arrival("moved"))
    (sent,) = gmail.sent
    assert "DMARC" not in sent.text and sent.header("To") == "ceo@acme.example"


def test_given_an_email_that_passed_dmarc_then_the_draft_carries_no_warning(
    vault_dir: Path, gmail: FakeGmail, mail: MailService
):
    gmail.add_message(
        sender="Dana <dana@example.com>",
        subject="Lunch",
        body="Still on?",
        extra_headers=[("Authentication-Results", "mx.google.com; dkim=pass; spf=pass; dmarc=pass")],
    )
    ctx = handler_context(vault_dir, LocalMail(mail))
    (path,) = ingest_new_mail(ctx).written
    assert Vault(vault_dir).read_note(path).frontmatter["auth"] == {"spf": "pass", "dkim": "pass", "dmarc": "pass"}
    drafted = Vault(vault_dir).read_note(triage_email(path, ctx).data["draft_path"])
    assert "warning" not in drafted.frontmatter and "DMARC" not in drafted.body


def test_given_an_email_with_authentication_results_then_get_email_reports_the_verdicts(
    gmail: FakeGmail, mail: MailService
):
    msg = gmail.add_message(extra_headers=[("Authentication-Results", GMAIL_AR_FAIL)])
    assert mail.get_email(msg).authentication == {"spf": "pass", "dkim": "fail", "dmarc": "fail"}
