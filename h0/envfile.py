"""H0's one reader of `.env` files: strict, so a line it cannot read stops H0 instead of being skipped.

python-dotenv (what pydantic-settings reads with) warns about a line it cannot parse and goes on
without it: `PRIVATE_FOLDERS="Journal, Health` with its quote left open was dropped, and the
private folders became readable. Here every line means one thing or is an `EnvFileError` naming
the file, the line and how to write it.

The format, one setting a line:

- `NAME=value`, or `export NAME=value`; spaces around the name and `=` are allowed. A name is
  letters, digits and `_`, not starting with a digit; a name set twice in one file is an error.
- Blank lines and lines starting with `#` are comments. Line ends are LF or CRLF; a UTF-8 byte
  order mark at the start (Windows Notepad writes one) is skipped.
- An unquoted value runs to the end of the line, or to a ` #` comment; spaces around it are trimmed.
- `'single quotes'`: the text as written, nothing escaped. `"double quotes"`: `\\\\` is a backslash
  and `\\"` a quote; any other backslash is an error (a Windows path like `"C:\\Users\\new"` would
  otherwise hold a line break). A quote closes on its own line (no setting holds a line break);
  after it only a `# comment` may follow.
- `${NAME}` in an unquoted or double-quoted value is the environment variable NAME, else a name
  set on an earlier line of the file (the environment wins, as it does for settings); a name set
  nowhere is an error.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from h0.errors import InvalidRequest

__all__ = ["EnvFileError", "read_env_file"]

MAX_ENV_BYTES = 1024 * 1024  # a .env of settings is a few KB: a bigger file is not one
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_ESCAPED = {"\\": "\\", '"': '"'}
_Lookup = Callable[[str], "str | None"]  # a name's value: the file's earlier lines, then the environment


class EnvFileError(InvalidRequest):
    """A .env file H0 cannot read exactly: which file, which line, and how to write it."""

    def __init__(self, path: Path | str, line: int | None, what: str) -> None:
        shown = os.path.abspath(path)
        where = f"{shown}, line {line}" if line is not None else shown
        super().__init__(f"{where}: {what}", path=shown, line=line)


def read_env_file(path: Path | str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings a .env file sets, name → value, names as written (EnvFileError for any line it cannot
    read, and for a file that cannot be read at all: a missing file is the caller's to decide)."""
    env = os.environ if environ is None else environ
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would hold every command until written to
            raise EnvFileError(path, None, "is not a regular file (a folder, pipe, socket or device)")
        with open(path, "rb") as handle:
            data = handle.read(MAX_ENV_BYTES + 1)
    except OSError as exc:
        raise EnvFileError(path, None, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_ENV_BYTES:
        raise EnvFileError(path, None, f"is larger than {MAX_ENV_BYTES // 1024} KB: it is not a file of settings")
    values: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, raw in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        try:
            line = raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError:
            raise EnvFileError(path, number, "is not UTF-8 text; save the file as UTF-8") from None
        parsed = _parse_line(path, number, line, lambda name: env.get(name, values.get(name)))
        if parsed is None:
            continue
        name, value = parsed
        earlier = first_line.get(name.upper())
        if earlier is not None:
            raise EnvFileError(path, number, f"{name} is set again (first on line {earlier}); keep one of the two")
        first_line[name.upper()] = number
        values[name] = value
    return values


def _parse_line(path: Path | str, number: int, line: str, lookup: _Lookup) -> tuple[str, str] | None:
    text = line.strip(" \t")
    if not text or text.startswith("#"):
        return None
    control = next((c for c in text if (ord(c) < 32 and c != "\t") or ord(c) == 127), None)
    if control is not None:
        raise EnvFileError(path, number, f"holds a control character ({control!r}); delete it")
    if text.startswith(("export ", "export\t")):
        text = text[len("export") :].lstrip(" \t")
    if "=" not in text:
        raise EnvFileError(
            path, number, "has no `=`: write a setting as NAME=value, or start the line with # to make it a comment"
        )
    name, rest = (part.strip(" \t") for part in text.split("=", 1))
    if not _NAME.fullmatch(name):
        shown = name[:40] or "(nothing)"
        raise EnvFileError(
            path, number, f"`{shown}` is not a setting name (letters, digits and _, e.g. VAULT_PATH=/path/to/vault)"
        )
    if rest[:1] in ("'", '"'):
        return name, _quoted(path, number, name, rest, lookup)
    value = re.split(r"[ \t]#", rest, maxsplit=1)[0].rstrip(" \t")
    return name, _expand(path, number, name, value, lookup)


def _quoted(path: Path | str, number: int, name: str, rest: str, lookup: _Lookup) -> str:
    quote = rest[0]
    out: list[str] = []
    index = 1
    while index < len(rest):
        char = rest[index]
        if char == quote:
            break
        if char == "\\" and quote == '"':
            following = rest[index + 1 : index + 2]
            if following not in _ESCAPED:
                shown = f"\\{following}" if following else "\\ at the end"
                raise EnvFileError(
                    path,
                    number,
                    f"{name}: `{shown}` is not an escape H0 reads; inside double quotes write a backslash as \\\\, "
                    "or use single quotes (nothing is escaped there), or no quotes",
                )
            out.append(_ESCAPED[following])
            index += 2
            continue
        out.append(char)
        index += 1
    else:
        raise EnvFileError(
            path,
            number,
            f"{name}: the {quote} opened here is not closed on this line (a value is one line): "
            f"close it, e.g. {name}={quote}…{quote}",
        )
    after = rest[index + 1 :].strip(" \t")
    if after and not after.startswith("#"):
        raise EnvFileError(
            path, number, f"{name}: text after the closing {quote}; put all of the value inside the quotes"
        )
    value = "".join(out)
    return value if quote == "'" else _expand(path, number, name, value, lookup)


def _expand(path: Path | str, number: int, name: str, value: str, lookup: _Lookup) -> str:
    def replace(found: re.Match[str]) -> str:
        ref = found.group(1)
        if not _NAME.fullmatch(ref):
            raise EnvFileError(path, number, f"{name}: `${{{ref}}}` is not a variable H0 can fill in (${{NAME}})")
        given = lookup(ref)
        if given is None:
            raise EnvFileError(
                path, number, f"{name}: ${{{ref}}} is set neither in the environment nor on an earlier line"
            )
        return given

    expanded = _REFERENCE.sub(replace, value)
    if "${" in _REFERENCE.sub("", value):
        raise EnvFileError(
            path, number, f"{name}: a `${{` without its closing }}; write ${{NAME}}, or use single quotes"
        )
    return expanded
