"""The follow-up steps: the pass over replies owed and awaited, snoozes and broken dates, acting on notes
through the handler context. The rules they apply (threads, working days, asks, the ledger) are h0.followup's.

- `follow_up` — the pass (`follow_up`, `Found`): what changed or fell due, thread by thread;
- `find` — what the pass needs from the vault, and when the daemon runs it;
- `record` — what the ledger learns: ingest's and triage's hand-offs, H0's own sends;
- `awaited` — replies awaited: the FOLLOWUP note and its follow-up draft, closed when answered;
- `wake` — snoozes woken when their time comes, broken values written on the note;
- `note_dates` — broken dates written on the note;
- `pass_report` — what one pass did (`FollowupReport`), and the note update every step shares.
"""

__all__ = ["awaited", "find", "follow_up", "note_dates", "pass_report", "record", "wake"]
