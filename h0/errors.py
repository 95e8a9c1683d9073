"""The typed errors every H0 layer raises and every MCP tool returns.

Each error carries one of the codes of ARCHITECTURE.md, a message a person can act on,
and a `details` mapping of plain JSON values. `to_dict()` is the wire shape
`{"error", "message", "details"}`; a few fields the spec shows at top level
(`retry_after`, `path`) are repeated there.
"""

from __future__ import annotations

from typing import Any, ClassVar

ERROR_CODES = (
    "auth_required",
    "not_found",
    "rate_limited",
    "permission_denied",
    "parse_error",
    "send_failed",
    "invalid_request",
    "conflict",
    "not_supported",
    "mcp_unavailable",
    "internal_error",
)

_PROMOTED = ("retry_after", "path")


class H0Error(Exception):
    """Base class: an expected failure with a code, a message and JSON details."""

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = {k: v for k, v in details.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message, "details": self.details}
        for key in _PROMOTED:
            if key in self.details:
                body[key] = self.details[key]
        return body

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.details!r})"


class AuthRequired(H0Error):
    code = "auth_required"


class NotFound(H0Error):
    code = "not_found"


class RateLimited(H0Error):
    code = "rate_limited"

    @property
    def retry_after(self) -> float:
        return float(self.details.get("retry_after", 0))


class PermissionDenied(H0Error):
    code = "permission_denied"


class ParseError(H0Error):
    code = "parse_error"


class SendFailed(H0Error):
    code = "send_failed"


class InvalidRequest(H0Error):
    code = "invalid_request"


class Conflict(H0Error):
    code = "conflict"


class NotSupported(H0Error):
    code = "not_supported"


class McpUnavailable(H0Error):
    code = "mcp_unavailable"


class InternalError(H0Error):
    code = "internal_error"


_BY_CODE: dict[str, type[H0Error]] = {
    cls.code: cls
    for cls in (
        AuthRequired,
        NotFound,
        RateLimited,
        PermissionDenied,
        ParseError,
        SendFailed,
        InvalidRequest,
        Conflict,
        NotSupported,
        McpUnavailable,
        InternalError,
    )
}


def error_from_dict(body: dict[str, Any]) -> H0Error:
    """Rebuild a typed error from its wire shape (used by the MCP client)."""
    cls = _BY_CODE.get(str(body.get("error")), InternalError)
    details = body.get("details") or {}
    if not isinstance(details, dict):
        details = {"details": details}
    for key in _PROMOTED:
        if key in body and key not in details:
            details[key] = body[key]
    return cls(str(body.get("message", "")), **details)
