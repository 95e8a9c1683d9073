"""What an HTML part hides from its reader: characters (also as entities), comments with text, elements
that never render, and elements hidden by attribute or inline style (h0.mail.deception.visible says why it matters)."""

from __future__ import annotations

import re

from h0.mail.deception.invisible_chars import Invisible, find_in_text, line_of
from h0.mail.deception.visible import COMMENT, EXCERPT, HTML, entities
from h0.printable import one_line

_NEVER_SHOWN = frozenset(
    {
        "script",
        "style",
        "template",
        "noscript",
        "title",
        "object",
        "iframe",
        "embed",
        "frameset",
        "noframes",
        "datalist",
        "dialog",
        "slot",
    }
)
_HIDING_STYLE = re.compile(
    r"(?:^|[;{\s])(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)"
    r"|opacity\s*:\s*(?:0+(?:\.0*)?|\.0+)\s*%?\s*(?:!important\s*)?(?:;|$)"
    r"|font-size\s*:\s*(?:0+(?:\.0*)?|0*\.[0-4]\d*|1(?=px|pt))(?:px|pt|em|rem|%|vw|vh|ex|ch)?\s*(?:!important\s*)?(?:;|$)"
    r"|(?:max-)?(?:height|width)\s*:\s*0+(?:px|em|rem|%)?\s*(?:!important\s*)?(?:;|$)"
    r"|color\s*:\s*(?:transparent|rgba\([^)]*,\s*0*\.?0+\s*\))|text-indent\s*:\s*-\d{3,}"
    r"|(?:left|top|right|bottom|margin-left|margin-top)\s*:\s*-\d{3,}|clip(?:-path)?\s*:|transform\s*:\s*scale\(\s*0"
    r"|mso-hide\s*:\s*all|line-height\s*:\s*0+(?:px)?\s*(?:;|$))",
    re.IGNORECASE,
)
_STYLE_ATTR = re.compile(r"""\sstyle\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_HIDDEN_ATTR = re.compile(r"""\s(?:hidden|aria-hidden\s*=\s*["']?true)(?=[\s/=]|$)""", re.IGNORECASE)
_ANY_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)(\s[^>]*)?>", re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.DOTALL)


def find_in_html(markup: str) -> list[Invisible]:
    """What an HTML part hides from its reader: characters (also as entities), comments with
    text, elements that never render, elements hidden by attribute or inline style."""
    found = find_in_text(markup) + entities(markup)
    for match in _HTML_COMMENT.finditer(markup):
        if match.group(1).strip():
            found.append(Invisible(COMMENT, line_of(markup, match.start()), "comment"))
    for match in _ANY_TAG.finditer(markup):
        tag, attributes = match.group(1).lower(), match.group(2) or ""
        hidden = tag in _NEVER_SHOWN or (tag == "input" and "hidden" in attributes.lower())
        hidden = hidden or bool(_HIDDEN_ATTR.search(attributes))
        style = _STYLE_ATTR.search(attributes)
        if style:
            hidden = hidden or bool(_HIDING_STYLE.search(next(g for g in style.groups() if g is not None)))
        if hidden:
            found.append(Invisible(HTML, line_of(markup, match.start()), one_line(match.group(), EXCERPT)))
    return sorted(found, key=lambda f: f.line)
