"""Dovecot for the tests, when it is installed: the IMAP server users' mailboxes mostly run.

Debian's `dovecot-imapd` (`apt-get install dovecot-imapd`; nothing of it needs to be running)
is started as a child process, `dovecot -F -c <conf>`, with a config of its own in a temporary
folder: IMAP only, on a free loopback port, no TLS, one user from a passwd-file, maildir under
the folder, base_dir (the master's sockets, the login processes' directory) and the log there
too. It runs unprivileged-style: every Dovecot process runs as one ordinary user (the test
runner's own; when the tests run as root, `nobody`, since Dovecot refuses root for login
processes and mail access) and nothing is chrooted.

The folders follow Debian's `conf.d/15-mailboxes.conf` (Drafts, Junk, Trash, "Sent" and "Sent
Messages" as SPECIAL-USE `\\Sent`, created only when used), plus what this account has: an Archive
folder and its Sent folder under a localized name, `Envoyés` (a French Thunderbird's), marked
`\\Sent`, so H0 must find it by SPECIAL-USE (a name guess would miss it) and must carry a
non-ASCII name (modified UTF-7 on the wire). Keywords are free (PERMANENTFLAGS has `\\*`), IDLE
is on by default.

`dovecot_binary()` is None when Dovecot is not installed: the fixtures then skip.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from tests.fakes.imap_server import PASSWORD, USER, PymapServer, _wait_for_port, free_port

SENT_FOLDER = "Envoyés"
UNPRIVILEGED = "nobody"  # who runs Dovecot when the tests run as root


def dovecot_binary() -> str | None:
    """The `dovecot` program (Debian puts it in /usr/sbin, often not on a user's PATH), or None."""
    found = shutil.which("dovecot")
    if found is None:
        found = next(
            (str(p) for p in (Path("/usr/sbin/dovecot"), Path("/usr/local/sbin/dovecot")) if p.is_file()), None
        )
    return found


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


CONF = """\
# H0's test Dovecot: {root}
protocols = imap
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
instance_name = h0-test-{port}
log_path = {root}/dovecot.log
info_log_path = {root}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# The tests try a wrong password on purpose: no 2 s delay after it, and no penalty that would slow
# every later login from 127.0.0.1 (anvil's, switched off below).
auth_failure_delay = 0
default_internal_user = {user}
default_internal_group = {group}
default_login_user = {user}
first_valid_uid = {uid}
last_valid_uid = {uid}
first_valid_gid = {gid}
mail_location = maildir:{root}/mail/%n
mail_uid = {uid}
mail_gid = {gid}

passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%n
}}

namespace inbox {{
  inbox = yes
  separator = /
  mailbox Drafts {{
    special_use = \\Drafts
  }}
  mailbox Junk {{
    special_use = \\Junk
  }}
  mailbox Trash {{
    special_use = \\Trash
  }}
  mailbox Sent {{
    special_use = \\Sent
  }}
  mailbox "Sent Messages" {{
    special_use = \\Sent
  }}
  mailbox {sent} {{
    special_use = \\Sent
    auto = subscribe
  }}
  mailbox Archive {{
    special_use = \\Archive
    auto = subscribe
  }}
}}

service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
service stats {{
  chroot =
}}
"""


class DovecotServer(PymapServer):
    """`dovecot -F` with its own config in a temporary folder; one user (USER / PASSWORD) with INBOX,
    Archive and a SPECIAL-USE Sent folder named `Envoyés`. The tests' client (deliver, empty, uids,
    flags, messages) is PymapServer's: both are driven only over IMAP."""

    kind = "dovecot"
    sent = SENT_FOLDER

    def __init__(self, root: Path) -> None:
        if os.geteuid() == 0:
            # Everything Dovecot touches must be reachable by `nobody`: not under pytest's 0700 folder.
            self._own_root = Path(tempfile.mkdtemp(prefix="h0-dovecot-"))
            root.mkdir(parents=True, exist_ok=True)
            (root / "dovecot-root").write_text(f"{self._own_root}\n")  # where to look when a test fails
            runner = pwd.getpwnam(UNPRIVILEGED)
        else:
            self._own_root = None
            runner = pwd.getpwuid(os.geteuid())
        super().__init__(self._own_root or root)
        self.user, self.password = USER, PASSWORD
        self.uid, self.gid = runner.pw_uid, runner.pw_gid
        self.run_as, self.group = runner.pw_name, grp.getgrgid(runner.pw_gid).gr_name
        self.binary = dovecot_binary()

    @property
    def conf(self) -> Path:
        return self.root / "dovecot.conf"

    @property
    def maildir(self) -> Path:
        return self.root / "mail" / "h0"

    def _prepare(self) -> None:
        for sub in ("run", "state", "mail", "home"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(
            CONF.format(
                root=self.root,
                port=self.port,
                user=self.run_as,
                group=self.group,
                uid=self.uid,
                gid=self.gid,
                sent=_quoted(SENT_FOLDER),
            ),
            encoding="utf-8",
        )
        (self.root / "passwd").write_text(f"{USER}:{{PLAIN}}{PASSWORD}::::::\n")
        if self._own_root is not None:
            self.root.chmod(0o755)
            for path in (self.root, *self.root.rglob("*")):
                os.chown(path, self.uid, self.gid)

    def start(self) -> DovecotServer:
        if self.binary is None:
            raise RuntimeError("dovecot is not installed (Debian: apt-get install dovecot-imapd)")
        if not self.conf.exists():
            self._prepare()
        log = open(self.root / "dovecot.stderr", "ab")  # noqa: SIM115 — the child keeps it
        self.process = subprocess.Popen(
            [self.binary, "-F", "-c", str(self.conf)],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            user=self.uid if self._own_root is not None else None,
            group=self.gid if self._own_root is not None else None,
            extra_groups=[] if self._own_root is not None else None,
            start_new_session=True,  # its own process group: stop() ends every Dovecot process it started
        )
        log.close()
        try:
            _wait_for_port(self.port, self.process)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc} (Dovecot's log: {self.log_tail()})") from None
        return self

    def stop(self) -> None:
        group = self.process.pid if self.process is not None and self.process.poll() is None else None
        super().stop()  # SIGTERM: the master stops its services and removes master.pid
        if group is not None:
            # An imap process in IDLE outlives its master by up to ~10 s; end it now, as systemd
            # ends the whole service's cgroup on `systemctl stop dovecot`.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGTERM)
        # A restart must not find the old master's pid file while it is still shutting down.
        pid_file = self.root / "run" / "master.pid"
        for _ in range(100):
            if not pid_file.exists():
                break
            time.sleep(0.05)

    def cleanup(self) -> None:
        self.stop()
        if self._own_root is not None:
            shutil.rmtree(self._own_root, ignore_errors=True)

    def log_tail(self, lines: int = 20) -> str:
        text = ""
        for name in ("dovecot.stderr", "dovecot.log"):
            path = self.root / name
            if path.exists():
                text += path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def renumber(self, folder: str = "INBOX") -> int:
        """Dovecot loses a folder's UID list and index (a restore from backup, a rebuilt index): every
        message gets a new UID under a new UIDVALIDITY; the keywords stay in the file names. Returns the
        new UIDVALIDITY."""
        with self._lock:
            client = self._shared()
            before = int(client.select_folder(folder, readonly=True)[b"UIDVALIDITY"])
        self.stop()
        path = self.maildir if folder == "INBOX" else self.maildir / f".{folder}"
        for name in (
            "dovecot-uidlist",
            "dovecot.index",
            "dovecot.index.log",
            "dovecot.index.log.2",
            "dovecot.index.cache",
        ):
            (path / name).unlink(missing_ok=True)
        self.start()
        with self._lock:
            after = int(self._shared().select_folder(folder, readonly=True)[b"UIDVALIDITY"])
        assert after != before, "Dovecot kept UIDVALIDITY"
        return after


__all__ = ["SENT_FOLDER", "DovecotServer", "dovecot_binary", "free_port"]
