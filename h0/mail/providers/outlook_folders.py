"""Outlook's folders and labels as H0 uses them: the well-known folders' ids (and the label each is), a folder
found (or made) by name for a move, and label changes on messages — categories, read, flagged — in $batch.

A label is a category (`label:`/`add_label`); the words H0 uses for state map to properties instead
(`UNREAD` → isRead, `STARRED` → flag). Taking a message out of `INBOX` while adding a label moves it to the
folder of that name (`move_email`): `Archive` is the mailbox's Archive folder, `Junk`/`Spam` Junk Email,
`Trash` Deleted Items, `INBOX` the Inbox; any other name a folder of that display name, created if missing.
With immutable ids (h0.mail.providers.outlook_http) the message keeps its id in its new folder.
"""

from __future__ import annotations

import threading
from typing import Any

from h0.errors import H0Error, InternalError, NotFound
from h0.mail.providers.backend import Label
from h0.mail.providers.outlook_http import Answer, GraphHttp
from h0.mail.providers.outlook_wire import FOLDER_LABELS, FOLDER_NAMES, SYSTEM_LABELS, checked_id, labels_of, odata_text

STATE_FIELDS = "id,categories,isRead,isDraft,flag,parentFolderId"


def _system(label: str) -> bool:
    return label.upper() in SYSTEM_LABELS


def label_patch(resource: dict[str, Any], add: list[str], remove: list[str]) -> dict[str, Any]:
    """The PATCH that applies a label change to a message as it is now ({} when nothing changes)."""
    current = [c for c in resource.get("categories") or [] if isinstance(c, str)]
    folded = {c.casefold() for c in current}
    categories = list(current)
    for label in add:
        if not _system(label) and label.casefold() not in folded:
            categories.append(label)
            folded.add(label.casefold())
    dropped = {label.casefold() for label in remove if not _system(label)}
    categories = [c for c in categories if c.casefold() not in dropped]
    patch: dict[str, Any] = {}
    if categories != current:
        patch["categories"] = categories
    if "UNREAD" in add and resource.get("isRead") is not False:
        patch["isRead"] = False
    elif "UNREAD" in remove and resource.get("isRead") is False:
        patch["isRead"] = True
    if "STARRED" in add:
        patch["flag"] = {"flagStatus": "flagged"}
    elif "STARRED" in remove:
        patch["flag"] = {"flagStatus": "notFlagged"}
    return patch


class Folders:
    """One mailbox's folders, through its Graph connection. Thread-safe."""

    def __init__(self, http: GraphHttp) -> None:
        self.http = http
        self._labels: dict[str, str] | None = None  # Graph folder id → H0's label
        self._ids: dict[str, str] = {}  # a folder's name (well-known or display name, folded) → its id
        self._lock = threading.Lock()

    def labels(self) -> dict[str, str]:
        """Graph folder id → H0's label, for the well-known folders (read once, in one $batch)."""
        with self._lock:
            if self._labels is not None:
                return self._labels
        answers = self.http.batch(
            [{"id": name, "method": "GET", "url": f"/me/mailFolders/{name}?$select=id"} for name in FOLDER_LABELS]
        )
        labels: dict[str, str] = {}
        for name, answer in answers.items():
            if isinstance(answer, H0Error):
                if answer.code != "not_found":  # a mailbox without Archive has no such folder: fine
                    raise answer
                continue
            folder_id = answer.body.get("id") if isinstance(answer.body, dict) else None
            if isinstance(folder_id, str):
                labels[folder_id] = FOLDER_LABELS[name]
                self._ids[name] = folder_id
        with self._lock:
            self._labels = labels
        return labels

    def path(self, name: str) -> str:
        """A folder's URL path: a well-known one by its name, another by its id (NotFound when there is none)."""
        known = FOLDER_NAMES.get(name.casefold(), name if name in FOLDER_LABELS else None)
        if known is not None:
            return f"/me/mailFolders/{known}"
        return f"/me/mailFolders/{checked_id(self.find(name, create=False), 'folder')}"

    def find(self, name: str, *, create: bool) -> str:
        """The id of the top-level folder called `name` (case-insensitive), made when `create`."""
        key = name.casefold()
        if key in self._ids:
            return self._ids[key]
        params = {"$filter": f"displayName eq {odata_text(name)}", "$select": "id,displayName"}
        found = self.http.call("GET", "/me/mailFolders", params=params).body.get("value") or []
        folder = next((f for f in found if isinstance(f, dict) and isinstance(f.get("id"), str)), None)
        if folder is None and create:
            try:
                folder = self.http.call("POST", "/me/mailFolders", json={"displayName": name}).body
            except H0Error as error:
                if error.code != "conflict":  # made meanwhile by someone else: use theirs
                    raise
                return self.find(name, create=False)
        if folder is None or not isinstance(folder.get("id"), str):
            raise NotFound(f"Outlook has no folder called {name!r}.", folder=name)
        self._ids[key] = folder["id"]
        return str(folder["id"])

    def label(self, name: str) -> Label:
        """A label: H0's state words as themselves, anything else a category (nothing to create)."""
        name = name.strip()
        return Label(name.upper(), name.upper()) if _system(name) else Label(name, name)

    def _destination(self, resource: dict[str, Any], add: list[str], remove: list[str]) -> tuple[str | None, str]:
        """Where a label change moves the message (a folder id or well-known name, or None) and the label that
        names the folder (it is not also made a category)."""
        here = self.labels().get(str(resource.get("parentFolderId") or ""))
        targets = [a for a in add if not _system(a)]
        if "INBOX" in remove and targets and here == "INBOX":
            known = FOLDER_NAMES.get(targets[0].casefold())
            return (known if known is not None else self.find(targets[0], create=True)), targets[0]
        if "INBOX" in add and here != "INBOX":
            return "inbox", "INBOX"
        return None, ""

    def modify(self, message_id: str, add: list[str], remove: list[str]) -> list[str]:
        """Apply a label change (and a move, see the module docstring); the message's labels afterwards."""
        url = f"/me/messages/{checked_id(message_id)}"
        resource = self.http.call("GET", url, params={"$select": STATE_FIELDS}).body
        destination, folder_label = self._destination(resource, add, remove)
        patch = label_patch(resource, [a for a in add if a != folder_label], remove)
        if patch:
            resource = self.http.call("PATCH", url, json=patch).body
        if destination is not None:
            resource = self.http.call("POST", f"{url}/move", json={"destinationId": destination}).body
        return labels_of(resource, self.labels())

    def modify_many(self, message_ids: list[str], add: list[str], remove: list[str]) -> dict[str, list[str] | H0Error]:
        """A label change on many messages in two $batch calls (their state, then the PATCHes); moves one by one."""
        ids = list(dict.fromkeys(message_ids))
        answers: dict[str, list[str] | H0Error] = {}
        if "INBOX" in add or "INBOX" in remove:
            for message_id in ids:
                try:
                    answers[message_id] = self.modify(message_id, add, remove)
                except H0Error as error:
                    answers[message_id] = error
            return answers
        reads: list[dict[str, Any]] = []
        for index, message_id in enumerate(ids):
            try:
                path = checked_id(message_id)
            except H0Error as error:
                answers[message_id] = error
                continue
            reads.append({"id": str(index), "method": "GET", "url": f"/me/messages/{path}?$select={STATE_FIELDS}"})
        states = self.http.batch(reads) if reads else {}
        folders = self.labels()
        writes: list[dict[str, Any]] = []
        for part in reads:
            message_id, state = ids[int(part["id"])], states[part["id"]]
            if isinstance(state, H0Error):
                answers[message_id] = state
                continue
            patch = label_patch(state.body, add, remove)
            if not patch:
                answers[message_id] = labels_of(state.body, folders)
                continue
            url = part["url"].split("?", 1)[0]
            writes.append({"id": part["id"], "method": "PATCH", "url": url, "body": patch})
        for key, written in (self.http.batch(writes) if writes else {}).items():
            message_id = ids[int(key)]
            answers[message_id] = written if isinstance(written, H0Error) else _labels(written, folders)
        return answers


def _labels(answer: Answer, folders: dict[str, str]) -> list[str] | H0Error:
    if not isinstance(answer.body, dict):
        return InternalError("Graph answered a label change without the message", retryable=True)
    return labels_of(answer.body, folders)
