"""Write the labelled world: `world.mbox` (Takeout style), `labels.jsonl` and the persona `vault/`.

    .venv/bin/python -m scripts.world.generate                 # the default world (seed 41), cached
    .venv/bin/python -m scripts.world.generate --seed 7 --out /tmp/world

The same seed gives the same bytes. The default world is cached in scripts/bench/.cache/world-<seed>-<hash of
the generator's code>/ (git-ignored), so a bench or a test builds it once. Two years of mail, ending
END: conversations with the owner's correspondents, her own sent replies and asks, receipts,
notifications, newsletters, out-of-office answers and attacks. The hand-written hard cases
(scripts/world/hard_cases/) are separate files with their own labels.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import shutil
from email.generator import BytesGenerator
from io import BytesIO
from pathlib import Path

from scripts.world import attacks as attack_mail
from scripts.world import robots, texts
from scripts.world.model import Mail, Truth, header_date
from scripts.world.persona import OWNER, OWNER_NAME, PEOPLE, write_vault
from scripts.world.shapes import owner_words
from scripts.world.threads import Conversation, World, ask_body, message_id, no_reply_body

HERE = Path(__file__).resolve().parent
CACHE = HERE.parents[1] / "scripts" / "bench" / ".cache"
HARD_CASES = HERE / "hard_cases"
SEED = 41
END = dt.datetime(2026, 11, 20, 18, 0, tzinfo=dt.UTC)
START = END - dt.timedelta(days=730)
CORRESPONDENTS = [p for p in PEOPLE if p.key != "max"]


def _start(rng: random.Random) -> dt.datetime:
    day = START + dt.timedelta(days=rng.randrange(728))
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day.replace(hour=rng.randint(7, 15), minute=rng.randrange(60))


def _recent(rng: random.Random, days: int) -> dt.datetime:
    """A working day of the world's last `days` days: what may still wait for an answer at its end."""
    day = END - dt.timedelta(days=1 + rng.randrange(days))
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day.replace(hour=rng.randint(7, 15), minute=rng.randrange(60))


def _subject(person_lang: str, rng: random.Random) -> str:
    return rng.choice(texts.SUBJECTS[person_lang])


def _asked_threads(world: World, count: int) -> None:
    """A person asks; the owner answers most; some answer back, some ask again."""
    rng = world.rng
    for _ in range(count):
        person = rng.choice(CORRESPONDENTS)
        talk = Conversation(world, person, _subject(person.lang, rng), _start(rng), person.lang, "ask")
        body, truth = ask_body(person, rng, talk.when.date())
        talk.from_them(body, truth, html=rng.random() < 0.3)
        if rng.random() < 0.75:
            talk.advance(1, 30)
            asks = rng.random() < 0.3
            talk.from_owner(owner_words(person, rng, answer=True, asks=asks), asks=asks, quote=rng.random() < 0.9)
            if rng.random() < 0.55:
                talk.advance(2, 48)
                if asks or rng.random() < 0.5:
                    talk.from_them(no_reply_body(person, rng), {"needs_reply": False, "notes": []})
                else:
                    body, truth = ask_body(person, rng, talk.when.date())
                    talk.from_them(body, truth)


def _owner_threads(world: World, count: int, *, within_days: int = 728) -> None:
    """The owner writes first: an ask or news; some get an answer, some an out-of-office."""
    rng = world.rng
    for _ in range(count):
        person = rng.choice(CORRESPONDENTS)
        when = _start(rng) if within_days >= 728 else _recent(rng, within_days)
        talk = Conversation(world, person, _subject(person.lang, rng), when, person.lang, "own")
        asks = rng.random() < 0.6
        talk.from_owner(owner_words(person, rng, answer=False, asks=asks), asks=asks, quote=False)
        roll = rng.random()
        if roll < 0.25:
            talk.advance(0.01, 0.1)
            _auto_reply(world, talk)
            roll = rng.random()
        if roll < 0.55:
            talk.advance(3, 72)
            talk.from_them(no_reply_body(person, rng), {"needs_reply": False, "notes": []})


def _auto_reply(world: World, talk: Conversation) -> None:
    index = next(i for i, p in enumerate(PEOPLE) if p.key == talk.person.key)
    robot = robots.out_of_office(world.rng, index, talk.subject)
    n = world.next_n()
    msg_id = message_id("ooo", n, talk.person.domain)
    headers = [
        ("From", robot.sender),
        ("To", f"{OWNER_NAME} <{OWNER}>"),
        ("Subject", robot.subject),
        ("Date", header_date(talk.when)),
        ("Message-ID", msg_id),
        ("In-Reply-To", talk.last_id),
        ("References", " ".join(talk.references)),
        *robot.headers,
    ]
    world.add(
        Mail(headers, robot.text, robot.html, ("Inbox",), talk.when),
        Truth(
            name=f"{robot.lang}-auto_reply-{n:04d}",
            id=msg_id,
            category="auto_reply",
            lang=robot.lang,
            date=talk.when.isoformat(),
            sender=talk.person.address,
            thread=talk.root,
            automated=True,
        ),
    )


def _fyi(world: World, count: int) -> None:
    rng = world.rng
    for _ in range(count):
        person = rng.choice(CORRESPONDENTS)
        talk = Conversation(world, person, _subject(person.lang, rng), _start(rng), person.lang, "fyi")
        talk.from_them(no_reply_body(person, rng), {"needs_reply": False, "notes": []})


def _robots(world: World, counts: dict[str, int]) -> None:
    rng = world.rng
    makers = {"receipt": robots.receipt, "notification": robots.notification, "newsletter": robots.newsletter}
    for kind, count in counts.items():
        for _ in range(count):
            n = world.next_n()
            when = _start(rng)
            robot = makers[kind](rng, n, when)
            domain = robot.sender.rpartition("@")[2].rstrip(">")
            msg_id = message_id(kind, n, domain)
            headers = [
                ("From", robot.sender),
                ("To", OWNER),
                ("Subject", robot.subject),
                ("Date", header_date(when)),
                ("Message-ID", msg_id),
                *robot.headers,
            ]
            if robot.reply_to:
                headers.append(("Reply-To", robot.reply_to))
            labels = ("Inbox", "Category Updates") if kind != "newsletter" else ("Inbox", "Category Promotions")
            world.add(
                Mail(headers, robot.text, robot.html, labels, when),
                Truth(
                    name=f"{robot.lang}-{robot.kind}-{n:04d}",
                    id=msg_id,
                    category=robot.kind,
                    lang=robot.lang,
                    date=when.isoformat(),
                    sender=robot.sender,
                    thread=msg_id,
                    automated=True,
                ),
            )


def _attacks(world: World, repeats: int) -> None:
    rng = world.rng
    for _ in range(repeats):
        for attack in attack_mail.attacks(rng):
            n = world.next_n()
            when = _start(rng)
            domain = attack.sender.rpartition("@")[2].rstrip(">")
            msg_id = message_id("attack", n, domain)
            headers = [
                ("From", attack.sender),
                ("To", f"{OWNER_NAME} <{OWNER}>"),
                ("Subject", attack.subject),
                ("Date", header_date(when)),
                ("Message-ID", msg_id),
                ("Authentication-Results", attack.auth),
            ]
            world.add(
                Mail(headers, attack.text, attack.html, ("Inbox",), when),
                Truth(
                    name=f"{attack.lang}-attack-{attack.kind}-{n:04d}",
                    id=msg_id,
                    category="attack",
                    lang=attack.lang,
                    date=when.isoformat(),
                    sender=attack.sender,
                    thread=msg_id,
                    attack={"kind": attack.kind, "imitates": attack.imitates},
                ),
            )


def _authenticated(mail: Mail, truth: Truth) -> None:
    """Real mail from real senders passes DMARC, as Gmail's Authentication-Results say."""
    if truth.sent or truth.attack is not None:
        return
    domain = truth.sender.rpartition("@")[2].rstrip(">")
    mail.headers.append(("Authentication-Results", attack_mail.PASS.format(d=domain)))


def generate_world(seed: int = SEED) -> World:
    world = World(random.Random(seed), END)
    _asked_threads(world, 300)
    _owner_threads(world, 110)
    _owner_threads(world, 40, within_days=25)  # the last weeks: some of these asks still wait
    _fyi(world, 60)
    _robots(world, {"receipt": 110, "notification": 110, "newsletter": 80})
    _attacks(world, 2)
    world.settle()
    for mail, truth in world.mails:
        _authenticated(mail, truth)
    world.mails.sort(key=lambda pair: (pair[0].when, pair[1].id))
    return world


def write_world(world: World, dest: Path) -> Path:
    """world.mbox, labels.jsonl and vault/ in `dest` (created)."""
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / "world.mbox", "wb") as out:
        for mail, truth in world.mails:
            buffer = BytesIO()
            BytesGenerator(buffer, mangle_from_=True).flatten(mail.message())
            stamp = mail.when.strftime("%a %b %d %H:%M:%S +0000 %Y")
            number = int(hashlib.sha256(truth.id.encode()).hexdigest()[:15], 16)
            out.write(f"From {number:019d}@xxx {stamp}\n".encode())
            out.write(buffer.getvalue().replace(b"\r\n", b"\n"))
            out.write(b"\n")
    (dest / "labels.jsonl").write_text("".join(t.line() + "\n" for _, t in world.mails), encoding="utf-8")
    write_vault(dest / "vault")
    return dest


def _fingerprint(seed: int) -> str:
    digest = hashlib.sha256(str(seed).encode())
    for path in sorted(HERE.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def build_world(seed: int = SEED, out: Path | None = None) -> Path:
    """The world's folder: `out`, or the cache's (built once per seed and generator version)."""
    dest = out or CACHE / f"world-{seed}-{_fingerprint(seed)}"
    if (dest / "labels.jsonl").exists():
        return dest
    part = dest.with_name(f"{dest.name}.{os.getpid()}.part")  # test workers may build it at the same time
    shutil.rmtree(part, ignore_errors=True)
    write_world(generate_world(seed), part)
    try:
        part.rename(dest)
    except OSError:  # another process was first: the same bytes are there
        shutil.rmtree(part, ignore_errors=True)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, help="write here (default: the cache)")
    args = parser.parse_args()
    dest = build_world(args.seed, args.out)
    truths = [json.loads(line) for line in (dest / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    kinds: dict[str, int] = {}
    for truth in truths:
        kinds[truth["category"]] = kinds.get(truth["category"], 0) + 1
    print(f"{dest}: {len(truths)} messages " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


if __name__ == "__main__":
    main()
