"""A fake LLM API: a real local HTTP server speaking two real wire formats.

`POST /v1/chat/completions` answers like OpenAI's chat completions, `POST /v1/messages`
like Anthropic's messages API. Tests queue replies (status, JSON, headers, delay) and read
back every request the real SDK sent. Any other path is a 404, so a client speaking the
wrong wire format fails loudly.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@dataclass
class Reply:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    json: dict[str, Any]

    @property
    def texts(self) -> list[str]:
        """Every message text in the request (system prompt first), whichever wire format."""
        out = [self.json["system"]] if isinstance(self.json.get("system"), str) else []
        for message in self.json.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.extend(part.get("text", "") for part in content if isinstance(part, dict))
        return out

    @property
    def last_text(self) -> str:
        return self.texts[-1]


# --------------------------------------------------------------------------- reply builders


def openai_answer(content: str | None, *, refusal: str | None = None, finish_reason: str = "stop") -> Reply:
    return Reply(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
    )


def anthropic_answer(text: str, *, stop_reason: str = "end_turn") -> Reply:
    return Reply(
        {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "fake-model",
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }
    )


RECORDINGS = Path(__file__).parent / "recordings"


def recorded(
    name: str, *, content: str | None = None, status: int = 200, headers: dict[str, str] | None = None
) -> Reply:
    """A response body as a real server sends it (tests/triage/recordings/<name>.json: Ollama, LM Studio,
    vLLM, llama.cpp's server, OpenAI, Anthropic — their extra fields, reasoning fields and blocks,
    finish reasons and error shapes). `content` replaces the answer's text (an OpenAI-compatible
    `message.content`, Anthropic's text block), so a hostile answer travels in a real server's body."""
    body = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    if content is not None:
        if "choices" in body:
            body["choices"][0]["message"]["content"] = content
        else:
            texts = [block for block in body["content"] if block.get("type") == "text"]
            if texts:
                texts[0]["text"] = content
            else:
                body["content"].append({"type": "text", "text": content})
    return Reply(body, status=status, headers=headers or {})


def error_reply(status: int, message: str, *, headers: dict[str, str] | None = None) -> Reply:
    # Both SDKs read `error.message`; Anthropic also wants `type: error` at the top.
    body = {"type": "error", "error": {"type": "api_error", "message": message, "code": None}}
    return Reply(body, status=status, headers=headers or {})


def decision_json(decision: str, **fields: Any) -> str:
    payload = {"decision": decision, "confidence": 0.8, "reasoning": f"fake model says {decision}"}
    if decision in ("draft_reply", "urgent"):
        payload["reply_body"] = "Hi,\n\nThanks — will do.\n\nBest regards,"
    if decision == "delegate":
        payload["delegate_to"] = "Sam"
    payload.update(fields)
    return json.dumps(payload)


# --------------------------------------------------------------------------- the server


class FakeLLM:
    """Start with `with FakeLLM() as fake:`; `fake.url` is the server root."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self._script: deque[Reply] = deque()
        self._responder: Callable[[Seen], Reply] | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a handler still sleeping out a timeout test must not block teardown
        # A short poll interval: shutdown() waits for the serving loop to look, 0.5 s by default.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def queue(self, *replies: Reply) -> FakeLLM:
        with self._lock:
            self._script.extend(replies)
        return self

    def respond_with(self, responder: Callable[[Seen], Reply]) -> FakeLLM:
        """Answer every request (once the queue is empty) by calling `responder`."""
        self._responder = responder
        return self

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            if self._script:
                return self._script.popleft()
        if self._responder is not None:
            return self._responder(seen)
        return error_reply(500, "the fake LLM has no reply queued")

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _make_handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like the real APIs
        disable_nagle_algorithm = True  # TCP_NODELAY: else delayed ACKs stall each reply ~40 ms

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path not in (OPENAI_PATH, ANTHROPIC_PATH):
                self._send(error_reply(404, f"no such endpoint {self.path}"))
                return
            seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw or b"{}"))
            reply = fake._next(seen)
            if reply.delay:
                time.sleep(reply.delay)
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            data = json.dumps(reply.body).encode() if not isinstance(reply.body, bytes) else reply.body
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
