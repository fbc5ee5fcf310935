"""One Messages API call with the retry policy, cost accounting and the cost cap.

The SDK's own retries are switched off so that one place decides: 408/409/429/5xx/529,
timeouts, connection errors and unparsable bodies are retried with exponential backoff and
jitter, and a ``retry-after`` (or ``retry-after-ms``) header is obeyed; anything else (401,
400, 404 ...) is an :class:`ApiFailure` at once. The API key is never part of a message.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from evallint.executor.errors import ApiFailure, CostCapReached, RunError
from evallint.executor.prices import PriceTable

RETRY_STATUS = {408, 409, 429}
BASE_DELAY = 0.5
MAX_DELAY = 30.0
MAX_RETRY_AFTER = 120.0

if TYPE_CHECKING:  # the SDK takes over a second to import: only a run that sends needs it
    import anthropic

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


def api_key_from_env() -> str:
    """The key (or bearer token) the run will use; missing is a tool error, before any work."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    raise RunError("ANTHROPIC_API_KEY is not set (export it, or use --dry-run to render only)")


def redact(text: str) -> str:
    """Remove any credential from the environment that might have slipped into ``text``."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        secret = os.environ.get(name, "").strip()
        if len(secret) >= 4 and secret in text:
            text = text.replace(secret, "[redacted]")
    return text


@dataclass
class CallResult:
    content: list[Any]
    usage: dict[str, int]
    model: str
    cost_usd: float | None
    retries: int


@dataclass
class CostMeter:
    """Spend across the whole run; once the cap is reached no new request starts."""

    cap: float | None = None
    spent: float = 0.0
    stopped: bool = False

    def check(self) -> None:
        if self.cap is not None and self.spent >= self.cap:
            self.stopped = True
            raise CostCapReached(f"cost cap of ${self.cap:.2f} reached (spent ${self.spent:.4f})")

    def add(self, cost: float | None) -> None:
        if cost:
            self.spent = round(self.spent + cost, 8)


@dataclass
class MessagesClient:
    """The executor's only door to the API."""

    sdk: anthropic.AsyncAnthropic
    prices: PriceTable
    meter: CostMeter
    max_retries: int = 6
    sleep: Sleep = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)
    retries_total: int = 0
    accepts_temperature: bool = field(default_factory=lambda: sdk_accepts("temperature"))

    mock: Any = None  # the MockProvider answering under the SDK (--mock), else None

    @classmethod
    def create(cls, *, api_key: str, prices: PriceTable, meter: CostMeter, max_retries: int,
               timeout_s: float, base_url: str | None = None) -> MessagesClient:
        import anthropic

        sdk = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0,
                                       timeout=timeout_s)
        return cls(sdk=sdk, prices=prices, meter=meter, max_retries=max_retries)

    @classmethod
    def open(cls, *, prices: dict[str, dict[str, float]], max_cost_usd: float | None,
             max_retries: int, timeout_s: float, base_url: str | None = None,
             mock: Any = None) -> MessagesClient:
        """The client of a run or a calibration: the API with the key from the environment,
        or, given a MockProvider (``--mock``), the same client and SDK over an in-process
        transport that ``mock`` answers, with every model priced at $0 and no key read."""
        meter = CostMeter(max_cost_usd)
        if mock is None:
            return cls.create(api_key=api_key_from_env(), prices=PriceTable.load(prices),
                              meter=meter, max_retries=max_retries, timeout_s=timeout_s,
                              base_url=base_url)
        return cls(sdk=mock.sdk(timeout_s), prices=PriceTable.free(), meter=meter,
                   max_retries=max_retries, mock=mock)

    async def close(self) -> None:
        await self.sdk.close()

    async def create_message(self, *, model: str, system: str, messages: list[dict[str, Any]],
                             max_tokens: int, temperature: float | None,
                             tag: str = "") -> CallResult:
        """Send one request, retrying what is transient. Raises ApiFailure or CostCapReached.

        ``tag`` names the call within its case (``g2``: the generator's attempt 2); the batch
        transport builds its custom_id from it, the direct mode has no use for it."""
        params = self.params(model=model, system=system, messages=messages,
                             max_tokens=max_tokens, temperature=temperature)

        async def send() -> Any:
            self.meter.check()
            reply = await self.sdk.messages.create(**params)
            list(reply.content)  # a body the SDK could not read fails here, and is retried
            return reply

        reply, retries = await self.call(send, f"calling {model}")
        return self.result(reply, model, retries)

    def params(self, *, model: str, system: str, messages: list[dict[str, Any]],
               max_tokens: int, temperature: float | None) -> dict[str, Any]:
        """The request body, the same in direct and batch mode."""
        params: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                                  "messages": messages}
        if system:
            params["system"] = system
        if temperature is not None and self.accepts_temperature:
            params["temperature"] = temperature
        return params

    def result(self, reply: Any, model: str, retries: int, *, batch: bool = False
               ) -> CallResult:
        """A reply's content, usage and cost (at the batch price for a batch result)."""
        usage = _usage(getattr(reply, "usage", None))
        cost = self.prices.cost(model, usage, batch=batch)
        self.meter.add(cost)
        return CallResult(list(reply.content), usage,
                          str(getattr(reply, "model", model) or model), cost, retries)

    async def call(self, fn: Callable[[], Awaitable[T]], what: str) -> tuple[T, int]:
        """Run ``fn`` with the retry policy; returns its value and the retries it took."""
        import anthropic

        attempt = 0
        while True:
            try:
                return await fn(), attempt
            except anthropic.APIStatusError as exc:
                retryable = exc.status_code in RETRY_STATUS or exc.status_code >= 500
                delay = self._delay(attempt, exc.response.headers if exc.response else None)
                if not retryable:
                    raise ApiFailure(_describe(exc, what)) from None
                reason = _describe(exc, what)
            except anthropic.APIConnectionError as exc:  # includes timeouts
                delay, reason = self._delay(attempt, None), _describe(exc, what)
            except (anthropic.APIResponseValidationError, ValueError) as exc:
                # A body the SDK could not read (truncated proxy response): transient.
                delay = self._delay(attempt, None)
                reason = f"unreadable reply ({type(exc).__name__})"
            except anthropic.AnthropicError as exc:  # the SDK refusing, e.g. no results_url
                raise ApiFailure(redact(f"API error ({type(exc).__name__}) {what}: {exc}")
                                 ) from None
            if attempt >= self.max_retries:
                raise ApiFailure(f"{reason}; gave up after {attempt + 1} tries")
            attempt += 1
            self.retries_total += 1
            await self.sleep(delay)

    def _delay(self, attempt: int, headers: Any) -> float:
        after = retry_after(headers)
        if after is not None:
            return min(after, MAX_RETRY_AFTER)
        backoff = min(BASE_DELAY * (2 ** attempt), MAX_DELAY)
        return backoff * (0.75 + 0.5 * self.rng.random())


def sdk_accepts(name: str) -> bool:
    """Whether the installed SDK's ``messages.create`` takes ``name``. Newer API versions have
    no ``temperature``; sending it through ``extra_body`` would be a 400, so it is left out."""
    import inspect

    from anthropic.resources.messages import AsyncMessages

    try:
        return name in inspect.signature(AsyncMessages.create).parameters
    except (TypeError, ValueError):
        return False


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` first, then ``retry-after``)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def _usage(raw: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                "cache_read_input_tokens"):
        value = getattr(raw, key, None) if raw is not None else None
        out[key] = int(value) if isinstance(value, int) else 0
    return out


def _describe(exc: Exception, what: str) -> str:
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    message = getattr(exc, "message", None) or str(exc)
    head = f"API error {status} ({kind})" if status else f"API error ({kind})"
    return redact(f"{head} {what}: {message}")
