"""Whether the daemon may start on a vault: it exists, and H0 can write everywhere it files.

A send is irreversible; filing it afterwards is not optional. So before the daemon sends
anything it proves, with a real file created and removed in each folder, that it can
write where a sent note goes (Done/), where a held one goes back (Drafts/), where a
bounced one goes (Logs/failed/), where the audit trail goes (Logs/), the folder it moves
approved notes out of (Approved/) and the vault folder itself (its lock lives there).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from h0.errors import InvalidRequest, NotFound
from h0.platform.fileio import typed_os_error
from h0.vault.layout import APPROVED, DONE, DRAFTS, FAILED, LOGS

# "" is the vault folder itself. A folder that is missing is created on first use, inside
# its parent, which is on this list before it.
WRITABLE_FOLDERS = ("", APPROVED, DONE, DRAFTS, LOGS, FAILED)

_SET_VAULT = "Set VAULT_PATH (or --vault) to your Obsidian vault, then run `h0 init` to add H0's folders."


def check_vault_writable(root: Path) -> None:
    """Return if the daemon can file every note it sends; raise a typed error saying what to do if not.

    NotFound: the vault folder is missing. InvalidRequest: it (or an H0 folder in it) is a
    file, or a parent of it is. PermissionDenied: read-only or not ours. InternalError:
    the disk is full. The message is one line and names every folder that failed.
    """
    root = Path(os.path.abspath(root))
    _check_root(root)
    failures: list[tuple[str, OSError]] = []
    for name in WRITABLE_FOLDERS:
        folder = root / name if name else root
        label = f"{name}/" if name else f"the vault folder {root}"
        try:
            mode = os.stat(folder).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            failures.append((label, exc))
            continue
        if not stat.S_ISDIR(mode):
            raise InvalidRequest(
                f"{name} in the vault is a file, not a folder: H0 files notes there. Move the file "
                "away and run `h0 init`, then start again.",
                path=name,
            )
        error = _probe(folder)
        if error is not None:
            failures.append((label, error))
    if failures:
        labels = [label for label, _ in failures]
        first = failures[0][1]
        typed = typed_os_error(first, f"write in {', '.join(labels)}", labels[0])
        folders = {label: errno.errorcode.get(exc.errno or 0, str(exc.errno)) for label, exc in failures}
        raise type(typed)(
            f"{typed.message} H0 checks this before it sends anything; nothing was sent.",
            **typed.details,
            folders=folders,
        )


def _check_root(root: Path) -> None:
    try:
        mode = os.stat(root).st_mode
    except FileNotFoundError:
        raise NotFound(f"The vault folder {root} does not exist. {_SET_VAULT}", path=str(root)) from None
    except NotADirectoryError:
        blocker = _file_on_the_way(root)
        raise InvalidRequest(
            f"The vault folder {root} cannot exist: {blocker} is a file, not a folder. {_SET_VAULT}",
            path=str(root),
        ) from None
    except OSError as exc:
        raise typed_os_error(exc, f"open the vault folder {root}", str(root)) from exc
    if not stat.S_ISDIR(mode):
        raise InvalidRequest(f"The vault folder {root} is a file, not a folder. {_SET_VAULT}", path=str(root))


def _file_on_the_way(root: Path) -> Path:
    """The ancestor of `root` that is a file (the reason for ENOTDIR)."""
    for parent in reversed(root.parents):
        if os.path.isfile(parent):
            return parent
    return root.parent


def _probe(folder: Path) -> OSError | None:
    """Create, write and remove a hidden file in `folder`; the OSError if any step fails.

    A real write, not os.access(): access() answers for the permission bits, not for a
    read-only mount, a full disk, or an ACL.
    """
    probe = folder / f".h0-probe-{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        return exc
    try:
        try:
            os.write(fd, b"h0")
        finally:
            os.close(fd)
    except OSError as exc:
        _remove(probe)
        return exc
    try:
        os.unlink(probe)
    except OSError as exc:
        return exc
    return None


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
