"""The work queue: one job per path, never two workers on one note, nothing lost mid-job, and a
failed job retried on the queue's own backoff."""

from __future__ import annotations

import threading
import time

from h0.pipeline.workqueue import FAILURE_BACKOFF, WorkQueue
from h0.retry import Again, Backoff, Waits


class FakeClock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_path_queued_twice_is_one_job():
    q = WorkQueue()
    q.put("Approved/a.md")
    q.put("Approved/a.md")
    job = q.get(timeout=0.1)
    assert job.path == "Approved/a.md"
    assert q.get(timeout=0.05) is None


def test_requeueing_moves_the_due_time_earlier_never_later():
    q = WorkQueue()
    q.put("a", delay=10)
    q.put("a", delay=0)
    assert q.get(timeout=0.1).path == "a"
    q.put("b", delay=0)
    q.put("b", delay=10)
    assert q.get(timeout=0.1).path == "b"


def test_a_path_queued_while_running_runs_again_after_not_during():
    q = WorkQueue()
    q.put("a")
    job = q.get(timeout=0.1)
    q.put("a")  # an event lands mid-job
    assert q.get(timeout=0.05) is None  # not handed to a second worker
    q.done(job)
    again = q.get(timeout=0.1)
    assert again is not None and again.path == "a"


def test_retry_comes_back_after_the_delay():
    q = WorkQueue()
    q.put("a")
    job = q.get(timeout=0.1)
    finished = time.monotonic()
    q.done(job, retry_in=0.15)
    assert q.get(timeout=0.05) is None  # not handed out before it is due
    again = q.get(timeout=1)
    # A wait the handler asked for (a note still being written) is no failure: no attempt counted.
    assert again.path == "a" and again.attempt == 0 and again.due >= finished + 0.15


def test_given_a_job_that_failed_then_the_queue_retries_it_after_its_backoff_growing_and_capped():
    clock = FakeClock()
    q = WorkQueue(clock=clock, backoff=Backoff(base=30.0, multiplier=2.0, cap=100.0, jitter="none"))
    q.put("Approved/a.md")
    delays = []
    for _ in range(4):
        job = q.get(timeout=0)
        assert job is not None and job.path == "Approved/a.md"
        delays.append(q.failed(job))
        clock.now += delays[-1] - 0.001
        assert q.get(timeout=0) is None  # not a moment before it is due
        clock.now += 0.001
    assert delays == [30.0, 60.0, 100.0, 100.0]
    assert q.get(timeout=0).attempt == 4


def test_given_jitter_then_each_retry_is_drawn_between_half_and_all_of_its_delay():
    clock = FakeClock()
    q = WorkQueue(clock=clock)  # the daemon's policy: FAILURE_BACKOFF, equal jitter
    q.put("a")
    for attempt in range(6):
        job = q.get(timeout=0)
        delay = q.failed(job)
        nominal = FAILURE_BACKOFF.nominal(attempt)
        assert nominal / 2 <= delay <= nominal <= FAILURE_BACKOFF.cap
        clock.now += delay


def test_given_a_retry_after_then_the_queue_waits_that_long_instead_of_its_backoff():
    clock = FakeClock()
    q = WorkQueue(clock=clock, backoff=Backoff(base=30.0, jitter="none"))
    q.put("a")
    assert q.failed(q.get(timeout=0), retry_after=5.0) == 5.0
    clock.now += 5.0
    assert q.get(timeout=0).path == "a"


def test_given_a_failure_that_is_not_retryable_then_the_job_leaves_the_queue():
    clock = FakeClock()
    q = WorkQueue(clock=clock)
    q.put("a")
    assert q.failed(q.get(timeout=0), retryable=False) is None
    clock.now += 10 * FAILURE_BACKOFF.cap
    assert q.get(timeout=0) is None and q.pending() == 0


def test_given_a_job_that_succeeds_after_failing_then_its_next_failure_starts_the_backoff_over():
    clock = FakeClock()
    q = WorkQueue(clock=clock, backoff=Backoff(base=1.0, jitter="none"))
    q.put("a")
    clock.now += q.failed(q.get(timeout=0))
    clock.now += q.failed(q.get(timeout=0))
    q.done(q.get(timeout=0))  # it worked
    q.put("a")  # a new event, later
    assert q.failed(q.get(timeout=0)) == 1.0


def test_given_an_event_mid_job_then_a_failing_job_keeps_its_attempts():
    clock = FakeClock()
    q = WorkQueue(clock=clock, backoff=Backoff(base=1.0, jitter="none"))
    q.put("a")
    clock.now += q.failed(q.get(timeout=0))
    job = q.get(timeout=0)
    q.put("a")  # an event lands while it runs: it runs again at once, not after the backoff
    q.failed(job)
    again = q.get(timeout=0)
    assert again is not None and again.attempt == 2


def test_a_full_queue_refuses_and_counts():
    q = WorkQueue(capacity=2)
    assert q.put("a") and q.put("b")
    assert not q.put("c")
    assert q.dropped == 1


def test_settled_is_sticky_once_any_event_says_so():
    q = WorkQueue()
    q.put("a", settled=False, delay=5)
    q.put("a", settled=True)
    assert q.get(timeout=0.1).settled


def test_many_workers_never_share_a_path():
    q = WorkQueue()
    active: set[str] = set()
    clash = []
    seen = []
    guard = threading.Lock()

    def worker():
        while True:
            job = q.get(timeout=0.3)
            if job is None:
                return
            with guard:
                if job.path in active:
                    clash.append(job.path)
                active.add(job.path)
                seen.append(job.path)
            time.sleep(0.001)
            with guard:
                active.discard(job.path)
            q.done(job)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for _ in range(5):
        for i in range(50):
            q.put(f"p{i}")
    for t in threads:
        t.join()
    assert not clash
    assert set(seen) == {f"p{i}" for i in range(50)}


def test_wait_idle_ignores_future_retries():
    q = WorkQueue()
    q.put("a", delay=60)
    assert q.wait_idle(0.2)
    q.put("b")
    assert not q.wait_idle(0.05)


def test_wait_idle_counts_retries_due_within_its_horizon():
    q = WorkQueue()
    q.put("later", delay=60)
    q.put("soon", delay=30)
    assert not q.wait_idle(0.05, horizon=45)  # "soon" is within the horizon: still busy
    assert q.wait_idle(0.05, horizon=10)


def test_take_hands_out_due_siblings_of_a_batch_and_leaves_the_rest_queued():
    q = WorkQueue()
    for name in ("n1", "n2", "n3"):
        q.put(f"Needs_Action/{name}.md")
    q.put("Approved/a.md")
    q.put("Needs_Action/later.md", delay=30)
    first = q.get(timeout=0.1)
    taken = q.take(lambda p: p.startswith("Needs_Action/"), limit=10)
    paths = {first.path, *(j.path for j in taken)}
    assert {f"Needs_Action/{n}.md" for n in ("n1", "n2", "n3")} <= paths
    assert "Needs_Action/later.md" not in paths  # not due yet
    rest = q.get(timeout=0.1)
    assert rest is not None and rest.path == "Approved/a.md"  # passed over, still queued
    q.put("Needs_Action/n2.md")  # lands while its batch runs: dirty, handed out again after
    assert q.take(lambda p: True, limit=10) == []
    for job in [first, *taken]:
        q.done(job)
    again = q.get(timeout=0.1)
    assert again is not None and again.path == "Needs_Action/n2.md"


def test_take_stops_at_its_limit():
    q = WorkQueue()
    for i in range(10):
        q.put(f"Needs_Action/{i}.md")
    assert len(q.take(lambda p: True, limit=4)) == 4
    assert q.pending() == 10  # four running, six queued


def test_every_wait_is_the_queues_a_handler_only_says_why():
    """Issue 31: a handler says why a note is looked at again (and a server's Retry-After as a fact);
    the queue's one table (`Waits`) and its backoff say when."""
    now = [100.0]
    queue = WorkQueue(clock=lambda: now[0], backoff=Backoff(2.0, 2.0, jitter="none"), waits=Waits(credentials_s=30.0))
    assert queue.wait("Approved/a.md", Again.NOT_YET) == 0.2  # changed since read: a moment
    assert queue.wait("Approved/a.md", Again.NOT_YET, 0.65) == 0.65  # still settling: the time it names
    assert queue.wait("Approved/a.md", Again.CREDENTIALS) == 30.0  # paused for credentials: the policy's
    assert queue.wait("Approved/a.md", Again.SEND_CAP, 0.3) == 1.0  # a Retry-After weighed, not obeyed blindly
    assert queue.wait("Approved/a.md", Again.SEND_CAP, 120.0) == 120.0
    queue.put("Approved/a.md")
    job = queue.get(timeout=0)
    assert job is not None and queue.wait(job.path, Again.FAILED) == 2.0  # the backoff for attempt 0
    assert queue.failed(job) == 2.0
    now[0] += 2.0
    again = queue.get(timeout=0)
    assert again is not None and again.attempt == 1 and queue.wait(again.path, Again.FAILED) == 4.0
    assert queue.wait(again.path, Again.FAILED, 7.0) == 7.0  # a failure that named its Retry-After


def test_without_a_queue_a_failure_is_not_retried_but_a_pause_still_has_its_length():
    assert Waits().wait(Again.FAILED) is None and Waits().wait(Again.CREDENTIALS) == 60.0


def test_the_backlog_counts_the_jobs_due_now_not_those_running_or_due_later():
    clock = FakeClock()
    queue = WorkQueue(clock=clock)
    queue.put("Needs_Action/a.md")
    queue.put("Needs_Action/b.md")
    queue.put("Drafts/later.md", delay=30.0)
    assert queue.backlog() == 2
    job = queue.get(timeout=0)
    assert job is not None
    assert queue.backlog() == 1  # the one running is no backlog
    assert queue.busy() == 2  # the work in hand: the one running and the one due
    clock.now += 30.0
    assert queue.backlog() == 2  # the later one is due now
    assert queue.busy() == 3
