"""What H0 tells the human: one collector (h0.report.collect) and its renderers — the terminal's
`h0 status` (h0.report.text), the vault's H0_Dashboard.md and daily briefing (h0.report.dashboard) —
and the audit trail read back for `h0 log` (h0.report.sends, h0.report.trail; the command is h0.cli's)."""
