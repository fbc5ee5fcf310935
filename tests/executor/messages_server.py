"""A loopback stand-in for the Anthropic Messages API, for tests and the benchmark.

It speaks just enough of ``POST /v1/messages`` for the real ``anthropic`` SDK to talk to it:
JSON replies with ``id``, ``type``, ``role``, ``content`` (text and thinking blocks), ``model``,
``stop_reason`` and ``usage``. Replies are scripted per request through routes matched on the
request body (system prompt or user text), and can be delayed, rate limited (429 with
``retry-after``), fail (500/529) or be malformed. Every request body is recorded so a test can
assert exactly what the evaluator and the generator were shown.

Run as a script (``python messages_server.py --delay 0.05``) it serves the ``bench`` script and
prints its base URL, so the benchmark can keep the server out of the measured process.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. ``raw`` (bytes) replaces the JSON body, to send something broken."""

    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None
    batch_result: str | None = None  # in a message batch: "expired" or "canceled"


_ids = itertools.count(1)


def message(
    text: str,
    *,
    thinking: str | None = None,
    model: str = "",
    input_tokens: int = 100,
    output_tokens: int = 50,
    delay: float = 0.0,
) -> Reply:
    """A successful Messages reply; ``thinking`` adds a thinking block before the text."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig-test"})
    content.append({"type": "text", "text": text})
    body = {
        "id": f"msg_test_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": model,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }
    return Reply(body=body, delay=delay)


def verdict(
    score: float,
    *,
    passed: bool | None = None,
    feedback: str = "ok",
    rubric: dict[str, float] | None = None,
    failure_category: str | None = None,
    suggested_fix: str | None = None,
    delay: float = 0.0,
) -> Reply:
    """An evaluator reply in the scoring schema. ``passed`` defaults to a (possibly wrong) guess
    so tests can show that the executor computes pass itself."""
    data = {
        "score": score,
        "pass": score >= 0.5 if passed is None else passed,
        "feedback": feedback,
        "rubric_scores": rubric if rubric is not None else {},
        "failure_category": failure_category,
        "suggested_fix": suggested_fix,
    }
    return message(json.dumps(data), delay=delay)


def error(status: int, *, retry_after: str | None = None, delay: float = 0.0) -> Reply:
    """An API error reply (429 rate limit, 500, 529 overloaded, 401 ...)."""
    kinds = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error",
             400: "invalid_request_error"}
    body = {"type": "error", "error": {"type": kinds.get(status, "api_error"),
                                       "message": f"scripted {status}"}}
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    # The SDK obeys x-should-retry when present; the executor must decide on its own.
    return Reply(status=status, body=body, headers=headers, delay=delay)


def malformed(delay: float = 0.0) -> Reply:
    """A 200 reply whose body is not valid JSON (a truncated proxy response)."""
    return Reply(raw=b'{"id": "msg_broken", "type": "message", "content": [', delay=delay)


def expired() -> Reply:
    """In a message batch: this request's result is ``expired`` (it was never processed)."""
    return Reply(batch_result="expired")


Responder = Callable[[dict[str, Any], int], Reply]
Predicate = Callable[[dict[str, Any]], bool]


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a request as one string."""
    system = body.get("system")
    if isinstance(system, list):
        return "".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return str(system or "")


def message_texts(body: dict[str, Any]) -> list[str]:
    """Every text of every message (any role), in order."""
    out = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return out


def all_text(body: dict[str, Any]) -> str:
    """Everything a model would read in this request."""
    return "\n".join([system_text(body), *message_texts(body)])


def system_contains(marker: str) -> Predicate:
    return lambda body: marker in system_text(body)


def text_contains(marker: str) -> Predicate:
    return lambda body: marker in all_text(body)


@dataclass
class _Route:
    predicate: Predicate
    responder: Responder
    hits: int = 0


def sequence(*replies: Reply) -> Responder:
    """Replies in order; the last one repeats."""
    seq = list(replies)
    lock = threading.Lock()
    state = {"i": 0}

    def respond(body: dict[str, Any], n: int) -> Reply:
        with lock:
            i = state["i"]
            state["i"] = i + 1
        return seq[min(i, len(seq) - 1)]

    return respond


@dataclass
class _Batch:
    """One message batch: its result lines (JSONL, in request order) and counts."""

    id: str
    created: float
    hold: float
    lines: list[bytes] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("succeeded", "errored", "canceled", "expired"), 0))

    def add(self, custom_id: str, params: dict[str, Any], reply: Reply) -> None:
        result: dict[str, Any]
        if reply.batch_result is not None:
            result = {"type": reply.batch_result}
        elif reply.status != 200 or reply.body is None or reply.raw is not None:
            body = reply.body if reply.body is not None and reply.status != 200 else {
                "type": "error", "error": {"type": "api_error", "message": "scripted"}}
            result = {"type": "errored", "error": {**body, "request_id": "req_test"}}
        else:
            message_body = dict(reply.body)
            message_body["model"] = message_body.get("model") or params.get("model", "")
            result = {"type": "succeeded", "message": message_body}
        self.counts[result["type"]] += 1
        line = {"custom_id": custom_id, "result": result}
        self.lines.append(json.dumps(line).encode() + b"\n")

    @property
    def ended(self) -> bool:
        return time.time() >= self.created + self.hold

    def describe(self, host: str) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created))
        ended = self.ended
        total = sum(self.counts.values())
        counts = dict(self.counts) if ended else {**dict.fromkeys(self.counts, 0),
                                                  "processing": total}
        counts.setdefault("processing", 0)
        return {
            "id": self.id, "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts, "created_at": stamp, "expires_at": stamp,
            "ended_at": stamp if ended else None, "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": (f"http://{host}/v1/messages/batches/{self.id}/results"
                            if ended else None),
        }


class MessagesServer:
    """A threaded loopback HTTP server with scripted routes and a request log."""

    def __init__(self, *, default_delay: float = 0.0) -> None:
        self.routes: list[_Route] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.default_delay = default_delay
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        # Message Batches: batches by id, the custom_ids of every create, and knobs.
        self.batches: dict[str, _Batch] = {}
        self.batch_creates: list[list[str]] = []
        self.batch_hold_s = 0.0  # a batch is in_progress this long after its creation
        self.expire_batches = 0  # the next N batches end with every request expired
        self.batch_retrieves = 0
        self.log_batch_requests = True  # the bench turns this off: its log would grow
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ scripting
    def route(self, predicate: Predicate, responder: Responder | Sequence[Reply] | Reply) -> None:
        """First matching route answers. A list of replies is played in order (last repeats)."""
        if isinstance(responder, Reply):
            responder = sequence(responder)
        elif not callable(responder):
            responder = sequence(*responder)
        self.routes.append(_Route(predicate, responder))

    def answer(self, body: dict[str, Any]) -> Reply:
        for r in self.routes:
            if r.predicate(body):
                with self._lock:
                    r.hits += 1
                    n = r.hits
                return r.responder(body, n)
        return error(400)

    # ------------------------------------------------------------------ message batches
    def create_batch(self, raw: bytes, host: str) -> Reply:
        """``POST /v1/messages/batches``: answer every request now (through the routes, and
        into the request log), hold the results until ``batch_hold_s`` has passed."""
        try:
            requests = json.loads(raw)["requests"]
            ids = [str(r["custom_id"]) for r in requests]
        except (ValueError, KeyError, TypeError):
            return error(400)
        if len(set(ids)) != len(ids):
            return error(400)
        with self._lock:
            expire = self.expire_batches > 0
            self.expire_batches -= expire
            self.batch_creates.append(ids)
        batch = _Batch(id=f"msgbatch_test_{next(_ids)}", created=time.time(),
                       hold=self.batch_hold_s)
        for req in requests:
            params = req.get("params") or {}
            if self.log_batch_requests:
                with self._lock:
                    self.requests.append(params)
            reply = Reply(batch_result="expired") if expire else self.answer(params)
            batch.add(str(req["custom_id"]), params, reply)
        with self._lock:
            self.batches[batch.id] = batch
        return Reply(body=batch.describe(host))

    # ------------------------------------------------------------------ queries
    def bodies(self, predicate: Predicate | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [b for b in self.requests if predicate is None or predicate(b)]

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> MessagesServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm
            # and the client's delayed ACK add ~40 ms to every reply.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if self.path.split("?")[0].rstrip("/") == "/v1/messages/batches":
                    self._send(server.create_batch(raw, self.headers.get("host", "")))
                    return
                if self.path.split("?")[0].rstrip("/") != "/v1/messages":
                    self._send(Reply(status=404, body={"type": "error", "error": {
                        "type": "not_found_error", "message": self.path}}))
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(error(400))
                    return
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    reply = server.answer(body)
                    if reply.body is not None and reply.status == 200 and not reply.body.get(
                        "model"
                    ):
                        reply.body["model"] = body.get("model", "")
                    delay = reply.delay or server.default_delay
                    if delay:
                        time.sleep(delay)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                self._send(reply)

            def do_GET(self) -> None:
                parts = self.path.split("?")[0].strip("/").split("/")
                batch = server.batches.get(parts[3]) if len(parts) >= 4 and parts[:3] == [
                    "v1", "messages", "batches"] else None
                if batch is None:
                    self._send(Reply(status=404, body={"type": "error", "error": {
                        "type": "not_found_error", "message": self.path}}))
                elif len(parts) == 4:
                    with server._lock:
                        server.batch_retrieves += 1
                    self._send(Reply(body=batch.describe(self.headers.get("host", ""))))
                elif len(parts) == 5 and parts[4] == "results" and batch.ended:
                    self._send(Reply(raw=b"".join(batch.lines),
                                     headers={"content-type": "application/x-jsonl"}))
                else:
                    self._send(error(404))

            def _send(self, reply: Reply) -> None:
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                if "content-type" not in reply.headers:
                    self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", "req_test")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> MessagesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---------------------------------------------------------------------- bench script

_ATTEMPT = re.compile(r"draft (\d+)")


def bench_script(server: MessagesServer, marker: str = "You grade") -> None:
    """Generator drafts number themselves by turn; the judge scores 0.5, 0.7, 0.9 so every case
    takes all three attempts (threshold 0.95) without plateauing."""

    def judge(body: dict[str, Any], n: int) -> Reply:
        found = _ATTEMPT.findall(all_text(body))
        k = int(found[-1]) if found else 1
        return verdict(round(0.3 + 0.2 * k, 2), feedback=f"improve part {k}")

    def generate(body: dict[str, Any], n: int) -> Reply:
        # The only earlier draft a refinement request shows is the previous one.
        seen = _ATTEMPT.findall(all_text(body))
        turn = int(seen[-1]) + 1 if seen else 1
        return message(f"<thinking>plan</thinking><answer>draft {turn}</answer>",
                       thinking="private reasoning")

    server.route(system_contains(marker), judge)
    server.route(lambda body: True, generate)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--batch-hold", type=float, default=0.0,
                        help="seconds a message batch stays in_progress")
    args = parser.parse_args(argv)
    server = MessagesServer(default_delay=args.delay)
    server.batch_hold_s = args.batch_hold
    server.log_batch_requests = False
    bench_script(server)
    server.start()
    print(server.url, flush=True)
    try:
        sys.stdin.read()  # serve until the parent closes our stdin
    finally:
        server.stop()


if __name__ == "__main__":
    main()
