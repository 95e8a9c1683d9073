"""The streaming mbox reader (h0.mail.incoming.mbox_stream): every message once, with the offset after it, whatever
the chunk boundaries; a resume from any offset yields the rest; an oversized message is skipped, not held."""

from __future__ import annotations

import io
import random

import pytest

import h0.mail.incoming.mbox_stream as stream
from h0.mail.incoming.mbox_stream import mbox_slices


def mailbox_bytes(count: int, seed: int = 7) -> tuple[bytes, list[bytes]]:
    rng = random.Random(seed)
    messages = [
        b"From a@b Mon Jan  1 00:00:00 2024\nSubject: %d\n\nbody %d\n>From quoted\n" % (i, i)
        + b"x" * rng.randint(0, 300)
        + b"\n"
        for i in range(count)
    ]
    return b"".join(messages), messages


@pytest.mark.parametrize("chunk", [7, 13, 64, 1 << 20])
def test_every_message_once_with_its_offsets_whatever_the_chunk_size(monkeypatch: pytest.MonkeyPatch, chunk: int):
    monkeypatch.setattr(stream, "CHUNK_BYTES", chunk)
    data, messages = mailbox_bytes(50)
    got = list(mbox_slices(io.BytesIO(data), stop=len(data), max_bytes=10**6))
    assert [data[g.start : g.end] for g in got] == messages
    assert [g.raw for g in got] == [m.split(b"\n", 1)[1].removesuffix(b"\n") for m in messages]
    resumed = list(mbox_slices(io.BytesIO(data), start=got[10].end, stop=len(data), max_bytes=10**6))
    assert [g.start for g in resumed] == [g.start for g in got[11:]]
    bounded = list(mbox_slices(io.BytesIO(data), stop=len(data), max_bytes=150))
    assert [g.start for g in bounded] == [g.start for g in got]
    assert all((g.raw is None) == (g.size > 150) for g in bounded)


def test_text_before_the_first_message_is_a_slice_of_its_own_and_reading_stops_at_stop():
    data, messages = mailbox_bytes(3)
    damaged = b"junk line\n" + data
    got = list(mbox_slices(io.BytesIO(damaged), stop=len(damaged), max_bytes=10**6))
    assert got[0].raw == b"junk line" and len(got) == 4
    cut = len(b"junk line\n") + len(messages[0]) + 5
    partial = list(mbox_slices(io.BytesIO(damaged), stop=cut, max_bytes=10**6))
    assert partial[-1].end == cut  # a message cut short at `stop` is read as far as it goes
