"""Link text that is a different address (issue 29): a draft whose link shows one URL, domain or
mail address and opens another is held at send with the reason, whoever wrote it (a model, an
agent, the owner's template) — like a look-alike domain. Then the links that must pass."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from h0.cli import main
from h0.errors import Conflict
from h0.mail.deception.linktext import check_link_texts, mismatched_links
from tests.pipeline.harness import frontmatter, outbox, write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")

HOSTILE = {
    "markdown, URL text": "[https://bank.example](https://bank-example.co)",
    "markdown, bare domain text": "Log in at [bank.example](https://bank-example.co/login).",
    "markdown, www text": "[www.bank.example](http://evil.example)",
    "markdown, a look-alike host": "[bank.example](https://b\u0430nk.example)",
    "markdown, the real name as a prefix": "[paypal.com](https://paypal.com.evil.example)",
    "markdown, user-info trick": "[https://bank.example](https://bank.example@evil.example/)",
    "markdown, scheme-relative": "[bank.example](//evil.example)",
    "markdown, angle brackets and title": '[bank.example](<https://evil.example> "Bank")',
    "markdown, reference link": "Pay at [bank.example][pay].\n\n[pay]: https://evil.example/pay",
    "markdown, mail address": "Write to [billing@bank.example](mailto:billing@evil.example)",
    "html anchor": '<a href="https://evil.example">https://bank.example</a>',
    "html anchor, nested markup, no quotes": "<a href=https://evil.example><b>bank.example</b></a>",
    "html anchor, entity-encoded text": '<a href="https://evil.example">bank&#46;example</a>',
}

FINE = {
    "words": "[our website](https://bank.example)",
    "same URL": "[https://bank.example/a](https://bank.example/b)",
    "a sub-domain of the text": "[bank.example](https://login.bank.example/x)",
    "www on one side": "[www.bank.example](https://bank.example)",
    "a file name": "[report.pdf](https://files.example/r.pdf)",
    "a relative link": "[notes](People/Ann)",
    "a name for a mail address": "[Ann](mailto:ann@bank.example)",
    "same mail address": "[ann@bank.example](mailto:ANN@bank.example?subject=hi)",
    "no link": "bank.example and https://evil.example side by side",
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_given_a_link_whose_text_is_another_address_then_it_is_held(body: str):
    with pytest.raises(Conflict) as caught:
        check_link_texts(body, path="Approved/x.md")
    assert caught.value.details["hold"] is True and caught.value.details["reason"] == "link_text_mismatch"
    assert "opens" in caught.value.message and "confirm_domains" in caught.value.message


@pytest.mark.parametrize("body", FINE.values(), ids=FINE.keys())
def test_given_honest_links_then_nothing_is_held(body: str):
    assert mismatched_links(body) == []


def test_the_html_part_of_a_direct_send_is_checked_too():
    assert mismatched_links("plain", '<p><a href="https://evil.example">https://bank.example</a></p>')


def test_a_confirmed_domain_passes():
    assert mismatched_links("[bank.example](https://bank-example.co)", confirmed=frozenset({"bank-example.co"})) == []


@pytest.mark.parametrize(
    "body",
    [
        ("[" + "a" * 900 + "](https://x.example) ") * 2000,
        ("[" + "a" * 899 + "@](https://x.example) ") * 2000,
        ("[" + "a." * 450 + "](https://x.example) ") * 2000,
        "[" * 500_000,
        "[a](" * 300_000,
        "<a href=x>" * 50_000,
    ],
    ids=["long words", "long words with @", "dotted words", "open brackets", "open links", "open anchors"],
)
def test_a_huge_body_of_link_like_text_is_checked_in_linear_time(body: str):
    started = time.perf_counter()
    mismatched_links(body)
    assert time.perf_counter() - started < 5.0  # a quadratic scan of these takes minutes


def test_given_an_approved_draft_with_a_lying_link_then_the_sweep_holds_it_with_the_reason(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    """Given a draft (written by a model, say) whose link shows https://bank.example and opens
    bank-example.co, When it is approved and swept, Then nothing is sent and it is back in Drafts/
    with the reason; When the owner confirms the domain, Then it is sent."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    body = "Hi Bob,\n\nPlease update your details at [https://bank.example](https://bank-example.co).\n"
    write_draft(vault_dir, "Approved", "pay.md", to="bob@example.com", body=body)
    assert main(["sweep"]) == 0
    held = frontmatter(vault_dir, "Drafts/pay.md")
    assert held["h0_error_code"] == "link_text_mismatch"
    assert "bank-example.co" in held["h0_error"] and "https://bank.example" in held["h0_error"]
    assert outbox(vault_dir) == []

    path = vault_dir / "Drafts/pay.md"
    text = path.read_text()
    path.write_text(text.replace("---\n", "---\nconfirm_domains: [bank-example.co]\n", 1))
    os.utime(path, (time.time() - 60, time.time() - 60))
    os.rename(path, vault_dir / "Approved/pay.md")
    assert main(["sweep"]) == 0
    assert len(outbox(vault_dir)) == 1
