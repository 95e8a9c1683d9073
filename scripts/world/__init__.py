"""The labelled test world: a persona (Lena Hartmann, a product designer in Berlin who works in English,
German and French), her vault, and two years of her mailbox with the truth about every message.

    .venv/bin/python -m scripts.world.generate     # writes (or finds) the cached world, prints its path

`generate.build_world(seed)` writes `world.mbox` (a Google Takeout export: `X-Gmail-Labels`, Sent
included), `labels.jsonl` (one line per message: what a person knows about it) and `vault/` (People,
Projects, Meetings, a Journal with private notes). The labels live beside the mailbox, never in it:
H0 cannot read them. `hard_cases/` holds hand-written messages of the shapes that break judgments,
with their labels in `hard_cases/labels.jsonl`. See docs/judgments.md.
"""
