"""The work queue: one job per path, never two workers on one note, nothing lost mid-job."""

from __future__ import annotations

import threading
import time

from h0.pipeline.workqueue import WorkQueue


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
    assert again.path == "a" and again.attempt == 1 and again.due >= finished + 0.15


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
