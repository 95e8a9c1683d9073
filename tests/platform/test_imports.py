"""Every h0 module imports where there is no `fcntl` (Windows): only h0.platform knows the OS."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import h0

ROOT = Path(__file__).resolve().parents[2]

# `import fcntl` fails for H0's own modules, as it would on Windows. Third-party packages keep
# theirs: the MCP SDK imports fcntl only where sys.platform says POSIX, and on Windows it takes
# its own branch — hiding fcntl from it here would test the SDK on an OS it does not claim.
PROBE = """
import builtins, importlib, sys, warnings
real_import = builtins.__import__

def no_fcntl_for_h0(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {}).get("__name__") or ""
    if name.split(".")[0] in ("fcntl", "termios", "resource", "pwd", "grp") and importer.split(".")[0] == "h0":
        raise ImportError(f"{importer} imports {name}: there is no {name} on Windows")
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = no_fcntl_for_h0
warnings.simplefilter("ignore")
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {exc!r}")
print("\\n".join(failed))
"""

# And with fcntl gone for everyone, the modules that own the locks still import and lock.
NO_FCNTL_AT_ALL = """
import sys, tempfile, os, warnings
sys.modules["fcntl"] = None
warnings.simplefilter("ignore")
from pathlib import Path
from h0.pipeline.lock import VaultLock, daemon_holder
from h0.vault.audit import AuditLog
root = Path(tempfile.mkdtemp())
AuditLog(root / "Logs", "h0").write("hello", durable=True)
lock = VaultLock(root)
lock.acquire()
print(daemon_holder(root)["pid"] == os.getpid())
lock.release()
"""


def h0_modules() -> list[str]:
    # h0.__main__ runs the command line when imported: it is the CLI, not a library module.
    return [m.name for m in pkgutil.walk_packages(h0.__path__, "h0.") if m.name != "h0.__main__"]


def test_every_h0_module_imports_without_fcntl():
    modules = h0_modules()
    assert len(modules) > 40 and "h0.pipeline.lock" in modules and "h0.vault.audit" in modules
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *modules], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_nothing_outside_h0_platform_asks_which_os_it_is_on():
    asks = ("sys.platform", "os.name", "platform.system(", "import fcntl", "import msvcrt", "import winreg")
    offenders = []
    for path in sorted((ROOT / "h0").rglob("*.py")):
        if "platform" in path.relative_to(ROOT / "h0").parts[:1]:
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(ROOT)}: {ask}" for ask in asks if ask in text]
    assert offenders == []


def test_the_lock_and_audit_modules_import_and_work_with_no_fcntl_anywhere():
    """filelock then offers its soft lock: the vault lock and the audit log still import and run."""
    proc = subprocess.run([sys.executable, "-c", NO_FCNTL_AT_ALL], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"
