#!/usr/bin/env python3
"""Generate a deterministic benchmark vault: ~10,000 email-like notes, ~50 MB.

    python scripts/bench/gen_vault.py                 # prints the vault path (cached)
    python scripts/bench/gen_vault.py --notes 2000 --mb 10 --seed 7

The same parameters always give the same files, byte for byte. The vault is cached
under scripts/bench/.cache/vault-<key>/ (git-ignored), where <key> hashes the
parameters and GENERATOR_VERSION; `manifest.json` (written last, so its presence
means the vault is complete) records what a benchmark needs to check answers:
the planted rare phrases and the notes that contain them, the 2,500-note folder,
and how many notes match `status:pending`.

Layout (default parameters):
    Needs_Action/   1,200 incoming email notes (mostly status: pending)
    Drafts/           300 reply drafts (status: pending_approval)
    Done/           2,500 finished notes (status: done) — the big flat folder
    Rejected/         150 rejected drafts
    Archive/YYYY-MM/  the rest, 24 monthly folders (mostly done, some pending)
    Approved/, Logs/, Logs/failed/, Outbox/  empty, as `h0 init` makes them

Note sizes follow a log-normal distribution (median ~3 KB, a few notes of several
hundred KB such as newsletters with long quoted threads), rescaled so the whole vault
lands on the requested size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

GENERATOR_VERSION = 1
CACHE = Path(__file__).resolve().parent / ".cache"
EMPTY_FOLDERS = ("Approved", "Logs", "Logs/failed", "Outbox")

# Rare phrases: their words appear nowhere else in the vault (not in the vocabulary below).
RARE_MULTI = "quillfeather escrow"  # planted in 3 notes, with varied case, one inside frontmatter
RARE_SINGLE = "vermilion tortoise accord"  # planted in 1 note, the last one a vault walk reaches
ABSENT = "obsidian zeppelin marmalade"  # planted nowhere: a search that must read everything

WORDS = """
the a an and or but if then so because while when after before during about above across against
along among around at by for from in into near of off on onto out over past since through to toward
under until up upon with within without we you they he she it our your their this that these those
team project meeting review budget invoice contract proposal schedule deadline update report
quarter revenue forecast customer client vendor supplier shipment order delivery payment account
design draft plan roadmap release launch feature issue bug fix patch test build deploy server
database backup migration security access password policy compliance audit training workshop
office travel flight hotel booking reservation conference agenda minutes notes summary follow
question answer request approval feedback comment change version document file attachment link
please thanks kindly regards best cheers hello hi morning afternoon evening week month year today
tomorrow yesterday monday tuesday wednesday thursday friday weekend holiday call chat discuss
confirm cancel move reschedule share send forward reply review check sign submit prepare finish
start continue pause resume need want like think know see hope expect plan suggest recommend
new old next last first final early late quick short long small large important urgent simple
clear open closed pending done ready available busy free happy sorry glad sure great good fine
price cost discount quote estimate total amount balance tax fee refund credit debit transfer
marketing sales support engineering finance legal operations product research analytics data
slide deck spreadsheet dashboard metric target goal result milestone phase sprint backlog ticket
partner board investor candidate interview offer onboarding payroll benefit leave expense claim
""".split()

FIRST = """Dana Alex Sam Priya Mateo Yuki Olu Hana Lars Chloé Noah Amara Kenji Sofia Ravi Ines Tomás
Leila Jonas Mei Omar Zoë Felix Aisha Björn Carmen Diego Elif Grace Hugo""".split()
LAST = """Rivera Chen Okafor Müller Nakamura Singh Dubois Rossi Kowalski Haddad Larsen Silva Kim Novak
Fischer Patel García Jensen Moreau Tanaka Ibrahim O'Brien Schmidt Costa Nguyen""".split()
DOMAINS = """example.com acme.example globex.example initech.example umbrella.example hooli.example
stark.example wayne.example example.org mail.example.net""".split()
LABELS = ["INBOX", "UNREAD", "IMPORTANT", "CATEGORY_UPDATES", "CATEGORY_PROMOTIONS", "STARRED", "Label_7"]
TAGS = ["email", "finance", "travel", "hiring", "customer", "internal", "newsletter", "legal", "ops", "urgent"]
SUBJECTS = [
    "Can we move {day}'s {thing} to {day2}?",
    "Invoice {num} for {month}",
    "Re: {thing} notes",
    "Fwd: {thing} — action needed",
    "Quick question about the {thing}",
    "{month} {thing} update",
    "Your order #{num} has shipped",
    "Reminder: {thing} on {day}",
    "Welcome to the {thing} program",
    "Re: Re: {thing} follow-up",
    "Weekly digest: {thing}",
    "Contract renewal {num}",
]
THINGS = [
    "design review",
    "budget",
    "roadmap",
    "launch",
    "onboarding",
    "audit",
    "workshop",
    "offsite",
    "quarterly report",
    "security training",
    "migration",
    "hiring plan",
    "partner call",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
UNICODE_BITS = [
    "Café at 10:00?",
    "naïve estimate",
    "Zürich office",
    "São Paulo team",
    "会議の資料",
    "résumé attached",
    "€1,250.00",
    "déjà vu",
    "Ångström units",
    "emoji ✅ done",
]


@dataclass(frozen=True)
class Params:
    notes: int = 10_000
    mb: float = 50.0
    seed: int = 20261121
    done: int = 2_500

    def key(self) -> str:
        text = json.dumps({"v": GENERATOR_VERSION, **self.__dict__}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass
class Planned:
    rel: str
    folder: str
    status: str
    kind: str = "email"
    plant: list[str] = field(default_factory=list)  # "multi-body", "multi-subject", "single"


def _layout(p: Params, rng: random.Random) -> list[Planned]:
    n = p.notes
    needs = round(n * 0.12)
    drafts = round(n * 0.03)
    rejected = round(n * 0.015)
    done = min(p.done, n - needs - drafts - rejected)
    archive = n - needs - drafts - rejected - done
    plan: list[Planned] = []
    for i in range(needs):
        status = "pending" if rng.random() < 0.85 else rng.choice(["in_progress", "triaged"])
        plan.append(Planned(f"Needs_Action/EMAIL_{_hex(rng)}.md", "Needs_Action", status))
    for i in range(drafts):
        plan.append(Planned(f"Drafts/reply-{_hex(rng)}.md", "Drafts", "pending_approval", "draft"))
    for i in range(done):
        plan.append(Planned(f"Done/EMAIL_{_hex(rng)}.md", "Done", "done"))
    for i in range(rejected):
        plan.append(Planned(f"Rejected/reply-{_hex(rng)}.md", "Rejected", "rejected", "draft"))
    months = [f"{2025 + m // 12}-{m % 12 + 1:02d}" for m in range(24)]
    for i in range(archive):
        month = months[i * len(months) // max(archive, 1)]
        status = "done" if rng.random() < 0.8 else "pending"
        plan.append(Planned(f"Archive/{month}/EMAIL_{_hex(rng)}.md", f"Archive/{month}", status))
    return plan


def _hex(rng: random.Random) -> str:
    return f"{rng.getrandbits(64):016x}"


def _sentences(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        words = rng.choices(WORDS, k=rng.randint(5, 22))
        if rng.random() < 0.08:
            words.insert(rng.randrange(len(words)), rng.choice(UNICODE_BITS))
        if rng.random() < 0.1:
            words.insert(rng.randrange(len(words)), f"{rng.randint(1, 9999)}")
        text = " ".join(words)
        out.append(text[0].upper() + text[1:] + rng.choice([".", ".", ".", "?", "!"]))
    return out


def _person(rng: random.Random) -> tuple[str, str]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = f"{first}.{last}".lower().replace("'", "").replace("é", "e").replace("ë", "e").replace("ü", "u")
    local = local.replace("ö", "o").replace("á", "a").replace("í", "i").replace("ç", "c")
    return f"{first} {last}", f"{local}@{rng.choice(DOMAINS)}"


def _subject(rng: random.Random) -> str:
    return rng.choice(SUBJECTS).format(
        day=rng.choice(DAYS),
        day2=rng.choice(DAYS),
        thing=rng.choice(THINGS),
        num=rng.randint(1000, 99999),
        month=rng.choice(MONTHS),
    )


def _yaml_str(text: str) -> str:
    """A YAML scalar for `text`: plain when safe, double-quoted otherwise."""
    if (
        ": " in text
        or text.startswith(("Re:", "Fwd:", "#", "'", '"', "[", "{", "-", "*", "&", "!", "@", "%"))
        or text.endswith(":")
        or " #" in text
        or "#" in text[:1]
    ):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def _frontmatter(rng: random.Random, item: Planned, index: int, subject: str, when: datetime) -> str:
    name, addr = _person(rng)
    mid = f"{rng.getrandbits(48):012x}"
    received = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if item.kind == "draft":
        lines = [
            f"to: {addr}",
            f"subject: {_yaml_str('Re: ' + subject)}",
            f"status: {item.status}",
            f"reply_to_message_id: {mid}",
            f"thread_id: thread-{mid[:8]}",
            f"source: Needs_Action/EMAIL_{mid}.md",
            f"draft_id: reply-{mid}",
            f"created: {received}",
        ]
        if item.status == "rejected":
            lines.append("decision: rejected")
        return "\n".join(lines) + "\n"
    labels = sorted(set(rng.sample(LABELS, rng.randint(1, 3))), key=LABELS.index)
    tags = rng.sample(TAGS, rng.randint(1, 4))
    cc = [f"{_person(rng)[1]}" for _ in range(rng.choice([0, 0, 0, 1, 2]))]
    attachments = [
        f"{rng.choice(THINGS).replace(' ', '_')}_{rng.randint(1, 99)}.pdf" for _ in range(rng.choice([0, 0, 0, 1, 2]))
    ]
    lines = [
        "type: email",
        f"status: {item.status}",
        f"message_id: {mid}",
        f'rfc822_message_id: "<CA{mid}@mail.{rng.choice(DOMAINS)}>"',
        f"thread_id: thread-{mid[:8]}",
        f'from: "{name} <{addr}>"',
        "to: you@example.com",
        f"cc: [{', '.join(cc)}]",
        f"subject: {_yaml_str(subject)}",
        f"received: {received}",
        f"labels: [{', '.join(labels)}]",
        "tags:",
        *[f"  - {t}" for t in tags],
        f"priority: {rng.choices(['low', 'normal', 'high'], weights=[2, 6, 2])[0]}",
        f"has_attachments: {'true' if attachments else 'false'}",
        f"attachment_names: [{', '.join(attachments)}]",
    ]
    if item.status == "done":
        lines.append(f"processed: {(when + timedelta(hours=rng.randint(1, 72))).strftime('%Y-%m-%dT%H:%M:%SZ')}")
    return "\n".join(lines) + "\n"


def _body(rng: random.Random, pool: list[str], size: int, greeting_name: str) -> str:
    parts = [f"{rng.choice(['Hi', 'Hello', 'Dear', 'Hey'])} {greeting_name},", ""]
    length = sum(len(x) + 1 for x in parts)
    newsletter = size > 40_000 and rng.random() < 0.5
    while length < size:
        roll = rng.random()
        if newsletter and roll < 0.15:
            block = ["| item | owner | status |", "|---|---|---|"] + [
                f"| {rng.choice(THINGS)} | {rng.choice(FIRST)} | {rng.choice(['done', 'open', 'late'])} |"
                for _ in range(rng.randint(3, 12))
            ]
        elif roll < 0.25:
            block = ["> " + s for s in rng.sample(pool, rng.randint(2, 6))]
            block.insert(0, f"On {rng.choice(DAYS)}, {rng.choice(FIRST)} wrote:")
        elif roll < 0.3:
            block = [
                f"- [{rng.choice(THINGS)}](https://{rng.choice(DOMAINS)}/{_hex(rng)[:8]})"
                for _ in range(rng.randint(1, 5))
            ]
        else:
            # a paragraph, wrapped at ~90 columns like mail clients do
            words = " ".join(rng.sample(pool, rng.randint(2, 7))).split(" ")
            block, line = [], ""
            for w in words:
                if len(line) + len(w) + 1 > 90:
                    block.append(line)
                    line = w
                else:
                    line = f"{line} {w}" if line else w
            block.append(line)
        block.append("")
        parts.extend(block)
        length += sum(len(x.encode()) + 1 for x in block)
    parts += ["Best,", rng.choice(FIRST), ""]
    return "\n".join(parts)


def generate(p: Params, dest: Path) -> dict:
    """Write the vault into `dest` (which must not exist) and return its manifest."""
    rng = random.Random(p.seed)
    plan = _layout(p, rng)
    pool = _sentences(rng, 6000)
    # Sizes: log-normal body sizes, rescaled so the files add up to the target.
    sigma = 1.0
    raw = [min(math.exp(rng.gauss(0, sigma)), 120.0) for _ in plan]
    frontmatter_estimate = 520 * len(plan)
    scale = max(p.mb * 1_000_000 - frontmatter_estimate, 1000 * len(plan)) / sum(raw)
    sizes = [max(200, int(r * scale)) for r in raw]

    # Plant the rare phrases in known notes.
    by_folder: dict[str, list[int]] = {}
    for i, item in enumerate(plan):
        by_folder.setdefault(item.folder, []).append(i)
    biggest_archive = max((i for i, it in enumerate(plan) if it.folder.startswith("Archive/")), key=lambda i: sizes[i])
    done_pick = by_folder["Done"][len(by_folder["Done"]) // 3]
    needs_pick = by_folder["Needs_Action"][len(by_folder["Needs_Action"]) // 2]
    plan[biggest_archive].plant.append("multi-body-deep")
    plan[done_pick].plant.append("multi-body")
    plan[needs_pick].plant.append("multi-subject")
    last_rel = max(it.rel for it in plan)  # the last note of a sorted walk
    next(it for it in plan if it.rel == last_rel).plant.append("single")

    start = datetime(2025, 1, 1, tzinfo=UTC)
    dest.mkdir(parents=True)
    for folder in EMPTY_FOLDERS:
        (dest / folder).mkdir(parents=True, exist_ok=True)
    rare_multi: list[str] = []
    rare_single: list[str] = []
    total_bytes = 0
    pending = 0
    for index, item in enumerate(plan):
        when = start + timedelta(minutes=rng.randint(0, 2 * 365 * 24 * 60))
        subject = _subject(rng)
        if "multi-subject" in item.plant:
            subject = f"Re: the Quillfeather ESCROW paperwork for {rng.choice(THINGS)}"
        fm = _frontmatter(rng, item, index, subject, when)
        body = _body(rng, pool, sizes[index], rng.choice(FIRST))
        lines = body.split("\n")
        if "multi-body" in item.plant:
            lines.insert(len(lines) // 2, f"We still need the {RARE_MULTI} signed before {rng.choice(DAYS)}.")
        if "multi-body-deep" in item.plant:
            lines.insert(
                len(lines) * 9 // 10, f"> Note: QuillFeather Escrow documents are in the {rng.choice(THINGS)} folder."
            )
        if "single" in item.plant:
            lines.insert(
                len(lines) * 3 // 4,
                f"Per the {RARE_SINGLE.title()} we agreed on, the {rng.choice(THINGS)} moves to {rng.choice(DAYS)}.",
            )
        if item.plant and item.plant != ["single"]:
            rare_multi.append(item.rel)
        if "single" in item.plant:
            rare_single.append(item.rel)
        text = f"---\n{fm}---\n" + "\n".join(lines)
        data = text.encode("utf-8")
        path = dest / item.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        stamp = when.timestamp()
        os.utime(path, (stamp, stamp))
        total_bytes += len(data)
        pending += item.status == "pending"
    folders: dict[str, int] = {}
    for item in plan:
        folders[item.folder] = folders.get(item.folder, 0) + 1
    return {
        "params": p.__dict__,
        "generator_version": GENERATOR_VERSION,
        "notes": len(plan),
        "bytes": total_bytes,
        "largest_note_bytes": max(sizes),
        "folders": folders,
        "big_folder": "Done",
        "big_folder_notes": folders.get("Done", 0),
        "filter": "status:pending",
        "filter_matches": pending,
        "rare_phrases": {
            RARE_MULTI: sorted(rare_multi),
            RARE_SINGLE: sorted(rare_single),
            ABSENT: [],
        },
        "sample_notes": [it.rel for it in random.Random(p.seed + 1).sample(plan, min(len(plan), 500))],
    }


def ensure_vault(p: Params = Params(), *, quiet: bool = False) -> tuple[Path, dict]:
    """Return (vault path, manifest), generating the vault on the first call."""
    root = CACHE / f"vault-{p.key()}"
    manifest_path = root / "manifest.json"
    if manifest_path.is_file():
        return root / "vault", json.loads(manifest_path.read_text())
    if root.exists():
        shutil.rmtree(root)  # an interrupted earlier run
    if not quiet:
        print(f"generating {p.notes} notes (~{p.mb:g} MB) into {root} …", file=sys.stderr)
    manifest = generate(p, root / "vault")
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return root / "vault", manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=Params.notes)
    ap.add_argument("--mb", type=float, default=Params.mb, help="approximate total size in MB (10^6 bytes)")
    ap.add_argument("--seed", type=int, default=Params.seed)
    ap.add_argument("--done", type=int, default=Params.done, help="notes in the big flat Done/ folder")
    args = ap.parse_args(argv)
    path, manifest = ensure_vault(Params(args.notes, args.mb, args.seed, args.done))
    print(path)
    print(
        f"{manifest['notes']} notes, {manifest['bytes'] / 1e6:.1f} MB, "
        f"{manifest['big_folder_notes']} in {manifest['big_folder']}/, "
        f"{manifest['filter_matches']} match {manifest['filter']}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
