"""The index's tables (h0.vault.index.db keeps the file): `docs` (one row a note: where, its signature,
private or a person, its frontmatter as JSON, its text zlib-compressed), `fts` (FTS5, contentless, BM25
over title, frontmatter values and body; a row is deleted by giving back the text it was indexed with),
`terms` (every term of `fts`, in an FTS5 trigram table), `addresses`, `links`, `threads` (each note's
thread keys: h0.vault.disclosure) and `entities` (what each note is about: h0.vault.index.entities).
A file of another SCHEMA_VERSION is rebuilt."""

from __future__ import annotations

# 2: `threads` (disclosure); `entities` and People notes indexed (docs_person). 3: both. 4: thread keys, links
# and "is it mail?" read by the typed note model (an unquoted `source: [[EMAIL_1]]` ties a draft to its thread).
# 5: `addresses` and `entities` carry their note's folder, so a look-up that skips the mail folders never reads
# the rows of a sender's thousands of emails. 6: `private` also holds a note whose properties cannot be read and
# a `#private` tag in its text; `bcc` addresses kept (h0.vault.index.privacy). 7: a list item's first word is not a
# name (h0.vault.index.entities): every note's `entities` read again.
# 8: a note whose properties cannot be read keeps the thread keys its lines name
# (h0.vault.disclosure.unparsed_thread_keys), so its thread stays private.
# 9: a People note's addresses are read by the one reader (h0.vault.person.person_addresses): `e-mail`, `mail`,
# `address` and `addresses` too, so such a note is a person (`docs.person`) and its private person is private.
SCHEMA_VERSION = "9"
BUSY_TIMEOUT_MS = 30_000
CACHE_KIB = 2_048  # SQLite's page cache per connection (the OS caches the file too): the server's memory

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    id          INTEGER PRIMARY KEY,
    path        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,               -- how a [[link]] names it (extract.link_key)
    folder      TEXT NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    ino         INTEGER NOT NULL,
    hash        TEXT,
    private     INTEGER NOT NULL,
    person      INTEGER NOT NULL,
    frontmatter TEXT NOT NULL,
    problem     TEXT,
    packed      BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_folder ON docs (folder);
CREATE INDEX IF NOT EXISTS docs_name ON docs (name);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, meta, body, content='', tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, 'row');
CREATE TABLE IF NOT EXISTS terms_seen (term TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS terms USING fts5(term, tokenize='trigram');
CREATE TABLE IF NOT EXISTS addresses (
    address TEXT NOT NULL, doc INTEGER NOT NULL, field TEXT NOT NULL, folder TEXT NOT NULL  -- lower(docs.folder)
);
CREATE INDEX IF NOT EXISTS addresses_address ON addresses (address, folder, field, doc);
CREATE INDEX IF NOT EXISTS addresses_doc ON addresses (doc);
CREATE TABLE IF NOT EXISTS links (doc INTEGER NOT NULL, target TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_target ON links (target);
CREATE INDEX IF NOT EXISTS links_doc ON links (doc);
CREATE TABLE IF NOT EXISTS threads (doc INTEGER NOT NULL, key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS threads_key ON threads (key);
CREATE INDEX IF NOT EXISTS threads_doc ON threads (doc);
CREATE TABLE IF NOT EXISTS entities (
    doc INTEGER NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, folder TEXT NOT NULL  -- lower(docs.folder)
);
CREATE INDEX IF NOT EXISTS entities_key ON entities (key, folder, doc, kind);
CREATE INDEX IF NOT EXISTS entities_doc ON entities (doc);
CREATE INDEX IF NOT EXISTS docs_person ON docs (person) WHERE person = 1;
CREATE INDEX IF NOT EXISTS docs_private ON docs (private) WHERE private = 1;
"""
