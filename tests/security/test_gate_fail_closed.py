"""Issue 40, the gate itself, with a real `h0 mcp vault` process as the agent's server: a note whose frontmatter
does not parse (`title: Therapy: session 3`, an unclosed quote, a tab, a bad indent) is private until it
parses, and its error names the line, never its words; a `#private` tag in the text and a nested
`private/health` tag make a note private as Obsidian's tag pane shows them (`#privateer` does not); and
a private person's mail (a People note marked private names the address) is private like a private thread.
Nothing of any of them reaches the MCP client: not listed, not searched, not related, not read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import H0_BIN, subprocess_env

pytestmark = pytest.mark.anyio

THERAPIST = "quinn@care.example"
# Each private note, its text, and the distinctive words it holds (never in any answer).
HOSTILE = {
    "Notes/colon.md": "---\ntitle: Therapy: session 3\nkind: plan\n---\nZQCOLON grief, Atlas merger\n",
    "Notes/quote.md": '---\nsubject: "ZQQUOTE never closed\nkind: plan\n---\nZQQUOTE Atlas merger\n',
    "Notes/tab.md": "---\nkind: plan\n\tmood: ZQTAB\n---\nZQTAB Atlas merger\n",
    "Notes/indent.md": "---\nkind: plan\n  mood: ZQINDENT\n bad: x\n---\nZQINDENT Atlas merger\n",
    "Notes/inline.md": "---\nkind: plan\n---\nZQINLINE Atlas merger, see me #private\n",
    "Notes/nested.md": "---\nkind: plan\ntags: [work, private/health]\n---\nZQNESTED Atlas merger\n",
    "Notes/inline-nested.md": "---\nkind: plan\n---\nZQINLNEST Atlas merger #Health/Private\n",
    "People/Dr Quinn.md": f"---\nemail: {THERAPIST}\nkind: plan\n---\nZQPERSON Atlas merger #private\n",
    "Needs_Action/EMAIL_t1.md": (
        f"---\ntype: email\nfrom: Dr Quinn <{THERAPIST}>\nsubject: ZQSESSION Atlas merger\nthread_id: T-care\n"
        "message_id: m-t1\nkind: plan\n---\n```text\nZQSESSION Atlas merger\n```\n"
    ),
    "Drafts/REPLY_t1.md": (
        f'---\nto: {THERAPIST}\nsubject: "Re: session"\nstatus: pending_approval\nkind: plan\n---\n'
        "ZQREPLY Atlas merger\n"
    ),
    "Done/EMAIL_t0.md": (  # someone else in the therapist's thread: private by the thread
        "---\ntype: email\nfrom: Ann <ann@x.example>\nthread_id: T-care\nmessage_id: m-t0\nkind: plan\n---\n"
        "```text\nZQPEER Atlas merger\n```\n"
    ),
}
PUBLIC = {
    "Notes/public.md": "---\nkind: plan\n---\nAtlas merger public plan #privateer #private-beta `#private`\n",
    "Notes/code.md": "---\nkind: plan\n---\n```\n#private\n```\nAtlas merger in code\n",
    "People/Dana.md": "---\nemail: dana@acme.example\nkind: plan\n---\nDana, Atlas merger lead\n",
}
UNPARSEABLE = ("Notes/colon.md", "Notes/quote.md", "Notes/tab.md", "Notes/indent.md")


def words(text: str) -> set[str]:
    return {w for w in text.replace(",", " ").split() if w.startswith("ZQ")}


SECRETS = set().union(*(words(text) for text in HOSTILE.values())) | {"Therapy", "session 3", THERAPIST}


def leaks(answer: Any) -> set[str]:
    if isinstance(answer, dict):
        answer = {key: value for key, value in answer.items() if key != "address"}  # the question, echoed
    text = json.dumps(answer)
    return {secret for secret in SECRETS if secret.lower() in text.lower()}


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    return dict(json.loads(result.content[0].text))


def vault_with(vault_dir: Path) -> None:
    for rel, text in {**HOSTILE, **PUBLIC}.items():
        path = vault_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


async def test_an_mcp_client_never_sees_an_unparseable_tagged_or_private_persons_note(vault_dir: Path):
    vault_with(vault_dir)
    params = StdioServerParameters(
        command=H0_BIN,
        args=["mcp", "vault"],
        env=subprocess_env(VAULT_PATH=str(vault_dir), H0_STATE_DIR=os.environ["H0_STATE_DIR"]),
    )
    answers: list[Any] = []
    async with Client(params) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(tool, arguments)
            answer = error_of(result) if result.is_error else result.structured_content
            answers.append(answer)
            return answer

        # Listed: only the public notes, with or without a filter; nothing private named as skipped.
        for arguments in ({}, {"filter": "kind:plan"}, {"filter": ["kind:plan", "tags:private/health"]}):
            listed = await call("list_notes", {"directory": "", "recursive": True, **arguments})
            assert sorted(listed["notes"]) == sorted(PUBLIC) and listed["total"] == len(PUBLIC), arguments
            assert listed["skipped"] == []
        for folder in ("Notes", "People", "Needs_Action", "Drafts", "Done"):
            listed = await call("list_notes", {"directory": folder})
            assert set(listed["notes"]) <= set(PUBLIC), folder
        # Searched: no private note's words, and the phrase they share finds the public notes only.
        for secret in sorted(SECRETS):
            assert (await call("search_notes", {"query": secret}))["notes"] == [], secret
        found = await call("search_notes", {"query": "Atlas merger"})
        assert {n["path"] for n in found["notes"]} == set(PUBLIC)
        # Related: by text and by a public note, never a private one.
        related = await call("related_notes", {"text": " ".join(sorted(SECRETS)) + " Atlas merger", "limit": 50})
        assert {n["path"] for n in related["notes"]} <= set(PUBLIC)
        related = await call("related_notes", {"path": "Notes/public.md", "limit": 50})
        assert {n["path"] for n in related["notes"]} <= set(PUBLIC)
        assert (await call("notes_for_address", {"address": THERAPIST}))["notes"] == []
        # Read: refused; the unparseable ones with the line to fix, never their words.
        for rel in HOSTILE:
            refused = await call("read_note", {"path": rel})
            if rel in UNPARSEABLE:
                assert refused["error"] == "parse_error" and "line" in refused["message"], refused
            else:
                assert refused["error"] == "permission_denied" and refused["details"]["reason"] == "private", rel
        many = await call("read_notes", {"paths": list(HOSTILE)})
        assert many["notes"] == [] and len(many["errors"]) == len(HOSTILE)
        for rel in ("Needs_Action/EMAIL_t1.md", "Drafts/REPLY_t1.md", *UNPARSEABLE):
            assert (await call("draft_context", {"path": rel}))["error"] in ("permission_denied", "parse_error"), rel
        assert (await call("related_notes", {"path": "Notes/colon.md"}))["error"] == "parse_error"
        # No write may make them less private: the unparseable note cannot be replaced by a public one.
        refused = await call("write_note", {"path": "Notes/colon.md", "frontmatter": {}, "body": "now public"})
        assert refused["error"] == "permission_denied" and refused["details"]["reason"] == "private"
        refused = await call("write_note", {"path": "Notes/inline.md", "frontmatter": {"kind": "plan"}, "body": "x"})
        assert refused["error"] == "permission_denied"  # the `#private` dropped from its text
        refused = await call("update_frontmatter", {"path": "Drafts/REPLY_t1.md", "set": {"to": "x@y.example"}})
        assert refused["error"] == "permission_denied"  # away from the private person
    assert not [(answer, leaks(answer)) for answer in answers if leaks(answer)]
    assert "Therapy: session 3" in (vault_dir / "Notes/colon.md").read_text()


# A conversation whose only private note is one whose frontmatter does not parse: its thread keys are read from
# its raw lines, so the conversation stays private (fail closed) — by its thread id, its message id, a reply's
# `in_reply_to`, or a draft's `source`.
BROKEN_THREADS = {
    "Done/EMAIL_b1.md": "---\ntype: email\ntitle: Therapy: session 3\nthread_id: 'T-broken'\nmessage_id: <m-b1@x>\n---\nx\n",
    "Done/EMAIL_b2.md": '---\ntype: Email\nsubject: "ZQOPENQUOTE\nmessage_id: m-b2\n---\nx\n',
    "Notes/b3.md": "---\nmood: low: very\nsource: [[EMAIL_b4]]  # the call\n---\nx\n",
}
BROKEN_MATES = {
    "Needs_Action/EMAIL_n1.md": "---\ntype: email\nthread_id: T-broken\nmessage_id: m-n1\nkind: plan\n---\nZQMATEONE\n",
    "Drafts/REPLY_n2.md": "---\nto: a@x.example\nin_reply_to: <m-b2>\nkind: plan\n---\nZQMATETWO\n",
    "Needs_Action/EMAIL_b4.md": "---\ntype: email\nmessage_id: m-b4\nkind: plan\n---\nZQMATETHREE\n",
}


async def test_a_thread_whose_only_private_note_does_not_parse_stays_private_for_an_mcp_client(vault_dir: Path):
    """Given notes whose frontmatter does not parse but whose lines name a thread id, a message id or a `source`,
    when an MCP client lists, searches and reads through a real `h0 mcp vault`, then the notes of those threads
    are private too: never listed, found or read."""
    for rel, text in {**BROKEN_THREADS, **BROKEN_MATES, **PUBLIC}.items():
        path = vault_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    params = StdioServerParameters(
        command=H0_BIN,
        args=["mcp", "vault"],
        env=subprocess_env(VAULT_PATH=str(vault_dir), H0_STATE_DIR=os.environ["H0_STATE_DIR"]),
    )
    async with Client(params) as client:
        listed = (await client.call_tool("list_notes", {"directory": "", "recursive": True})).structured_content
        assert sorted(listed["notes"]) == sorted(PUBLIC), listed
        for word in ("ZQMATEONE", "ZQMATETWO", "ZQMATETHREE"):
            assert (await client.call_tool("search_notes", {"query": word})).structured_content["notes"] == [], word
        for rel in BROKEN_MATES:
            refused = error_of(await client.call_tool("read_note", {"path": rel}))
            assert refused["error"] == "permission_denied" and refused["details"]["reason"] == "private", rel
