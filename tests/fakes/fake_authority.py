"""A local HTTPS OAuth authority shaped like Microsoft Entra's v2.0 endpoints, which msal talks to unchanged.

`https://127.0.0.1:PORT/<tenant>` serves OIDC discovery (`/v2.0/.well-known/openid-configuration`), the
device code endpoint (`/oauth2/v2.0/devicecode`) and the token endpoint (`/oauth2/v2.0/token`: the device
code grant and the refresh token grant), answering as Entra does: `authorization_pending` until the user
signed in, an id_token and `client_info` msal builds its account from, `invalid_grant` for a refresh token
that was revoked. TLS uses a self-signed certificate made for 127.0.0.1 at start; point msal at it with
REQUESTS_CA_BUNDLE=authority.ca_file (h0.mail.providers.outlook_auth passes it as msal's `verify=`).

    with FakeGraph() as graph, FakeAuthority(graph=graph) as authority:
        settings = … OUTLOOK_AUTHORITY=authority.authority, OUTLOOK_CLIENT_ID=authority.client_id …
        authority.approve_next = True            # the user signs in as soon as the code is shown (default)
        authority.revoke()                       # every refresh token issued so far is refused from now on

Access tokens it issues are given to the fake Graph (`graph.accept`), so a signed-in H0 can call it.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import secrets
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.fakes.loopback import LoopbackServer

if TYPE_CHECKING:
    from tests.fakes.fake_graph import FakeGraph

TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate (and its key) for 127.0.0.1 and localhost, valid for a day."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "h0 fake authority")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "authority.pem", folder / "authority.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class FakeAuthority(LoopbackServer):
    """One tenant's sign-in for one user. Thread-safe; start() binds a free loopback port with TLS."""

    def __init__(
        self,
        *,
        graph: FakeGraph | None = None,
        username: str = "h0.tester@contoso.example",
        client_id: str = "11111111-2222-3333-4444-555555555555",
        tenant: str = TENANT,
        access_token_seconds: int = 3600,
    ) -> None:
        self.graph, self.username, self.client_id, self.tenant = graph, username, client_id, tenant
        self.access_token_seconds = access_token_seconds
        self.approve_next = True  # the user signs in at once; False: authorization_pending until `approve()`
        self.interval = 0  # the seconds msal waits between polls of the token endpoint
        self.pending_polls = 0
        self.device_codes: dict[str, dict[str, Any]] = {}
        self.refresh_tokens: set[str] = set()
        self.granted_scopes: str | None = None  # answer these scopes instead of the ones asked (None: as asked)
        self.requests: list[tuple[str, str]] = []  # (path, grant_type or "") in order
        self.refreshes = 0
        self._folder = Path(tempfile.mkdtemp(prefix="h0-fake-authority-"))
        self.ca_file, self._key_file = self_signed(self._folder)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeAuthority:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_file, self._key_file)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self._serve(server, "fake-authority")
        return self

    @property
    def base(self) -> str:
        assert self._server is not None, "start() the fake first"
        return f"https://127.0.0.1:{self._server.server_address[1]}/{self.tenant}"

    @property
    def authority(self) -> str:
        """The value for OUTLOOK_AUTHORITY."""
        return self.base

    def revoke(self) -> None:
        """Every refresh token issued so far is refused from now on (invalid_grant)."""
        with self._lock:
            self.refresh_tokens.clear()

    # -- the endpoints ---------------------------------------------------------------------

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": f"{self.base}/v2.0",
            "authorization_endpoint": f"{self.base}/oauth2/v2.0/authorize",
            "token_endpoint": f"{self.base}/oauth2/v2.0/token",
            "device_authorization_endpoint": f"{self.base}/oauth2/v2.0/devicecode",
            "response_types_supported": ["code"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }

    def device_code(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("client_id") != self.client_id:
            return 400, {"error": "unauthorized_client", "error_description": "AADSTS700016: unknown client"}
        code, user_code = secrets.token_urlsafe(24), secrets.token_hex(4).upper()
        with self._lock:
            self.device_codes[code] = {"scope": form.get("scope", ""), "approved": self.approve_next}
        return 200, {
            "device_code": code,
            "user_code": user_code,
            "verification_uri": "https://microsoft.com/devicelogin",
            "expires_in": 900,
            "interval": self.interval,
            "message": f"To sign in, use a web browser to open https://microsoft.com/devicelogin and enter {user_code}.",
        }

    def approve(self) -> None:
        with self._lock:
            for entry in self.device_codes.values():
                entry["approved"] = True

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        grant = form.get("grant_type", "")
        with self._lock:
            self.requests.append(("token", grant))
            if form.get("client_id") != self.client_id:
                return 400, {"error": "invalid_client", "error_description": "AADSTS700016: unknown client"}
            if grant == DEVICE_GRANT:
                entry = self.device_codes.get(form.get("device_code", ""))
                if entry is None:
                    return 400, {"error": "expired_token", "error_description": "AADSTS70019: code expired"}
                if not entry["approved"]:
                    return 400, {"error": "authorization_pending", "error_description": "AADSTS70016: pending"}
                del self.device_codes[form["device_code"]]
                return 200, self._tokens(entry["scope"])
            if grant == "refresh_token":
                self.refreshes += 1
                if form.get("refresh_token") not in self.refresh_tokens:
                    return 400, {
                        "error": "invalid_grant",
                        "error_description": "AADSTS50173: The provided grant has expired due to it being revoked.",
                        "error_codes": [50173],
                    }
                return 200, self._tokens(form.get("scope", ""))
        return 400, {"error": "unsupported_grant_type", "error_description": grant}

    def _tokens(self, scope: str) -> dict[str, Any]:
        """A token answer as Entra gives it (call with the lock held)."""
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        self.refresh_tokens.add(refresh)
        if self.graph is not None:
            self.graph.accept(access)
        oid = "00000000-0000-0000-66f3-3332eca7ea81"
        now = int(dt.datetime.now(dt.UTC).timestamp())
        claims = {
            "aud": self.client_id,
            "iss": f"{self.base}/v2.0",
            "iat": now,
            "nbf": now,
            "exp": now + 3600,
            "name": "H0 Tester",
            "oid": oid,
            "preferred_username": self.username,
            "sub": "fake-subject",
            "tid": self.tenant,
            "ver": "2.0",
        }
        id_token = ".".join([_b64(b'{"alg":"none","typ":"JWT"}'), _b64(json.dumps(claims).encode()), ""])
        granted = self.granted_scopes if self.granted_scopes is not None else scope
        return {
            "token_type": "Bearer",
            "scope": " ".join(s for s in granted.split() if s not in ("openid", "profile", "offline_access")),
            "expires_in": self.access_token_seconds,
            "ext_expires_in": self.access_token_seconds,
            "access_token": access,
            "refresh_token": refresh,
            "id_token": id_token,
            "client_info": _b64(json.dumps({"uid": oid, "utid": self.tenant}).encode()),
        }


def _handler_for(fake: FakeAuthority) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            with fake._lock:
                fake.requests.append((path, ""))
            if path == f"/{fake.tenant}/v2.0/.well-known/openid-configuration":
                self._reply(200, fake.discovery())
            else:
                self._reply(404, {"error": "not_found"})

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            if path == f"/{fake.tenant}/oauth2/v2.0/devicecode":
                self._reply(*fake.device_code(form))
            elif path == f"/{fake.tenant}/oauth2/v2.0/token":
                self._reply(*fake.token(form))
            else:
                self._reply(404, {"error": "not_found"})

    return Handler
