"""An outgoing message, built: a draft note as a message (`drafts`), its recipients (`addresses`,
`recipients`), where a reply belongs (`reply_thread`), its attachments, and the MIME message itself (`mime`).
"""

__all__ = ["addresses", "attachments", "drafts", "mime", "recipients", "reply_thread"]
