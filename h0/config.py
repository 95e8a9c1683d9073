"""H0's settings: one pydantic model read once from the environment and `.env`.

Names are the ones of ARCHITECTURE.md (and the spec where it has them); `.env.example`
lists every one with a comment. Precedence: keyword overrides, the real environment,
`./.env`, the `.env` beside the project, then the defaults here. `H0_ENV_FILE` names
another .env file (an empty value reads none — the tests use that). The files are read by
H0's strict reader (h0.envfile): a line it cannot read stops H0 with the file and the line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from h0.envfile import EnvFileError, read_env_file

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BUNDLED_VAULT = PROJECT_ROOT / "vault"

SmtpSecurity = Literal["starttls", "ssl", "none"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # pydantic-settings' own .env source (python-dotenv: a line it cannot parse is skipped) is left out.
        return init_settings, env_settings, EnvFiles(settings_cls, env_files()), file_secret_settings

    vault_path: Path = Field(default=BUNDLED_VAULT, description="The Obsidian vault H0 works in.")

    mail_backend: Literal["outbox", "gmail", "smtp", "imap", "outlook"] = "outbox"
    gmail_token_path: Path = Path("token.json")
    gmail_credentials_path: Path = Path("credentials.json")
    gmail_api_endpoint: str | None = None
    gmail_token_uri: str | None = None
    gmail_query: str = "is:unread in:inbox"
    # An idle poll is one history.list call (2 quota units): 10 s costs 720 units an hour.
    gmail_poll_seconds: float = Field(default=10.0, gt=0)
    gmail_ingested_label: str = "H0/ingested"

    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_secure: SmtpSecurity = "starttls"
    smtp_user: str | None = None
    smtp_pass: SecretStr | None = None
    smtp_from: str | None = None
    smtp_timeout_seconds: float = Field(default=30.0, gt=0)

    # MAIL_BACKEND=imap: mail is read over IMAP (INBOX, IDLE push) and sent over SMTP_* above,
    # with a copy APPENDed to the Sent folder (h0.mail.providers.imap). SMTP_USER/PASS default to these.
    imap_host: str | None = None
    imap_port: int | None = None  # default: 993 for ssl, 143 otherwise
    imap_secure: SmtpSecurity = "ssl"
    imap_user: str | None = None
    imap_pass: SecretStr | None = None
    imap_timeout_seconds: float = Field(default=30.0, gt=0)
    # Hold an IDLE connection on INBOX so new mail wakes ingest at once (GMAIL_POLL_SECONDS stays the
    # safety net); off for servers without IDLE or that drop idle connections.
    imap_idle: bool = True

    # How the IMAP and SMTP logins of MAIL_BACKEND=imap prove who they are: `password` (IMAP_PASS, SMTP_PASS)
    # or `oauth2` (XOAUTH2 with a token from `h0 auth outlook` for a Microsoft mailbox, from `h0 auth gmail`
    # for Gmail's IMAP; h0.mail.providers.xoauth2). Which sign-in is asked is IMAP_OAUTH_PROVIDER, by default
    # read from IMAP_HOST (gmail.com, googlemail.com: google; anything else: microsoft).
    imap_auth: Literal["password", "oauth2"] = "password"
    imap_oauth_provider: Literal["microsoft", "google"] | None = None

    # MAIL_BACKEND=outlook: Outlook.com, Hotmail and Microsoft 365 over Microsoft Graph (h0.mail.providers.outlook),
    # signed in once with `h0 auth outlook` (msal's device code flow; docs/mailboxes.md). OUTLOOK_AUTHORITY:
    # `common` for any account, a tenant (id or domain) for a work or school account only. OUTLOOK_CLIENT_ID:
    # the public client id of the app you register. OUTLOOK_TOKEN_PATH: msal's token cache (mode 0600).
    # GRAPH_API_ENDPOINT: Graph's base URL (national clouds, tests).
    outlook_authority: str = "https://login.microsoftonline.com/common"
    outlook_client_id: str | None = None
    outlook_token_path: Path = Path("outlook_token.json")
    graph_api_endpoint: str = "https://graph.microsoft.com/v1.0"
    # New mail is looked for with one delta call (Graph allows 10,000 calls per 10 minutes per mailbox): every
    # 2 s, a message is a note about 1–2 s after it arrives; 720 calls an idle hour at 5 s.
    outlook_poll_seconds: float = Field(default=2.0, gt=0)

    rate_limit_per_hour: int = Field(default=100, ge=0)
    rate_limit_per_day: int = Field(default=500, ge=0)
    max_retries: int = Field(default=3, ge=0)
    retry_delay_ms: int = Field(default=2000, ge=0)
    retry_backoff_multiplier: float = Field(default=2.0, ge=1.0)
    # The mail server answers every tool call within this many seconds (its client gives up at 30): a
    # provider slower than that is answered "try again" while the call goes on (h0.mcp.base).
    mail_answer_seconds: float = Field(default=20.0, gt=0, le=25.0)

    sweep_interval_seconds: float = Field(default=30.0, gt=0)
    # A note written in place in Approved/ (not moved there) is sent only after it has been
    # unchanged this long: editors autosave while the human is still typing.
    approval_settle_seconds: float = Field(default=10.0, ge=0)
    # A draft (or attachment) whose content changed less than this before it arrived in Approved/
    # was not read in that form: it is held ("changed 2 s before you approved it"). A write by an
    # agent through H0's vault server counts for APPROVAL_SETTLE_SECONDS instead (h0.vault.last_change).
    approval_fresh_seconds: float = Field(default=3.0, ge=0)
    # How the daemon sees changes: `native` (inotify, FSEvents, ReadDirectoryChangesW) or
    # `polling` (network drives, sync folders: a look at the trigger folders twice a second).
    h0_watcher: Literal["native", "polling"] = "native"
    # The cockpit in the vault, kept current by the daemon: H0_Dashboard.md at the vault's
    # root and a daily briefing note in Briefings/ (h0.report.dashboard).
    dashboard_enabled: bool = True
    briefings_enabled: bool = True

    # H0's own bookkeeping (send ledger, keys, caps, filing journal) and its per-installation
    # secret live outside the vault: default a per-user folder keyed by the vault (see h0.state).
    h0_state_dir: Path | None = None
    # Which computer sends a synced vault's drafts (Logs/H0_Sender.md, h0.vault.sending_computer): this computer's name
    # there. Empty: the OS's machine id and host name; set it where those change at every start (a container).
    h0_machine: str = Field(default="", max_length=64)
    # A claim this computer takes (another computer's gone stale, or its own after hours off) waits this long before
    # it sends: longer than the sync tool takes to bring another computer's claim after a wake-up.
    sending_claim_settle_seconds: float = Field(default=120.0, ge=0, le=86_400)
    # Loud opt-in: let any MCP client send free content with send_email (caps still apply).
    # Off by default: only a note the human moved into Approved/ can be sent.
    allow_unapproved_send: bool = False
    # Vault folders whose notes are private (comma-separated, sub-folders included), besides those the
    # vault's .h0/private-folders records: never in a prompt or an MCP client's answers (h0.vault.disclosure).
    private_folders: str = ""

    # Follow-ups (h0.handlers.followup.follow_up): an email that needs you, or a message of yours that asked
    # something, with no answer after this many working days (Monday to Friday, local time; a
    # weekend does not count, and a message written on one counts from Monday 00:00) is surfaced.
    follow_up_days: float = Field(default=2.0, ge=0, le=366)
    # Your own addresses, comma-separated, besides the ones H0 knows (SMTP_FROM, SMTP_USER,
    # IMAP_USER, and every address your sent mail comes from): where you receive mail, for addressing.
    # Whether you wrote a message is h0.mail.owner's to say, from your sent mail, never from an address.
    owner_emails: str = ""

    # Mail in (docs/mail-in.md): `h0 import` and a first mail sync turn only mail received in the last
    # WORK_WINDOW_DAYS (and not answered by you) into Needs_Action/ notes; older mail and your sent
    # mail are kept as history H0 learns from (past replies, voice, threads, follow-ups).
    work_window_days: float = Field(default=30.0, gt=0, le=3660)

    llm_provider: str = "rules"
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_base_url: str | None = None

    # Real models (h0.triage.llm, h0.handlers.llmwait): how long one request to the model may
    # take (a local model on a CPU is slow), and how long an email waits for a model that is down,
    # refusing or timing out — left pending and retried with the work queue's backoff — before the
    # rules decide it (the note says so). Whichever cap comes first.
    llm_timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    llm_wait_max_hours: float = Field(default=24.0, ge=0, le=24 * 30)
    llm_wait_max_attempts: int = Field(default=50, ge=1, le=10_000)

    # Drafting (h0.drafting). How much of the owner's notes (profile, lessons, people, linked and
    # related notes, past replies) a prompt may carry, in tokens (about 4 characters each); the
    # email and its thread have their own bounds.
    draft_context_tokens: int = Field(default=3000, ge=200, le=100_000)
    # A revision (`h0: shorter, offer Friday` in a draft) waits until the draft has been unchanged
    # this long, so an instruction still being typed is not acted on.
    revise_settle_seconds: float = Field(default=5.0, ge=0)

    # Calendar (h0.calendar, docs/calendar.md): where the owner's busy times come from, so a
    # scheduling reply proposes real free times. CALENDAR_ICS: comma-separated .ics files or
    # http(s) iCal feed addresses (fetched with a timeout, cached in H0's state folder, refreshed
    # every CALENDAR_REFRESH_MINUTES; a feed that fails keeps its last good copy). CALDAV_*: every
    # calendar of one CalDAV account (Fastmail, iCloud, Nextcloud, Radicale).
    calendar_ics: str = ""
    caldav_url: str | None = None
    caldav_user: str | None = None
    caldav_password: SecretStr | None = None
    calendar_refresh_minutes: float = Field(default=15.0, ge=0, le=24 * 60)
    calendar_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    calendar_max_mb: float = Field(default=20.0, gt=0, le=1024)

    log_level: Literal["TRACE", "DEBUG", "INFO", "SUCCESS", "WARNING", "ERROR", "CRITICAL"] = "INFO"

    @property
    def mail_poll_seconds(self) -> float:
        """How often the daemon looks for new mail: OUTLOOK_POLL_SECONDS for Outlook, else GMAIL_POLL_SECONDS."""
        return self.outlook_poll_seconds if self.mail_backend == "outlook" else self.gmail_poll_seconds

    @property
    def calendar_configured(self) -> bool:
        """Whether CALENDAR_ICS or CALDAV_URL names a source (h0.calendar.sources reads them)."""
        return bool(self.calendar_ics.strip(", \t") or self.caldav_url)

    @field_validator("smtp_secure", "imap_secure", mode="before")
    @classmethod
    def _secure_aliases(cls, value: object) -> object:
        # The email contract spells it as a boolean: true = implicit TLS, false = STARTTLS.
        text = str(value).strip().lower()
        return {"true": "ssl", "1": "ssl", "tls": "ssl", "false": "starttls", "0": "starttls"}.get(text, text)

    @field_validator("private_folders", mode="before")
    @classmethod
    def _folder_list(cls, value: object) -> object:
        # Also accepted as a list (a .env written by hand, or keyword overrides in tests).
        if isinstance(value, (list, tuple)):
            return ",".join(str(v) for v in value)
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        return str(value).strip().upper()

    @field_validator("h0_state_dir", mode="after")
    @classmethod
    def _absolute_state_dir(cls, value: Path | None) -> Path | None:
        return value.expanduser().absolute() if value is not None else None

    @field_validator("vault_path", mode="before")
    @classmethod
    def _vault_given(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():  # `VAULT_PATH=` would be the working folder
            raise ValueError("empty: set it to your vault's folder, or remove it")
        return value

    @field_validator("vault_path", mode="after")
    @classmethod
    def _absolute_vault(cls, value: Path) -> Path:
        return value.expanduser().absolute()


def setting_problems(exc: ValidationError) -> list[str]:
    """Every bad setting of a ValidationError, one line each: the setting, its value, what is allowed."""
    lines = []
    for error in exc.errors(include_url=False):
        name = ".".join(str(part) for part in error["loc"]).upper() or "(settings)"
        value = error.get("input")
        shown = repr(value) if isinstance(value, (str, int, float)) and len(str(value)) < 80 else "(that value)"
        expected = (error.get("ctx") or {}).get("expected")
        allowed = f"allowed: {expected}" if expected else error["msg"]
        lines.append(f"{name}={shown}: {allowed}")
    return lines


# Variables that look like settings but belong to other tools: never reported as misspelt H0 settings.
_FOREIGN = frozenset({"PATH", "HOME", "LANG", "SHELL", "USER", "TERM", "PWD", "TMPDIR", "VIRTUAL_ENV"})


class EnvFiles(PydanticBaseSettingsSource):
    """The settings of the .env files, read by h0.envfile (a line it cannot read is an EnvFileError):
    a later file wins over an earlier one, names in any case."""

    def __init__(self, settings_cls: type[BaseSettings], files: tuple[Path | str, ...] | None) -> None:
        super().__init__(settings_cls)
        self.values = env_file_values(files)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name.upper()), field_name, False

    def __call__(self) -> dict[str, Any]:
        return {
            name: self.values[name.upper()] for name in self.settings_cls.model_fields if name.upper() in self.values
        }


def env_file_values(files: tuple[Path | str, ...] | None) -> dict[str, str]:
    """Every variable the .env files set, by upper-case name, a later file winning. A file that does not
    exist is skipped, unless H0_ENV_FILE named it."""
    named = bool(os.environ.get("H0_ENV_FILE", "").strip())
    values: dict[str, str] = {}
    for path in files or ():
        if not Path(path).exists():
            if named:
                raise EnvFileError(path, None, "does not exist (H0_ENV_FILE names it); fix H0_ENV_FILE or unset it")
            continue
        values.update({name.upper(): value for name, value in read_env_file(path).items()})
    return values


def unknown_settings(
    environ: dict[str, str] | None = None, files: tuple[Path | str, ...] | None = None
) -> list[tuple[str, str]]:
    """(name, the H0 setting it is probably a misspelling of) for every variable in the environment
    or the .env files that is not a setting but close to one — a setting H0 would silently ignore."""
    import difflib

    known = {name.upper() for name in Settings.model_fields}
    names = set((environ if environ is not None else os.environ).keys())
    names |= set(env_file_values(files if files is not None else env_files()))
    found = []
    for name in sorted(names):
        upper = name.upper()
        if upper in known or upper in _FOREIGN or "_" not in upper:
            continue
        close = difflib.get_close_matches(upper, known, n=1, cutoff=0.84)
        if close:
            found.append((name, close[0]))
    return found


def in_checkout(cwd: Path | None = None) -> bool:
    """Whether H0 runs from its own checkout: the working folder is the project folder (or inside it),
    and the project ships the demo vault — where the README's first command runs."""
    if not (PROJECT_ROOT / "pyproject.toml").is_file() or not BUNDLED_VAULT.is_dir():
        return False
    try:
        here = (cwd or Path.cwd()).resolve()
        return here.is_relative_to(PROJECT_ROOT.resolve())
    except OSError:  # the working folder was deleted
        return False


def vault_unset(settings: Settings, cwd: Path | None = None) -> str | None:
    """Why these settings name no vault to work in (one line saying what to set), or None. The bundled demo
    vault stands in for an unset VAULT_PATH only in H0's own checkout: anywhere else (Claude Code started in
    another folder, a service, a script) a server or daemon on the demo vault would look like one on yours."""
    if "vault_path" in settings.model_fields_set or in_checkout(cwd):
        return None
    return (
        "VAULT_PATH is not set: set it to your Obsidian vault (VAULT_PATH=/path/to/vault in the environment "
        "or a .env file), or pass --vault; the demo vault is used only from H0's own folder."
    )


def using_bundled_vault(settings: Settings) -> bool:
    """Whether H0 runs on the demo vault shipped with it because VAULT_PATH was never set."""
    try:
        return Path(settings.vault_path).resolve() == BUNDLED_VAULT.resolve()
    except OSError:
        return False


def env_files() -> tuple[Path | str, ...] | None:
    """The .env files to read: `H0_ENV_FILE` names one (empty: none), else the defaults."""
    override = os.environ.get("H0_ENV_FILE")
    if override is None:
        return (PROJECT_ROOT / ".env", ".env")
    return (override.strip(),) if override.strip() else None


def load_settings(**overrides: Any) -> Settings:
    """Read settings now; keyword overrides win over environment and .env (EnvFileError: a .env line
    that cannot be read)."""
    return Settings(**overrides)
