"""Write the bundled persona vault: Alex Chen's notes (People, Projects, Meetings, a private Journal)
with 22 emails Alex answered and the replies Alex sent, filed in Done/ as H0 files them.

    .venv/bin/python scripts/persona_vault.py /tmp/persona
    VAULT_PATH=/tmp/persona .venv/bin/h0 eval --no-note

It is what `h0 eval` measures H0 on in a fresh clone, and what its tests use. The notes come from
tests/fixtures/drafting/vault, the emails from tests/fixtures/drafting/emails.json and Alex's
replies from tests/fixtures/persona/replies.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
from email.utils import parseaddr
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "tests/fixtures/drafting/vault"
EMAILS = ROOT / "tests/fixtures/drafting/emails.json"
REPLIES = ROOT / "tests/fixtures/persona/replies.json"
START = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def build(dest: Path) -> Path:
    """Write the persona vault into `dest` (which must not exist yet); its path."""
    shutil.copytree(NOTES, dest)
    (dest / "Done").mkdir(exist_ok=True)
    replies: dict[str, str] = json.loads(REPLIES.read_text(encoding="utf-8"))
    for index, email in enumerate(json.loads(EMAILS.read_text(encoding="utf-8"))):
        reply = replies.get(email["id"])
        if reply is None:
            continue
        received = START + dt.timedelta(days=2 * index)
        sent = received + dt.timedelta(hours=3)
        name = f"EMAIL_persona-{email['id']}"
        _, sender = parseaddr(email["from"])
        (dest / "Done" / f"{name}.md").write_text(
            "---\n"
            "type: email\n"
            "status: done\n"
            f"message_id: persona-{email['id']}\n"
            f"rfc822_message_id: <{email['id']}@persona.example>\n"
            f"thread_id: persona-{email['id']}\n"
            f"from: {_quoted(email['from'])}\n"
            "to: [alex@northwind.example]\n"
            f"subject: {_quoted(email['subject'])}\n"
            f"received: {received:%Y-%m-%dT%H:%M:%SZ}\n"
            "---\n"
            f"```text\n{email['body']}\n```\n",
            encoding="utf-8",
        )
        (dest / "Done" / f"REPLY_{name}.md").write_text(
            "---\n"
            f"to: {sender}\n"
            f"subject: {_quoted('Re: ' + email['subject'])}\n"
            "status: sent\n"
            f"sent_at: {sent:%Y-%m-%dT%H:%M:%SZ}\n"
            f"draft_id: REPLY_{name}\n"
            f"source: Needs_Action/{name}.md\n"
            f"reply_to_message_id: persona-{email['id']}\n"
            f"thread_id: persona-{email['id']}\n"
            "---\n"
            f"{reply}\n\n%% h0: not sent below %%\nReplying to [[{name}]]\n",
            encoding="utf-8",
        )
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="a folder that does not exist yet")
    print(build(parser.parse_args().dest))


if __name__ == "__main__":
    main()
