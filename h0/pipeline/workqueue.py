"""A de-duplicating, delay-aware work queue keyed by vault path, and when a failed job runs again.

A path is queued at most once; queuing it again only moves its due time earlier. A
path being worked on is never handed to a second worker: if it is queued meanwhile it
is marked dirty and handed out again once the first job ends, so an event that lands
mid-job is never lost and never runs concurrently with it.

A job ends in one of three ways: `done` (with the wait its handler asked for, if any),
or `failed`: the queue then schedules the retry itself, with capped exponential backoff
and jitter (h0.retry.Backoff) over the job's attempts, or after the Retry-After the
failure named — the handlers and the daemon do no retry arithmetic of their own. Every
other wait (a note not yet ready, sending paused for credentials, a send cap) is the queue's
too: a handler says why (`h0.retry.Again`) and `wait` answers when, from `Waits`.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from h0.retry import Again, Backoff, Waits

MAX_BACKOFF_SECONDS = 900.0  # longest wait before a job that keeps failing is tried again
# Without settings (tests): a failed job is looked at again after 1-2 s, then twice as long each time.
FAILURE_BACKOFF = Backoff(base=2.0, multiplier=2.0, cap=MAX_BACKOFF_SECONDS)
WAITS = Waits()  # every other wait: a note not yet ready, sending paused, a send cap, the look at Done/


def failure_backoff(retry_delay_ms: float, multiplier: float) -> Backoff:
    """The queue's policy from RETRY_DELAY_MS and RETRY_BACKOFF_MULTIPLIER: from at least a second
    (a failed send, a handler that crashed), growing by `multiplier`, at most MAX_BACKOFF_SECONDS
    apart — a bad note costs a log line now and then, never a loop."""
    return Backoff(max(retry_delay_ms / 1000.0, 1.0), multiplier, cap=MAX_BACKOFF_SECONDS)


@dataclass(slots=True)
class Job:
    path: str
    due: float
    settled: bool  # a moved-in / close-after-write event (or the sweep) says the file is complete
    attempt: int = 0


class WorkQueue:
    """Thread-safe. `clock` (monotonic seconds) and `backoff` are for tests: a fake clock makes
    due times exact without sleeping, a `Backoff(jitter="none")` makes retries predictable."""

    def __init__(
        self,
        capacity: int = 100_000,
        *,
        clock: Callable[[], float] = time.monotonic,
        backoff: Backoff = FAILURE_BACKOFF,
        waits: Waits = WAITS,
    ) -> None:
        self.capacity = capacity
        self.clock = clock
        self.backoff = backoff
        self.waits = waits
        self._heap: list[tuple[float, int, str]] = []
        self._jobs: dict[str, Job] = {}
        self._running: dict[str, Job] = {}
        self._dirty: dict[str, Job] = {}
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self.dropped = 0

    def put(self, path: str, *, delay: float = 0.0, settled: bool = True) -> bool:
        """Queue `path`; False if the queue is full (the sweep will find it later)."""
        due = self.clock() + delay
        with self._cond:
            if path in self._running:
                previous = self._dirty.get(path)
                self._dirty[path] = Job(
                    path, min(due, previous.due) if previous else due, settled or bool(previous and previous.settled)
                )
                return True
            job = self._jobs.get(path)
            if job is not None:
                job.settled = job.settled or settled
                if due < job.due:
                    job.due = due
                    heapq.heappush(self._heap, (due, next(self._seq), path))
                    self._cond.notify()
                return True
            if len(self._jobs) >= self.capacity:
                self.dropped += 1
                return False
            self._jobs[path] = Job(path, due, settled)
            heapq.heappush(self._heap, (due, next(self._seq), path))
            self._cond.notify()
            return True

    def get(self, timeout: float | None = None) -> Job | None:
        """The next due job (marked running), or None on timeout or close."""
        deadline = None if timeout is None else self.clock() + timeout
        with self._cond:
            while not self._closed:
                now = self.clock()
                while self._heap:
                    due, _, path = self._heap[0]
                    job = self._jobs.get(path)
                    if job is None or job.due != due:
                        heapq.heappop(self._heap)  # stale entry: the job moved or left
                        continue
                    if due > now:
                        break
                    heapq.heappop(self._heap)
                    del self._jobs[path]
                    self._running[path] = job
                    return job
                wait = None if not self._heap else self._heap[0][0] - now
                if deadline is not None:
                    remaining = deadline - now
                    if remaining <= 0:
                        return None
                    wait = remaining if wait is None else min(wait, remaining)
                self._cond.wait(wait)
            return None

    def take(self, accept: Callable[[str], bool], limit: int) -> list[Job]:
        """Up to `limit` more jobs due now whose path `accept`s, marked running: a worker that got
        one note of a batchable kind takes its due siblings with it (triage of a burst). Jobs it
        passes over stay queued as they were."""
        taken: list[Job] = []
        passed: list[tuple[float, int, str]] = []
        with self._cond:
            now = self.clock()
            while self._heap and len(taken) < limit and len(passed) < 4 * limit:
                due, seq, path = self._heap[0]
                job = self._jobs.get(path)
                if job is None or job.due != due:
                    heapq.heappop(self._heap)  # stale entry
                    continue
                if due > now:
                    break
                heapq.heappop(self._heap)
                if accept(path):
                    del self._jobs[path]
                    self._running[path] = job
                    taken.append(job)
                else:
                    passed.append((due, seq, path))
            for entry in passed:
                heapq.heappush(self._heap, entry)
        return taken

    def done(self, job: Job, *, retry_in: float | None = None) -> None:
        """Finish a job; re-queue it if it became dirty meanwhile or its handler asks to look again
        after `retry_in` seconds (a note still being written: no failure, so no attempt counted)."""
        self._finish(job, retry_in, job.attempt if retry_in is not None else 0)

    def _finish(self, job: Job, retry_in: float | None, attempt: int) -> None:
        with self._cond:
            self._running.pop(job.path, None)
            dirty = self._dirty.pop(job.path, None)
            if dirty is not None:
                dirty.attempt = attempt  # a failing note keeps its backoff when an event lands mid-job
                self._jobs[job.path] = dirty
                heapq.heappush(self._heap, (dirty.due, next(self._seq), job.path))
            elif retry_in is not None:
                again = Job(job.path, self.clock() + retry_in, True, attempt)
                self._jobs[job.path] = again
                heapq.heappush(self._heap, (again.due, next(self._seq), job.path))
            self._cond.notify_all()

    def failed(self, job: Job, *, retryable: bool = True, retry_after: float | None = None) -> float | None:
        """Finish a job whose handler failed; returns the seconds until it runs again (None: it does
        not, unless an event or the sweep queues it anew). A retryable failure runs again after
        `retry_after` when the failure named one (a server's Retry-After), else after the backoff
        for the job's attempt; each retry counts one more attempt, and a job that ends `done`
        starts over. A job queued anew while it ran (dirty) runs when that says, as after `done`."""
        delay = None
        if retryable:
            delay = retry_after if retry_after is not None and retry_after >= 0 else self.backoff.delay(job.attempt)
        self._finish(job, delay, job.attempt + 1)
        return delay

    def wait(self, path: str, why: Again, retry_after: float | None = None) -> float:
        """When `path` is looked at again for `why` (the Retry-After a server named is a fact the
        policy weighs, not an order): `Waits`, or the backoff for the job's attempt after a failure."""
        fixed = self.waits.wait(why, retry_after)
        if fixed is not None:
            return fixed
        with self._cond:
            job = self._running.get(path) or self._jobs.get(path)
            attempt = job.attempt if job is not None else 0
        return self.backoff.delay(attempt)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def pending(self) -> int:
        with self._cond:
            return len(self._jobs) + len(self._running)

    def backlog(self) -> int:
        """How many queued jobs are due now (not counting those running or waiting for later)."""
        with self._cond:
            now = self.clock()
            return sum(1 for job in self._jobs.values() if job.due <= now)

    def busy(self) -> int:
        """How many jobs are running or due now: the work in hand (a burst's last batches are all running)."""
        with self._cond:
            now = self.clock()
            return len(self._running) + sum(1 for job in self._jobs.values() if job.due <= now)

    def wait_idle(self, timeout: float, *, horizon: float = 0.0) -> bool:
        """Block until nothing is running or due within `horizon` seconds (later retries do not count)."""
        deadline = self.clock() + timeout
        with self._cond:
            while True:
                now = self.clock()
                busy = self._running or any(job.due <= now + horizon for job in self._jobs.values())
                if not busy:
                    return True
                if now >= deadline:
                    return False
                self._cond.wait(min(0.05, deadline - now))
