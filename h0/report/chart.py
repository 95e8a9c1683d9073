"""The send-ready rate of H0's drafts, week by week, as a Mermaid chart Obsidian draws (the dashboard)."""

from __future__ import annotations

from typing import Any


def send_ready_chart(drafts: dict[str, Any]) -> list[str]:
    """A Mermaid `xychart-beta` of the weekly send-ready rate (%); no lines while no week has a resolved draft.

    A week without resolved drafts is drawn as 0 and named so in the axis label ("W47 (none)"), so a
    quiet week is never read as a bad one.
    """
    weeks = drafts.get("weekly") or []
    if not any(week.get("resolved") for week in weeks):
        return []
    labels, values = [], []
    for week in weeks:
        short = str(week.get("week", "")).rsplit("-", 1)[-1]
        rate = week.get("send_ready_rate")
        labels.append(f'"{short}"' if rate is not None else f'"{short} (none)"')
        values.append(str(round(100 * rate)) if rate is not None else "0")
    return [
        "```mermaid",
        "xychart-beta",
        '    title "Drafts sent as written or lightly edited, % by week"',
        f"    x-axis [{', '.join(labels)}]",
        '    y-axis "send-ready %" 0 --> 100',
        f"    bar [{', '.join(values)}]",
        "```",
        "",
    ]
