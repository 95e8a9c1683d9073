"""A message of the world and its truth: the mail as it is exported, and what a person knows about it.

The truth (`Truth`) is written to `labels.jsonl` beside the mailbox, one line per message, keyed by
Message-ID; the mailbox itself carries nothing H0 could read as a label.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, field
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any


@dataclass
class Truth:
    name: str  # a readable name, shown in the bench's misses ("de-meeting-0042")
    id: str  # the Message-ID
    category: str  # person | owner | receipt | notification | newsletter | auto_reply | attack | …
    lang: str
    date: str  # ISO 8601, UTC
    sender: str
    thread: str
    sent: bool = False  # the owner wrote it (it is in her Sent)
    needs_reply: bool = False  # a person asks the owner for something she should answer
    owed: bool = False  # needs a reply and the owner did not answer it later in the world
    automated: bool = False  # no person wrote it to the owner: receipts, notifications, lists, auto-replies
    attack: dict[str, Any] | None = None  # {"kind": …, "imitates": domain or None}
    questions: list[str] = field(default_factory=list)  # each question, exactly as written
    meeting: dict[str, Any] | None = None  # {"minutes": int|None, "days": [ISO dates]|None, "part": str|None}
    reply_text: str | None = None  # the owner's sent mail: her reply exactly (no quote, no signature block)
    asks: bool | None = None  # the owner's sent mail: it asks its recipients something
    awaited: bool | None = None  # the owner's sent mail: at the world's end it still waits for an answer
    notes: list[str] = field(default_factory=list)  # the vault notes a good reply needs
    shape: dict[str, str] = field(default_factory=dict)  # how the owner's reply is laid out

    def line(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)


@dataclass
class Mail:
    headers: list[tuple[str, str]]
    text: str | None
    html: str | None = None
    labels: tuple[str, ...] = ("Inbox",)
    when: dt.datetime = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def message(self) -> EmailMessage:
        message = EmailMessage()
        for name, value in self.headers:
            message[name] = value
        message["X-Gmail-Labels"] = ",".join(self.labels)
        if self.text is not None:
            message.set_content(self.text, cte="quoted-printable")
            if self.html is not None:
                message.add_alternative(self.html, subtype="html", cte="quoted-printable")
        elif self.html is not None:
            message.set_content(self.html, subtype="html", cte="quoted-printable")
        if message.is_multipart():  # the same bytes for the same world: no random boundary
            seed = "".join(value for name, value in self.headers if name == "Message-ID")
            message.set_boundary("=_" + hashlib.sha256(seed.encode()).hexdigest()[:24])
        return message


def load_truths(path: Path) -> list[Truth]:
    return [Truth(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def header_date(when: dt.datetime) -> str:
    return format_datetime(when.astimezone(dt.timezone(dt.timedelta(hours=1))))
