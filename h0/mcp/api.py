"""The typed seams over MCP: `McpVault` (a `VaultAPI`: three verbs, three tools) and `McpMail` (a `MailAPI`).

Each method is one tool call (a batch: one call per 500 items) on a persistent session
(`h0.mcp.client.McpConnection`) and answers the same types as the local implementations (`h0.vault.api.LocalVault`,
`h0.mail.api.LocalMail`): a note read over MCP is an `h0.vault.Note`, a send result a
`SendEmailResult`. Results are built from H0's own servers' structured content, which the
connection does not validate against the schema a second time (h0.mcp.client._call_own_tool);
a result missing a field the contract promises is an `InternalError`, never a KeyError in a
handler.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from h0.errors import H0Error, InternalError, error_from_dict
from h0.mail.models import AckResult, EmailFull, EmailList, LabelResult, NewEmails, SendEmailResult
from h0.vault.api import MAX_BATCH, Applied, Change, ListQuery, Move, NoteRef, Update, Write
from h0.vault.last_change import Arrival
from h0.vault.note import Note
from h0.vault.store import Moved

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
LIST_LIMIT = 10_000  # the vault server's most notes per list_notes


class ToolCaller(Protocol):
    """What the seams need of a connection: call a tool, get its structured result or a typed error."""

    name: str

    def call(self, tool: str, arguments: Mapping[str, Any], *, timeout: float | None = None) -> dict[str, Any]: ...


def _shaped(server: str, tool: str, build: Callable[[], T]) -> T:
    """`build()` from a result; a result without the promised shape is the server's internal error."""
    try:
        return build()
    except (KeyError, TypeError, ValueError, StopIteration, ValidationError) as exc:
        raise InternalError(
            f"{server}.{tool} answered without the promised shape ({type(exc).__name__}: {exc})",
            server=server,
            tool=tool,
        ) from None


def _note(data: Mapping[str, Any]) -> Note:
    return Note(str(data["path"]), dict(data["frontmatter"]), str(data["body"]), str(data["hash"]))


def _change_args(change: Change) -> dict[str, Any]:
    if isinstance(change, Write):
        args: dict[str, Any] = {
            "op": "write",
            "path": change.path,
            "frontmatter": dict(change.frontmatter),
            "body": change.body,
            "create_only": change.create_only,
        }
        if change.if_match is not None:
            args["if_match"] = change.if_match
        return args
    if isinstance(change, Update):
        args = {"op": "update", "path": change.path, "set": dict(change.set), "remove": list(change.remove)}
        if change.if_match is not None:
            args["if_match"] = change.if_match
        return args
    assert isinstance(change, Move)
    args = {
        "op": "move",
        "source": change.source,
        "destination": change.destination,
        "overwrite": change.overwrite,
        "rename_if_exists": change.rename_if_exists,
    }
    if change.set_frontmatter:
        args["set_frontmatter"] = dict(change.set_frontmatter)
    return args


def _error(item: Mapping[str, Any]) -> H0Error:
    return error_from_dict(
        {"error": item.get("error"), "message": item.get("message") or "", "details": item.get("details") or {}}
    )


def _chunks(items: Sequence[T], size: int = MAX_BATCH) -> list[Sequence[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class McpVault:
    """`VaultAPI` over the vault MCP server: `read_notes`, `list_notes`, `apply_changes`."""

    def __init__(self, connection: ToolCaller) -> None:
        self.connection = connection

    def read_many(self, paths: Sequence[str]) -> list[Note | H0Error]:
        found: dict[str, Note | H0Error] = {}
        for chunk in _chunks(list(paths)):
            data = self.connection.call("read_notes", {"paths": list(chunk)})

            def build(data: dict[str, Any] = data, chunk: Sequence[str] = chunk) -> None:
                # Notes come back in the order asked, minus the failed ones (listed by the path asked).
                failed = {item["path"]: _error(item) for item in data.get("errors") or []}
                notes = iter(data["notes"])
                for path in chunk:
                    found[path] = failed[path] if path in failed else _note(next(notes))

            _shaped(self.connection.name, "read_notes", build)
        return [found[path] for path in paths]

    def list(self, query: ListQuery) -> list[str]:
        args: dict[str, Any] = {
            "directory": query.directory,
            "recursive": query.recursive,
            "limit": query.limit or LIST_LIMIT,
        }
        if query.filter is not None:
            args["filter"] = query.filter if isinstance(query.filter, str) else list(query.filter)
        data = self.connection.call("list_notes", args)
        return _shaped(self.connection.name, "list_notes", lambda: [_listed_path(item) for item in data["notes"]])

    def apply(self, changes: Sequence[Change]) -> builtins.list[Applied | H0Error]:
        results: list[Applied | H0Error] = []
        for chunk in _chunks(list(changes)):
            data = self.connection.call("apply_changes", {"changes": [_change_args(c) for c in chunk]})

            def build(data: dict[str, Any] = data, chunk: Sequence[Change] = chunk) -> None:
                items = data["results"]
                if len(items) != len(chunk):
                    raise ValueError(f"{len(items)} results for {len(chunk)} changes")
                for change, item in zip(chunk, items, strict=True):
                    if not item["ok"]:
                        results.append(_error(item))
                    elif isinstance(change, Move):
                        source, moved_to = str(item["source"]), str(item["path"])
                        results.append(
                            Moved(source, moved_to, item.get("moved_hash"), item.get("hash"), item.get("warning"))
                        )
                    else:
                        results.append(NoteRef(str(item["path"]), str(item["hash"])))

            _shaped(self.connection.name, "apply_changes", build)
        return results


def _listed_path(item: Any) -> str:
    """One listed note: `{path}` (or a bare path string)."""
    return item if isinstance(item, str) else str(item["path"])


class McpMail:
    """`MailAPI` over the mail MCP server."""

    def __init__(self, connection: ToolCaller) -> None:
        self.connection = connection

    def _model(self, model: type[M], tool: str, arguments: Mapping[str, Any]) -> M:
        data = self.connection.call(tool, arguments)
        return _shaped(self.connection.name, tool, lambda: model.model_validate(data))

    def send_approved_draft(
        self, path: str, note_hash: str | None = None, arrival: Arrival | None = None
    ) -> SendEmailResult:
        arrival = arrival or Arrival()
        arguments: dict[str, Any] = {"path": path, "arrival": arrival.kind}
        if note_hash is not None:
            arguments["note_hash"] = note_hash
        if arrival.at is not None:
            arguments["arrived_at"] = arrival.at
        if arrival.source_changed_at is not None:
            arguments["source_changed_at"] = arrival.source_changed_at
        return self._model(SendEmailResult, "send_approved_draft", arguments)

    def list_new_emails(self, max_results: int) -> NewEmails:
        return self._model(NewEmails, "list_new_emails", {"max_results": max_results})

    def ack_new_emails(self, cursor: str, message_ids: Sequence[str], failed_ids: Sequence[str] = ()) -> AckResult:
        return self._model(
            AckResult,
            "ack_new_emails",
            {"cursor": cursor, "message_ids": list(message_ids), "failed_ids": list(failed_ids)},
        )

    def list_emails(self, query: str, max_results: int) -> EmailList:
        return self._model(EmailList, "list_emails", {"query": query, "max_results": max_results})

    def get_email(self, message_id: str) -> EmailFull:
        return self._model(EmailFull, "get_email", {"message_id": message_id})

    def add_label(self, message_id: str, label_name: str) -> LabelResult:
        return self._model(LabelResult, "add_label", {"message_id": message_id, "label_name": label_name})
