#!/usr/bin/env python3
"""Authorise H0 to use your Gmail: the one-time OAuth consent that writes token.json.

    python scripts/gmail_auth.py                 # opens a browser
    python scripts/gmail_auth.py --no-browser    # prints the URL (e.g. over SSH; forward the port)

Same as `h0 auth gmail`. You need an OAuth client of type "Desktop app" from Google Cloud
Console (APIs & Services → Credentials), saved as credentials.json (or GMAIL_CREDENTIALS_PATH).
The token is written to GMAIL_TOKEN_PATH (default ./token.json) with mode 0600.

Scope requested: gmail.modify only — read, label and send; no permanent deletion, no settings.

If your OAuth app is left in Google's "Testing" publishing state, Google expires its refresh
tokens after 7 days: the mail server then answers auth_required and you run this again.
Publishing the app ("In production") avoids that; for your own account no review is needed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from h0.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["auth", "gmail", *sys.argv[1:]]))
