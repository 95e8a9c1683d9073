"""The state database's tables, one comment per column that needs one: what each row records and for whom."""

from __future__ import annotations

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
-- One row per Message-ID (derived from its idempotency key): the send's whole history.
CREATE TABLE IF NOT EXISTS sends (
    rfc822_message_id   TEXT PRIMARY KEY,
    idempotency_key     TEXT NOT NULL,
    content_hash        TEXT NOT NULL,
    state               TEXT NOT NULL,      -- pending | sent | failed | unknown (it may have gone out)
    pid                 INTEGER,
    started_at          REAL NOT NULL,
    sent_epoch          REAL,
    sent_at             TEXT,
    provider_message_id TEXT,
    thread_id           TEXT,
    backend             TEXT,
    error               TEXT,
    reason              TEXT,
    bounce              INTEGER,
    note_path           TEXT,
    note_name           TEXT,               -- the file name as sync tools' copies share it (note 2.md: note.md)
    note_hash           TEXT,
    reply_to            TEXT,
    source              TEXT,
    recipients          TEXT,
    subject             TEXT,
    filed_path          TEXT,
    filed_at            REAL
);
CREATE INDEX IF NOT EXISTS sends_key ON sends (idempotency_key);
CREATE INDEX IF NOT EXISTS sends_sent ON sends (state, sent_epoch);
CREATE INDEX IF NOT EXISTS sends_provider ON sends (provider_message_id);
CREATE INDEX IF NOT EXISTS sends_reply ON sends (reply_to);
CREATE INDEX IF NOT EXISTS sends_source ON sends (source);
CREATE INDEX IF NOT EXISTS sends_name ON sends (note_name);
CREATE INDEX IF NOT EXISTS sends_note_hash ON sends (note_hash);
-- What an approved note's attachments were when H0 first read the note in Approved/.
CREATE TABLE IF NOT EXISTS approvals (
    note_path   TEXT NOT NULL,
    note_hash   TEXT NOT NULL,
    attachments TEXT NOT NULL,
    first_seen  REAL NOT NULL,
    PRIMARY KEY (note_path, note_hash)
);
-- Where mail ingest stands in each mailbox (Gmail: a historyId, decimal text: uint64 does not fit
-- SQLite's signed INTEGER), the query catch-up in progress (JSON), and when the next one is due.
CREATE TABLE IF NOT EXISTS mail_sync (
    source       TEXT PRIMARY KEY,          -- backend:account, e.g. gmail:ann@example.com
    cursor       TEXT,                      -- only ever moves forward (compared as integers)
    catch_up     TEXT,                      -- {"cursor": …, "served": …} while a catch-up runs
    catch_up_due REAL,                      -- epoch seconds: the next reconciliation by query
    since        REAL,                      -- epoch seconds: when H0 first synced this mailbox
    failures     INTEGER NOT NULL DEFAULT 0,
    updated_at   REAL NOT NULL
);
-- Who changed a note through H0's own servers, and when (h0.vault.last_change): keyed by the note's
-- name, so a draft's history follows it from Drafts/ into Approved/. Kept for NOTE_WRITES_DAYS.
CREATE TABLE IF NOT EXISTS note_writes (
    name_key  TEXT NOT NULL,               -- h0.vault.paths.folder_key of the file name
    path      TEXT NOT NULL,
    at        REAL NOT NULL,               -- epoch seconds
    note_hash TEXT,
    tool      TEXT NOT NULL,               -- write_note, apply_changes, create_draft, …
    client    TEXT                         -- the MCP client's name ("H0" for the daemon)
);
CREATE INDEX IF NOT EXISTS note_writes_name ON note_writes (name_key, at);
-- What H0 ingested from a mailbox that keeps no custom keywords (an IMAP server whose PERMANENTFLAGS
-- have no \\*): the mark that would have been on the message, kept here. By the provider's id
-- (UIDVALIDITY-UID) and by Message-ID, so a renumbered mailbox still yields no second note.
CREATE TABLE IF NOT EXISTS ingested (
    source     TEXT NOT NULL,              -- as in mail_sync
    message_id TEXT NOT NULL,              -- the provider's id
    rfc822     TEXT,                       -- the Message-ID header, when the message has one
    at         REAL NOT NULL,
    PRIMARY KEY (source, message_id)
);
CREATE INDEX IF NOT EXISTS ingested_rfc822 ON ingested (source, rfc822);
-- Where reading a mailbox's sent mail stands, when it is a stream of its own (IMAP: the Sent folder's
-- UIDVALIDITY << 32 | last UID); Gmail's sent mail comes in the mail_sync history itself.
CREATE TABLE IF NOT EXISTS sent_sync (
    source     TEXT PRIMARY KEY,
    cursor     TEXT NOT NULL,
    updated_at REAL NOT NULL
);
-- Microsoft Graph's change cursors (h0.mail.providers.outlook): a delta link is an opaque URL, so mail_sync and
-- sent_sync keep a number and this table the link it stands for. Old links are pruned; a cursor whose
-- link is gone is an expired one (the sync catches up by query, the ingested mark decides).
CREATE TABLE IF NOT EXISTS delta_links (
    source TEXT NOT NULL,                  -- the mailbox and folder: outlook:ann@example.com/inbox
    seq    INTEGER NOT NULL,               -- the cursor: grows by one with each link kept
    link   TEXT NOT NULL,
    at     REAL NOT NULL,
    PRIMARY KEY (source, seq)
);
-- Follow-ups (h0.followup.ledger): every message of a conversation H0 saw — received, or sent by the
-- owner from any client — and per thread what is owed or awaited and when to look again.
CREATE TABLE IF NOT EXISTS followup_messages (
    key          TEXT PRIMARY KEY,          -- the Message-ID, else "id:" + the provider's id
    provider_id  TEXT,
    thread       TEXT NOT NULL,             -- the provider's thread id (IMAP: the thread's first Message-ID)
    outbound     INTEGER NOT NULL,          -- 1: given as the owner's sent mail (h0.mail.owner decides)
    sender       TEXT NOT NULL,             -- the From address, lower-case
    recipients   TEXT NOT NULL,             -- JSON [[name, address], …] of To and Cc
    subject      TEXT NOT NULL,
    at           REAL NOT NULL,             -- when it was written, never later than when H0 first saw it
    seen_at      REAL NOT NULL,
    automated    TEXT,                      -- auto_reply | bounce | list | notification
    list_address TEXT,
    asks         INTEGER,                   -- it asks something of its reader (1/0; h0.followup.asks)
    ask          TEXT,                      -- the sentence that asks, cut short
    note         TEXT                       -- the note H0 wrote for it (a received email)
);
CREATE INDEX IF NOT EXISTS followup_messages_thread ON followup_messages (thread, at);
-- Who wrote to the owner since (any thread): a person who did is awaited no more (h0.followup.ledger.last_heard).
CREATE INDEX IF NOT EXISTS followup_messages_sender ON followup_messages (sender, at) WHERE outbound = 0;
CREATE TABLE IF NOT EXISTS followup_threads (
    thread     TEXT PRIMARY KEY,
    dirty      INTEGER NOT NULL DEFAULT 1,  -- something changed (a message, an override): look again
    due_at     REAL,                        -- epoch seconds: the next deadline to look at, if any
    state      TEXT NOT NULL DEFAULT '',    -- "awaited" while a follow-up note of H0's is open
    anchor     TEXT,                        -- the owner's message that note is about (key)
    note       TEXT,                        -- that note (Needs_Action/FOLLOWUP_….md)
    draft      TEXT,                        -- and its follow-up draft
    override   INTEGER,                     -- a note's `awaiting:` true (1) / false (0); NULL: the rules decide
    checked_at REAL NOT NULL DEFAULT 0,
    gen        INTEGER NOT NULL DEFAULT 0   -- bumped by every change: a pass clears `dirty` only for what it saw
);
CREATE INDEX IF NOT EXISTS followup_threads_due ON followup_threads (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS followup_threads_dirty ON followup_threads (dirty) WHERE dirty = 1;
CREATE INDEX IF NOT EXISTS followup_threads_awaited ON followup_threads (state) WHERE state = 'awaited';
-- The owner's identity (h0.mail.owner): messages the owner wrote, recorded when the evidence was seen —
-- the provider's sent mail (Gmail's SENT label, the IMAP Sent folder) or an import's sent folder or
-- labels. H0's own sends are the `sends` table above. Never a From: header alone, never a note.
CREATE TABLE IF NOT EXISTS owner_messages (
    key      TEXT PRIMARY KEY,              -- the Message-ID (h0.mail.owner.message_key), else "id:" + the provider's id
    evidence TEXT NOT NULL,                 -- sent_label | sent_folder | import_sent
    source   TEXT NOT NULL,                 -- where: the mailbox (gmail:ann@example.com), or the imported file
    sender   TEXT NOT NULL,                 -- its one From address, lower-case
    note     TEXT,                          -- the note H0 wrote with its words (an import's Done/SENT_….md)
    at       REAL NOT NULL                  -- epoch seconds: when H0 recorded it
);
-- The mailbox H0 signs in to, one row per backend (h0.mail.owner: `OwnerAuthority.record_mailbox`): the account
-- as the provider's own profile names it when the mail sync signs in (Gmail's users.getProfile emailAddress,
-- Graph's /me mail or userPrincipalName, IMAP's user at host), and the provider's last refusal of the sign-in.
-- `h0 status` and the dashboard read it: they make no network call of their own.
CREATE TABLE IF NOT EXISTS mailbox_accounts (
    backend      TEXT PRIMARY KEY,          -- gmail | outlook | imap
    account      TEXT,                      -- NULL until the provider confirmed an account it names plainly
    confirmed_at REAL,                      -- epoch seconds: the sync last signed in as `account`
    refused_at   REAL,                      -- epoch seconds: the provider last refused the sign-in
    refusal      TEXT                       -- why, as H0's typed error said it
);
-- Mail in (h0.state.history, docs/mail-in.md): mail kept as history — older mail and the owner's sent mail
-- from `h0 import` and a first sync — which H0 learns from (past replies, voice, thread context,
-- follow-ups) without a note per message. One row per message, by the follow-up ledger's key.
CREATE TABLE IF NOT EXISTS history (
    key         TEXT PRIMARY KEY,          -- the Message-ID, else "id:" + the provider's id
    provider_id TEXT,
    thread      TEXT NOT NULL,             -- as in followup_messages
    outbound    INTEGER NOT NULL,          -- 1: the owner wrote it (h0.mail.owner vouched for it)
    sender      TEXT NOT NULL,             -- the From address, lower-case
    recipients  TEXT NOT NULL,             -- JSON [[name, address], …] of To and Cc (bounded)
    subject     TEXT NOT NULL,
    at          REAL NOT NULL,             -- when it was written (epoch seconds)
    text        TEXT NOT NULL,             -- its own words: quoted history and signature cut, bounded
    signature   TEXT,
    note        TEXT,                      -- the note written for it (recent work, or --as-notes)
    origin      TEXT NOT NULL              -- "import" or the mailbox ("gmail:…") of a first sync
);
CREATE INDEX IF NOT EXISTS history_thread ON history (thread, at);
CREATE INDEX IF NOT EXISTS history_sender ON history (sender, at);
CREATE INDEX IF NOT EXISTS history_outbound ON history (outbound, at);
-- The owner's sent mail by recipient: past replies per person.
CREATE TABLE IF NOT EXISTS history_to (
    address TEXT NOT NULL,
    key     TEXT NOT NULL,
    at      REAL NOT NULL,
    PRIMARY KEY (address, key)
) WITHOUT ROWID;
-- Recent mail an import holds until its pass ends (was it answered later in the file?), as JSON.
CREATE TABLE IF NOT EXISTS import_work (
    key   TEXT PRIMARY KEY,
    at    REAL NOT NULL,
    email TEXT NOT NULL
);
-- Where `h0 import` stands in each file: resumed at `offset` while the file is the same.
CREATE TABLE IF NOT EXISTS import_files (
    file       TEXT PRIMARY KEY,           -- the real path
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    head       TEXT NOT NULL,              -- a hash of its first 64 KB
    offset     INTEGER NOT NULL,           -- every message before this byte is imported
    done       INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL
);
"""
