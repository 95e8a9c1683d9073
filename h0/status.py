"""`h0 status`: what is in the vault, what is waiting for the human, what H0 did lately."""

from __future__ import annotations

import datetime as dt
from typing import Any

from h0.errors import H0Error
from h0.pipeline.lock import daemon_holder
from h0.vault import AuditLog, Vault
from h0.vault.audit import utcnow
from h0.vault.layout import APPROVED, DRAFTS, LOGS

RECENT = 10


def collect_status(settings: Any) -> dict[str, Any]:
    vault = Vault(settings.vault_path)
    logs = vault.root / LOGS
    since_week = utcnow() - dt.timedelta(days=7)
    since_day = utcnow() - dt.timedelta(days=1)
    h0_log = AuditLog(logs, "h0")
    sends = list(h0_log.records(since=since_week, event="email_sent"))[-RECENT:]
    errors: list[dict[str, Any]] = []
    for stream in ("h0", "gmail_mcp", "vault_mcp"):
        errors += [r for r in AuditLog(logs, stream).records(since=since_day) if r.get("severity") in ("error", "critical")]
    errors.sort(key=lambda r: r.get("timestamp", ""))
    return {
        "vault": str(vault.root),
        "mail_backend": settings.mail_backend,
        "daemon": daemon_holder(vault.root),
        "folders": vault.counts(),
        "waiting_for_approval": _paths(vault, DRAFTS, "status:pending_approval"),
        "approved_not_yet_sent": _paths(vault, APPROVED, None),
        "recent_sends": [
            {k: r.get(k) for k in ("timestamp", "path", "to", "subject", "already_sent")} for r in sends
        ],
        "recent_errors": [
            {k: r.get(k) for k in ("timestamp", "event", "path", "message", "error")} for r in errors[-RECENT:]
        ],
    }


def _paths(vault: Vault, folder: str, flt: str | None) -> list[str]:
    try:
        return [n.path for n in vault.list_notes(folder, flt).notes]
    except H0Error:
        return []


def render_status(status: dict[str, Any]) -> str:
    daemon = status["daemon"]
    lines = [f"Vault: {status['vault']}   (mail backend: {status['mail_backend']})"]
    if daemon is None:
        lines.append("Daemon: not running — start it with `h0 watch`")
    else:
        lines.append(f"Daemon: running (pid {daemon.get('pid', '?')}, since {daemon.get('started', '?')})")
    lines.append("Notes: " + ", ".join(f"{name} {count}" for name, count in status["folders"].items()))
    waiting = status["waiting_for_approval"]
    lines.append(f"Drafts waiting for your approval: {len(waiting)}")
    lines += [f"  {path}" for path in waiting[:RECENT]]
    approved = status["approved_not_yet_sent"]
    if approved:
        lines.append(f"Approved but not yet sent: {len(approved)}")
        lines += [f"  {path}" for path in approved[:RECENT]]
    lines.append(f"Recent sends: {len(status['recent_sends'])}")
    for send in status["recent_sends"]:
        to = ", ".join(send["to"]) if isinstance(send.get("to"), list) else send.get("to")
        lines.append(f"  {send['timestamp']}  {send.get('path')} → {to}")
    lines.append(f"Errors in the last 24 h: {len(status['recent_errors'])}")
    for err in status["recent_errors"]:
        lines.append(f"  {err['timestamp']}  {err.get('event')}  {err.get('path') or ''}  {err.get('message') or ''}")
    return "\n".join(lines)
