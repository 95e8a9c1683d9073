"""What H0 tells the human: one collector (h0.report.collect) and its renderers — the terminal's
`h0 status` (h0.report.text), the vault's H0_Dashboard.md and daily briefing
(h0.report.dashboard) — and `h0 log`, the audit trail read back (h0.report.logview)."""
