"""H0's event vocabulary: one private blinker namespace, one line per signal.

Trigger signals (sent by the pipeline's workers just before they call the handler the routing
table names for the note, h0.pipeline.routes), each with `path=` (vault-relative). They say
"this handler runs now"; nothing is answered through them (the handler's `Outcome` is its
return value):

- note-approved      a note is in Approved/: send it (or archive it if status: rejected)
- note-rejected      a note is in Rejected/, or a draft in Drafts/ says status: rejected
- notes-need-action  notes are in Needs_Action/: triage them (`paths=`, a batch)
- draft-revision-requested  a draft in Drafts/ carries an `h0:` instruction: rewrite it
- draft-times-due    a waiting reply to a request to meet: make its proposed times current
- drafts-filed       sent or rejected drafts were filed in Done/: learn from them (`path=` is
                     the job's key)

Report signals (sent by the pipeline from a handler's Outcome, for the console, the dashboard,
tests and benchmarks):

- email-sent         path=, done_path=, to=, message_id=, already_sent=, elapsed_ms=
- send-failed        path=, error= (an H0Error), retry_in= (seconds or None)
- note-archived      path=, done_path=, decision=
- triage-decided     path=, decision=, confidence=, draft_path=
- sweep-completed    queued= (how many paths), reason=
- watcher-restarted  reason=
"""

from __future__ import annotations

from blinker import Namespace

_signals = Namespace()

note_approved = _signals.signal("note-approved")
note_rejected = _signals.signal("note-rejected")
notes_need_action = _signals.signal("notes-need-action")
draft_revision_requested = _signals.signal("draft-revision-requested")
draft_times_due = _signals.signal("draft-times-due")
drafts_filed = _signals.signal("drafts-filed")

email_sent = _signals.signal("email-sent")
send_failed = _signals.signal("send-failed")
note_archived = _signals.signal("note-archived")
triage_decided = _signals.signal("triage-decided")
sweep_completed = _signals.signal("sweep-completed")
watcher_restarted = _signals.signal("watcher-restarted")
