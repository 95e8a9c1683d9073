"""A de-duplicating, delay-aware work queue keyed by vault path.

A path is queued at most once; queuing it again only moves its due time earlier. A
path being worked on is never handed to a second worker: if it is queued meanwhile it
is marked dirty and handed out again once the first job ends, so an event that lands
mid-job is never lost and never runs concurrently with it.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class Job:
    path: str
    due: float
    settled: bool  # a moved-in / close-after-write event (or the sweep) says the file is complete
    attempt: int = 0


class WorkQueue:
    def __init__(self, capacity: int = 100_000) -> None:
        self.capacity = capacity
        self._heap: list[tuple[float, int, str]] = []
        self._jobs: dict[str, Job] = {}
        self._running: set[str] = set()
        self._dirty: dict[str, Job] = {}
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self.dropped = 0

    def put(self, path: str, *, delay: float = 0.0, settled: bool = True) -> bool:
        """Queue `path`; False if the queue is full (the sweep will find it later)."""
        due = time.monotonic() + delay
        with self._cond:
            if path in self._running:
                previous = self._dirty.get(path)
                self._dirty[path] = Job(path, min(due, previous.due) if previous else due, settled or bool(previous and previous.settled))
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
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._closed:
                now = time.monotonic()
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
                    self._running.add(path)
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
            now = time.monotonic()
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
                    self._running.add(path)
                    taken.append(job)
                else:
                    passed.append((due, seq, path))
            for entry in passed:
                heapq.heappush(self._heap, entry)
        return taken

    def done(self, job: Job, *, retry_in: float | None = None) -> None:
        """Finish a job; re-queue it if it became dirty meanwhile or asks for a retry."""
        with self._cond:
            self._running.discard(job.path)
            dirty = self._dirty.pop(job.path, None)
            if dirty is not None:
                self._jobs[job.path] = dirty
                heapq.heappush(self._heap, (dirty.due, next(self._seq), job.path))
            elif retry_in is not None:
                again = Job(job.path, time.monotonic() + retry_in, True, job.attempt + 1)
                self._jobs[job.path] = again
                heapq.heappush(self._heap, (again.due, next(self._seq), job.path))
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def pending(self) -> int:
        with self._cond:
            return len(self._jobs) + len(self._running)

    def wait_idle(self, timeout: float, *, horizon: float = 0.0) -> bool:
        """Block until nothing is running or due within `horizon` seconds (later retries do not count)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                now = time.monotonic()
                busy = self._running or any(job.due <= now + horizon for job in self._jobs.values())
                if not busy:
                    return True
                if now >= deadline:
                    return False
                self._cond.wait(min(0.05, deadline - now))
