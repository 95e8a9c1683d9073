"""What reaches a drafting prompt is about the email: the owner's notes, past and similar replies judged for
relevance, the thread's own messages said once.

- The owner's own reply of the email's thread (kept as history by `h0 import`, or filed in Done/) reaches the
  prompt once, as the conversation — never again as a "past reply" (issue 41: it appeared twice).
- A reply to another email is given only above a relevance floor (words weighted by how rare they are among
  the owner's replies: the owner's everyday words say nothing) and, for someone the owner knows, only from the
  conversation's circle (their organisation, the people of the notes the context gives).
- A note the index relates to the email through its people alone (a meeting with the sender about something
  else, a colleague's note) stays out; a single capitalised word shared with a third person's People note
  ("EUR", a German noun) does not bring it along; the owner's own note does come.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from h0.drafting import Drafting
from h0.drafting.past import SIMILAR_FLOOR, PastReplies
from h0.drafting.service import indexed_knowledge
from h0.mail.owner import Evidence, Observed, OwnerAuthority
from h0.state import StateDB
from h0.state.history import HistoryMessage, MailHistory
from h0.vault.disclosure import Disclosure, folder_keys
from h0.vault.model import note_facts
from tests.drafting.conftest import PRIVATE_FOLDERS, email_note, sent_by_h0, sweep
from tests.drafting.test_llm_drafting import decision, prompt_of
from tests.triage.fake_llm import FakeLLM

pytestmark = pytest.mark.usefixtures("loguru_restored")

DANA = ("Dana Rivera", "dana@acme.example")
OWNER = ("Alex Chen", "alex@northwind.example")


def at(day: int) -> float:
    return dt.datetime(2026, 3, day, 9, tzinfo=dt.UTC).timestamp()


def kept(
    key: str, thread: str, text: str, day: int, *, to: tuple[str, str] = DANA, subject: str = "Atlas"
) -> HistoryMessage:
    """A message the owner sent, kept as history (h0 import, a first sync)."""
    return HistoryMessage(
        key=f"<{key}@northwind.example>",
        thread=thread,
        outbound=True,
        sender=OWNER[1],
        recipients=(to,),
        subject=subject,
        at=at(day),
        text=text,
        provider_id=key,
    )


def theirs(key: str, thread: str, text: str, day: int, who: tuple[str, str] = DANA) -> HistoryMessage:
    return HistoryMessage(
        key=f"<{key}@acme.example>",
        thread=thread,
        outbound=False,
        sender=who[1],
        recipients=(OWNER,),
        subject="Atlas",
        at=at(day),
        text=text,
        provider_id=key,
    )


def history(root: Path, *messages: HistoryMessage) -> None:
    """Keep `messages` as an import does: the owner's among them with the import's evidence (h0.mail.owner)."""
    state = StateDB.for_vault(root, Path(os.environ["H0_STATE_DIR"]))
    MailHistory(state).commit(list(messages))
    mine = [Observed(m.key, Evidence.IMPORT_SENT, "Sent.mbox", m.sender) for m in messages if m.outbound]
    OwnerAuthority(state).record(mine)


def test_the_owners_reply_in_the_thread_reaches_the_prompt_once_as_the_conversation(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    """Given Dana's question and the owner's answer in thread T-9 (kept as history by an import), and other
    replies of the owner's to Dana, when Dana writes again in T-9 and the sweep drafts with a model, then the
    owner's answer is in the prompt once — as the conversation's earlier message — and no "past reply" repeats it,
    while a reply of another thread to Dana is still given as one."""
    history(
        knowledge_vault,
        theirs("d-1", "T-9", "When does Atlas launch?", 2),
        kept("o-1", "T-9", "Hi Dana,\n\nZQ-OWN-THREAD-ANSWER: Atlas launches in May.\n\nBest regards,\nAlex", 3),
        kept("o-2", "T-8", "Hi Dana,\n\nZQ-OTHER-THREAD: the contract is signed.\n\nBest regards,\nAlex", 1),
    )
    note = email_note("t9", "Dana Rivera <dana@acme.example>", "Re: Atlas", "Thanks! Which day in May exactly?")
    note = note.replace("type: email\n", "type: email\nthread_id: T-9\n").replace("2026-03-10", "2026-03-04")
    (knowledge_vault / "Needs_Action/EMAIL_t9.md").write_text(note, encoding="utf-8")
    llm.queue(decision("Hi Dana,\n\nThe 14th.\n\nBest regards,\nAlex"))
    sweep(capsys)
    prompt = prompt_of(llm.requests[0])
    assert prompt.count("ZQ-OWN-THREAD-ANSWER") == 1
    assert "--- Earlier message from The owner" in prompt  # it is there as the conversation
    assert "ZQ-OTHER-THREAD" in prompt  # a reply of another thread is still a past reply


def test_a_reply_of_the_thread_is_never_a_past_or_similar_reply_in_the_context(knowledge_vault: Path, tmp_path: Path):
    """Given the owner's answer in thread T-9 sharing every word of Dana's new email, when the context of Dana's
    email of T-9 is assembled, then it is neither a past reply nor a similar one; asked of another thread, it is."""
    state = Path(os.environ["H0_STATE_DIR"])
    history(knowledge_vault, kept("o-1", "T-9", "ZQ-THREAD Atlas rollout pricing tiers confirmed for Omega", 3))
    drafting = Drafting.build(_settings(knowledge_vault, state))
    text = "Atlas rollout pricing tiers confirmed for Omega?"
    header = {"from": "Dana Rivera <dana@acme.example>", "subject": "Atlas", "thread_id": "T-9"}
    same = drafting.context_for_email(note_facts("Needs_Action/EMAIL_t9.md", header), text)
    assert not [i for i in same.items if i.kind in ("past_reply", "similar_reply") and "ZQ-THREAD" in i.text]
    other = drafting.context_for_email(note_facts("Needs_Action/EMAIL_t7.md", {**header, "thread_id": "T-7"}), text)
    assert [i for i in other.items if i.kind == "past_reply" and "ZQ-THREAD" in i.text]


def test_a_reply_sharing_only_the_owners_everyday_words_is_below_the_floor(tmp_path: Path):
    """Given forty replies of the owner's that all say "thanks, I'll send the files next week", one about the
    Omega migration's cutover window, when an email asks about the cutover window, then only that reply is
    similar (its score at or above SIMILAR_FLOOR); an email that only shares the everyday words finds none."""
    root = tmp_path / "vault"
    (root / "Done").mkdir(parents=True)
    db = StateDB.for_vault(root, tmp_path / "state")
    everyday = [
        kept(
            f"e-{i}",
            f"T-{i}",
            f"Thanks, I will send the files next week. Talk soon, item {i}",
            1,
            to=("P", f"p{i}@x.example"),
        )
        for i in range(40)
    ]
    topical = kept("t-1", "T-t", "The Omega migration cutover window is Saturday night, rollback plan attached.", 2)
    MailHistory(db).commit([*everyday, topical])
    past = PastReplies(root, disclosure=Disclosure(()), history=MailHistory(db))
    found = past.similar("When is the cutover window for the Omega migration? Thanks!", limit=5)
    assert [r.subject for r, _ in found] == ["Atlas"] and found[0][0].text.startswith("The Omega migration")
    assert found[0][1] >= SIMILAR_FLOOR
    assert past.similar("Thanks, will you send the files next week?", limit=5) == []


def test_for_a_known_sender_a_similar_reply_comes_only_from_their_circle(knowledge_vault: Path):
    """Given the owner's reply to another company about the same question, and one to Dana's colleague at
    acme.example, when Dana asks it, then the colleague's is a similar reply and the other company's is not
    (the owner's replies to Dana speak for how to answer her)."""
    state = Path(os.environ["H0_STATE_DIR"])
    words = "The Omega seats migration cutover stays in the Saturday maintenance window"
    history(
        knowledge_vault,
        kept("x-1", "T-x", f"ZQ-ELSEWHERE {words}.", 2, to=("Kim", "kim@initech.example"), subject="Omega seats"),
        kept("x-2", "T-y", f"ZQ-COLLEAGUE {words}.", 2, to=("Lee", "lee@acme.example"), subject="Omega seats"),
    )
    drafting = Drafting.build(_settings(knowledge_vault, state))
    header = note_facts(
        "Needs_Action/EMAIL_p.md", {"from": "Dana Rivera <dana@acme.example>", "subject": "Omega seats"}
    )
    context = drafting.context_for_email(header, "Does the Omega seats migration cutover stay in the Saturday window?")
    similar = " ".join(i.text for i in context.items if i.kind == "similar_reply")
    assert "ZQ-COLLEAGUE" in similar and "ZQ-ELSEWHERE" not in similar


def test_a_third_persons_note_sharing_one_capitalised_word_stays_out_and_the_owners_own_note_comes(
    knowledge_vault: Path, tmp_path: Path
):
    """Given Marcus's People note (another client's) and the owner's own rates note, both holding "EUR", and a
    meeting with Dana about something else, when Dana asks about "1,100 EUR per day", then the owner's rates
    note is in the context, Marcus's note and the unrelated meeting are not."""
    (knowledge_vault / "People/Marcus Webb.md").write_text(
        "---\ntype: person\nemail: marcus@brightline.example\n---\n# Marcus Webb\n\n- Approves invoices over "
        "5,000 EUR\n- ZQ-MARCUS-TERMS\n",
        encoding="utf-8",
    )
    (knowledge_vault / "Notes/Studio rates.md").write_text(
        "---\ntype: note\n---\n# Studio rates\n\n- Day rate: 950–1,100 EUR, ZQ-OWN-RATES\n", encoding="utf-8"
    )
    (knowledge_vault / "Meetings/2026-02-02 Dana lunch.md").write_text(
        "---\ntype: meeting\n---\n# Lunch\n\nWith [[Dana Rivera]]: her kids, the Lisbon trip. ZQ-LUNCH\n",
        encoding="utf-8",
    )
    drafting = _drafting(knowledge_vault, tmp_path / "state")
    header = note_facts("", {"from": "Dana Rivera <dana@acme.example>", "subject": "Workshop"})
    text = drafting.context_for_email(header, "Would 1,100 EUR per day work for you for the workshop?").text()
    assert "ZQ-OWN-RATES" in text
    assert "ZQ-MARCUS-TERMS" not in text and "ZQ-LUNCH" not in text


def _settings(root: Path, state: Path):  # a Settings
    from h0.config import load_settings

    sent_by_h0(root, state)
    return load_settings(vault_path=root, h0_state_dir=state, private_folders=PRIVATE_FOLDERS, owner_emails=OWNER[1])


def _drafting(root: Path, state: Path) -> Drafting:
    private = Disclosure(folder_keys(PRIVATE_FOLDERS))
    knowledge = indexed_knowledge(root, state, private)
    assert knowledge is not None
    return Drafting(root, disclosure=private, knowledge=knowledge, owner=sent_by_h0(root, state))
