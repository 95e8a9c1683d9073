"""Mail coming in: the incremental sync (`sync*`), import from .eml and .mbox files (`importer`,
`mbox_stream`), hostile MIME bounded before parsing (`mimebounds`), what a fetched message looks like
(`email_views`), bodies as text (`htmltext`), and what the headers say of the sender: automated mail
(`automated`), the provider's SPF, DKIM and DMARC verdicts (`authresults`).
"""

__all__ = [
    "authresults",
    "automated",
    "email_views",
    "htmltext",
    "importer",
    "mbox_stream",
    "mimebounds",
    "sync",
    "sync_batches",
    "sync_marks",
    "sync_query",
]
