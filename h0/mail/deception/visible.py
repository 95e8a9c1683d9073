"""What renders as nothing: text a person cannot see in Obsidian's reading view (or in an HTML mail).

The human approves a draft by reading it in Obsidian, so what is sent must be what reading
view shows. The message goes out as the note's Markdown *source*, so everything reading view
hides would reach the recipient unseen by the sender — and text that is invisible anywhere
(a zero-width space, a bidi override, a tag character) can carry a message nobody read.
This module finds all of it; callers refuse, never strip (stripping would send something
nobody read either):

- `find_in_markdown(text)` — a draft's body above the cut-off, as Obsidian renders it:
  invisible characters everywhere (fenced code included), and outside code: comments
  (`%%…%%`, `<!-- -->`), link reference definitions (`[x]: http://…`), links with no text,
  embeds and images (`![[…]]`, `![…](…)`: reading view shows the picture or note, the mail
  carries the bare reference), HTML other than plain formatting tags, math that draws
  nothing or can be coloured away, entities that decode to an invisible character, folded
  callouts, block IDs, and code blocks Obsidian runs instead of showing (`query`, `dataview`…).
- `find_in_text(text)` — plain text (a message's text part, a model's reply): characters only.
- `find_in_html(html)` (h0.mail.deception.visible_html) — an HTML part: characters (also behind entities), comments, elements
  that never render (`<script>`, `<style>`, `<template>`…) and elements hidden by attribute
  or inline style (`hidden`, `display:none`, `visibility:hidden`, `font-size:0`, `opacity:0`…).
- `problems(found)` — one sentence per kind, naming the lines and the fix in Obsidian terms.

Characters: Unicode format characters (category Cf: zero-width space/joiners, bidi controls,
soft hyphen, word joiner, BOM, tags…), the other default-ignorable code points (fillers,
the combining grapheme joiner, variation selectors out of place) and the blank Braille
pattern. Three uses are visible and allowed: a zero-width joiner inside an emoji sequence
(👩‍💻), a joiner or non-joiner between letters of scripts that need them (Persian, Indic),
and the tag sequences of the three flags Unicode recommends (England, Scotland, Wales).
Control characters (C0/C1 but tab) are reported as their own kind. The characters are judged
in `h0.mail.deception.invisible_chars`; this module adds Markdown, HTML and the wording of the refusals.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from h0.mail.deception.invisible_chars import (
    CHARACTER,
    CONTROL,
    SUSPECT,
    Invisible,
    find_in_text,
    hidden_character,
    line_of,
)
from h0.printable import one_line

# The kinds beyond characters (CONTROL, CHARACTER: h0.mail.deception.invisible_chars); `problems` reports them in `order`.
COMMENT, REFERENCE, EMPTY_LINK, EMBED, HTML, MATH, ENTITY, FOLDED, BLOCK_ID, RENDERED = (
    "comment",
    "reference",
    "empty_link",
    "embed",
    "html",
    "math",
    "entity",
    "folded",
    "block_id",
    "rendered_block",
)

_AGAIN = "then approve again"
EXCERPT = 40  # characters of the hidden text a problem shows

# ------------------------------------------------------------------------------ Markdown

# Openers of text Obsidian hides in reading view, and what closes each.
_HIDDEN = re.compile(r"%%|<!--")
_CLOSERS = {"%%": "%%", "<!--": "-->"}
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Code blocks Obsidian (or a common plugin) runs and shows the result of, not the text.
_RENDERED_LANGUAGES = frozenset({"query", "dataview", "dataviewjs", "tasks", "mermaid"})
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# CommonMark link reference definition, also inside quotes and list items; its destination may
# be on the next line. Footnotes ([^1]: …) are shown, so they are not among them.
_REFERENCE = re.compile(
    r"^(?:[ \t]*(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]))*[ \t]{0,3}\[(?!\^)(?:[^\[\]\\\n]|\\.){1,999}\]:[ \t]*\n?[ \t]*\S",
    re.MULTILINE,
)
_EMPTY_LINK = re.compile(r"(?<![!\\])\[[\s\u00a0]*\](?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\]\n]*\])")
_EMBED = re.compile(r"(?<!\\)!\[\[[^\]\n]*\]\]|(?<!\\)!\[[^\]\n]*\]\((?:[^()\n]|\([^()\n]*\))*\)")
_ATTRIBUTE = r"""\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?"""
_OPEN_TAG = re.compile(rf"(?<!\\)<([A-Za-z][A-Za-z0-9-]*)((?:{_ATTRIBUTE})*)\s*/?>")
_CLOSE_TAG = re.compile(r"(?<!\\)</([A-Za-z][A-Za-z0-9-]*)\s*>")
_OTHER_HTML = re.compile(r"(?<!\\)(?:<\?.*?\?>|<![A-Za-z][^>]*>|<!\[CDATA\[.*?\]\]>)", re.DOTALL)
# Formatting tags that hide nothing, when they carry no attribute (an `<a>` only its href).
_PLAIN_TAGS = frozenset(
    (
        "a",
        "b",
        "i",
        "u",
        "s",
        "em",
        "strong",
        "del",
        "ins",
        "mark",
        "sub",
        "sup",
        "br",
        "hr",
        "p",
        "div",
        "span",
        "blockquote",
        "code",
        "kbd",
        "pre",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "th",
        "td",
        "caption",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "small",
        "big",
        "cite",
        "q",
        "abbr",
        "center",
    )
)
_ATTR_NAME = re.compile(r"\s+([A-Za-z_:][A-Za-z0-9_.:-]*)")
_MATH_BLOCK = re.compile(r"(?<!\\)\$\$(.+?)\$\$", re.DOTALL)
_MATH_INLINE = re.compile(r"(?<![\\$])\$(?![\s$])((?:[^$\n\\]|\\.)+?)(?<![\s\\])\$(?![\d$])")
# TeX that paints text away, or styles it where CSS could.
_MATH_HIDING = re.compile(
    r"\\(?:[hv]?phantom|color|textcolor|colorbox|fcolorbox|style|class|cssId|htmlStyle|"
    r"htmlClass|htmlId|htmlData|require|mathchoice)(?![A-Za-z])"
)
_MATH_SPACING = re.compile(
    r"\\(?:[,:;!> ]|(?:q?quad|enspace|enskip|thinspace|medspace|thickspace|negthinspace|negmedspace|"
    r"negthickspace|space|nobreakspace|hfill?|strut|mathstrut|relax|displaystyle|textstyle|scriptstyle|"
    r"scriptscriptstyle|(?:[hv]space|[hm]?skip|m?kern)\*?\s*(?:\{[^{}]*\}|[-+]?[\d.]+\s*[a-z]{2}))(?![A-Za-z]))"
    r"|\\(?:text|mbox|mathrm|mathbf|mathit|mathsf|mathtt|operatorname|hbox)\s*\{\s*\}|[{}~\s&]|\\\\"
)
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_FOLDED = re.compile(r"^(?:[ \t]*>)+[ \t]*\[![^\]\n]*\]-", re.MULTILINE)
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^[A-Za-z0-9-]+[ \t]*$", re.MULTILINE)


def find_in_markdown(text: str) -> list[Invisible]:
    """Everything in a note body that Obsidian's reading view shows as nothing (see the module)."""
    found = find_in_text(text)
    found += [Invisible(COMMENT, line, "comment") for line in _comment_lines(text)]
    masked, rendered = _mask_code(text)
    found += [Invisible(RENDERED, line, f"```{lang}") for line, lang in rendered]
    if "[" in masked:
        found += _matches(_REFERENCE, masked, REFERENCE, whole_line=True)
        found += _matches(_EMPTY_LINK, masked, EMPTY_LINK)
    if "![" in masked:
        found += _matches(_EMBED, masked, EMBED)
    if "<" in masked:
        found += _html_in_markdown(masked)
    if "$" in masked:
        found += _math(masked)
    if "&" in masked:
        found += entities(masked)
    if "[!" in masked:
        found += _matches(_FOLDED, masked, FOLDED)
    if "^" in masked:
        found += _matches(_BLOCK_ID, masked, BLOCK_ID)
    return sorted(found, key=lambda f: f.line)


def _comment_lines(text: str) -> list[int]:
    """1-based lines where a %%…%% or <!-- --> comment starts (an unclosed one hides all after it)."""
    lines: list[int] = []
    pos = 0
    line = 1
    while (match := _HIDDEN.search(text, pos)) is not None:
        line += text.count("\n", pos, match.start())
        lines.append(line)
        close = text.find(_CLOSERS[match.group()], match.end())
        if close == -1:
            break
        end = close + len(_CLOSERS[match.group()])
        line += text.count("\n", match.start(), end)
        pos = end
    return lines


def _mask_code(text: str) -> tuple[str, list[tuple[int, str]]]:
    """`text` with fenced code blocks and code spans blanked (offsets and line ends kept): Obsidian
    shows them as written. Also the code blocks it renders instead of showing: (line, language)."""
    out: list[str] = []
    rendered: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            out.append(" " * len(line))
            continue
        opening = _FENCE.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = opening.group(1)
            language = opening.group(2).strip().split(" ", 1)[0].lower() if opening.group(2).strip() else ""
            if language in _RENDERED_LANGUAGES:
                rendered.append((number, language))
            out.append(" " * len(line))
            continue
        out.append(_CODE_SPAN.sub(lambda m: " " * len(m.group()), line) if "`" in line else line)
    return "\n".join(out), rendered


def _matches(pattern: re.Pattern[str], text: str, kind: str, *, whole_line: bool = False) -> list[Invisible]:
    found = []
    for m in pattern.finditer(text):
        what = m.group()
        if whole_line:
            end = text.find("\n", m.start())
            what = text[m.start() : end if end != -1 else len(text)]
        found.append(Invisible(kind, line_of(text, m.start()), one_line(what, EXCERPT)))
    return found


def _html_in_markdown(text: str) -> list[Invisible]:
    found = []
    for match in _OPEN_TAG.finditer(text):
        tag, attributes = match.group(1).lower(), match.group(2)
        names = {name.lower() for name in _ATTR_NAME.findall(attributes)}
        if tag in _PLAIN_TAGS and (not names or (tag == "a" and names == {"href"})):
            continue
        found.append(Invisible(HTML, line_of(text, match.start()), one_line(match.group(), EXCERPT)))
    for match in _CLOSE_TAG.finditer(text):
        if match.group(1).lower() not in _PLAIN_TAGS:
            found.append(Invisible(HTML, line_of(text, match.start()), one_line(match.group(), EXCERPT)))
    found += _matches(_OTHER_HTML, text, HTML)
    return found


def _math(text: str) -> list[Invisible]:
    found = []
    spans = [(m, "$$") for m in _MATH_BLOCK.finditer(text)]
    blocked = [(m.start(), m.end()) for m, _ in spans]
    spans += [
        (m, "$") for m in _MATH_INLINE.finditer(text) if not any(start <= m.start() < end for start, end in blocked)
    ]
    for match, fence in spans:
        body = match.group(1)
        if _MATH_HIDING.search(body) or not _draws_something(body):
            found.append(
                Invisible(MATH, line_of(text, match.start()), one_line(f"{fence}{body.strip()}{fence}", EXCERPT))
            )
    return found


def _draws_something(tex: str) -> bool:
    previous = None
    while previous != tex:  # \text{\,} empties only once its argument has
        previous, tex = tex, _MATH_SPACING.sub("", tex)
    return bool(tex)


def entities(text: str) -> list[Invisible]:
    found = []
    for match in _ENTITY.finditer(text):
        decoded = html.unescape(match.group())
        if decoded != match.group() and any(
            hidden_character(decoded, i) for i in range(len(decoded)) if SUSPECT.match(decoded, i)
        ):
            found.append(Invisible(ENTITY, line_of(text, match.start()), match.group()))
    return found


# ------------------------------------------------------------------------------ in words


def lines(numbers: Iterable[int]) -> str:
    """'line 3' or 'lines 1, 4 and 2 more' (at most ten named)."""
    unique = sorted(set(numbers))
    shown = ", ".join(str(n) for n in unique[:10]) + (f" and {len(unique) - 10} more" if len(unique) > 10 else "")
    return f"line {shown}" if len(unique) == 1 else f"lines {shown}"


def _examples(items: list[Invisible], limit: int = 3) -> str:
    seen: list[str] = []
    for item in items:
        if item.what not in seen:
            seen.append(item.what)
    text = ", ".join(f"`{w}`" if not w[0].isalpha() else w for w in seen[:limit])
    return text + (f" and {len(seen) - limit} more" if len(seen) > limit else "")


def problems(
    found: list[Invisible], *, cutoff: str | None = None, where: str = "The message", again: str = _AGAIN
) -> list[str]:
    """One sentence per kind found, each naming the lines and what to do in the note (`again`: the
    last step, "then approve again" for a draft)."""
    by_kind: dict[str, list[Invisible]] = {}
    for item in found:
        by_kind.setdefault(item.kind, []).append(item)
    below = f"Remove it, or move it below `{cutoff}`" if cutoff else "Remove it"
    sentences = {
        COMMENT: lambda at, ex: (
            f"{where} contains text Obsidian hides in reading view (%%…%% or <!-- -->) above the cut-off line: "
            f"{at}. {below}, {again}."
            if cutoff
            else f"{where} contains comments (<!-- -->) whose text a reader never sees: {at}; remove them."
        ),
        CONTROL: lambda at, ex: (
            f"{where} contains invisible control characters at {at}; retype those lines "
            f"(paste them as plain text), {again}."
        ),
        CHARACTER: lambda at, ex: (
            f"{where} contains characters that show as nothing at {at}: {ex}. They could carry text nobody sees; "
            f"delete them (retype those lines, or paste them as plain text), {again}."
        ),
        REFERENCE: lambda at, ex: (
            f"{where} has a link reference definition at {at} ({ex}): reading view shows nothing there, but the "
            f"email would carry the line as text. Delete it, or write the link inline as [text](address), "
            f"{again}."
        ),
        EMPTY_LINK: lambda at, ex: (
            f"{where} has a link with no text at {at} ({ex}), which shows as nothing; give it words you can see "
            f"or delete it, {again}."
        ),
        EMBED: lambda at, ex: (
            f"{where} embeds a note, image or file at {at} ({ex}): reading view shows its content, but the email "
            f"would carry only that reference. Paste the text you mean to send, or attach the file with "
            f"`attachments:` in the frontmatter, and delete the embed, {again}."
        ),
        HTML: lambda at, ex: (
            f"{where} has HTML that can hide text or shows nothing at {at} ({ex}). Delete the HTML and write plain "
            f"text or Markdown, {again}."
        ),
        MATH: lambda at, ex: (
            f"{where} has math that draws nothing or can be coloured away at {at} ({ex}). Delete it or write "
            f"what you mean as text, {again}."
        ),
        ENTITY: lambda at, ex: f"{where} has an HTML entity that shows as nothing at {at} ({ex}); delete it, {again}.",
        FOLDED: lambda at, ex: (
            f"{where} has a folded callout at {at} ({ex}): its content stays hidden until clicked. Remove the `-` "
            f"after the callout type so it shows unfolded, or write the text without a callout, {again}."
        ),
        BLOCK_ID: lambda at, ex: (
            f"{where} has a block ID at {at} ({ex}), which Obsidian hides in reading view; delete it, {again}."
        ),
        RENDERED: lambda at, ex: (
            f"{where} has a code block at {at} ({ex}) that Obsidian runs and shows the result of, not its text; "
            f"write the text you mean to send instead, {again}."
        ),
    }
    order = [COMMENT, CONTROL, CHARACTER, REFERENCE, EMPTY_LINK, EMBED, HTML, MATH, ENTITY, FOLDED, BLOCK_ID, RENDERED]
    return [
        sentences[kind](lines(i.line for i in by_kind[kind]), _examples(by_kind[kind]))
        for kind in order
        if kind in by_kind
    ]


__all__ = ["Invisible", "entities", "find_in_markdown", "find_in_text", "lines", "problems"]
