"""Follow-ups: what is owed and awaited in each conversation, and when to say so.

Domain logic below the handlers (h0.handlers.followup.follow_up acts on notes through VaultAPI):

- `workdays` — how FOLLOW_UP_DAYS counts (Monday to Friday, local time);
- `threads` — owed and awaited, from a thread's messages (the one rule);
- `asks` — does the owner's message ask something (rules, or the LLM);
- `ledger` — what H0 saw of each conversation, in its state database;
- `messages` — a message as the ledger keeps it, from mail, H0's sends, or an email note;
- `snooze` — `snooze_until:` values (the steps that wake notes are h0.handlers.followup.wake);
- `nudge` — the follow-up draft's text (greeting and sign-off are parameters).

What the reports show of follow-ups is h0.report.followups.
"""
