"""A small OpenAI-compatible HTTP client over httpx.

- API keys come from the environment variable named in config, never from config.json;
- retries on 429, 5xx, timeouts and connection errors, with exponential backoff and jitter,
  honouring `Retry-After` (seconds or an HTTP date), never past the call's deadline;
- at most `max_concurrency` requests in flight per client (a semaphore, threads share it);
- token usage (`usage.prompt_tokens` / `completion_tokens`) and request counts accumulated;
- when bound to a data directory's `state/`, an endpoint that failed is remembered as down for
  a minute (`state/endpoints.json`), so the next hook fails over at once instead of waiting.

`deadline(seconds)` caps every call made inside it (the hooks run under one): a slow or dead
endpoint then costs at most that long before the caller's fallback takes over.
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import json
import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ..errors import AlayaError, ConfigError

DOWN_FOR_SECONDS = 60.0
_MAX_BACKOFF = 20.0
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("alaya_llm_deadline", default=None)


class LLMUnavailable(AlayaError):
    """The endpoint could not be reached or kept failing; callers fall back (heuristic, pending)."""


class LLMResponseError(AlayaError):
    """The endpoint answered, but not with what was asked (bad JSON, wrong shape, wrong dimension)."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every request inside this block gives up `seconds` from now (nested: the earlier wins)."""
    end = time.monotonic() + seconds
    current = _deadline.get()
    token = _deadline.set(end if current is None else min(current, end))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    end = _deadline.get()
    return None if end is None else end - time.monotonic()


@dataclass
class Usage:
    requests: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, body: Any) -> None:
        self.requests += 1
        usage = body.get("usage") if isinstance(body, dict) else None
        if isinstance(usage, dict):
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)


class OpenAIClient:
    """POST JSON to `{base_url}/{path}` with retries; one per provider, safe across threads."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key_env: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_concurrency: int = 4,
        transport: httpx.BaseTransport | None = None,
        what: str = "llm",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.what = what
        self.usage = Usage()
        self.state_dir: Path | None = None
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._http = httpx.Client(transport=transport, timeout=timeout, follow_redirects=True)
        self._sleep = time.sleep

    # --- configuration ----------------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "User-Agent": "openclaw-alaya"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key.strip()}"
            elif not _is_local(self.base_url):
                raise ConfigError(
                    f"{self.what}: environment variable {self.api_key_env} is not set "
                    f"(it holds the API key for {self.base_url}; keys are never read from config.json)"
                )
        return headers

    def bind(self, state_dir: Path) -> None:
        """Remember endpoint failures in this data directory's state (shared by processes)."""
        self.state_dir = state_dir

    # --- requests ---------------------------------------------------------------------------

    def post(self, path: str, payload: dict[str, Any], *, timeout: float | None = None,
             retries: int | None = None) -> dict[str, Any]:
        """The JSON body of a 2xx answer; LLMUnavailable after the retries, LLMResponseError on
        an answer that is not JSON or a 4xx that retrying cannot fix."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        if self._is_down():
            raise LLMUnavailable(f"{self.what}: {self.base_url} failed moments ago; not retrying yet")
        headers = self.headers()
        retries = self.max_retries if retries is None else retries
        last = "no attempt"
        out_of_time = False
        for attempt in range(retries + 1):
            wait_budget = remaining()
            per_try = min(timeout or self.timeout, wait_budget) if wait_budget is not None else (timeout or self.timeout)
            if per_try <= 0.05:
                out_of_time = True
                break
            delay: float | None = None
            try:
                with self._slots:
                    response = self._http.post(url, json=payload, headers=headers, timeout=per_try)
            except httpx.TimeoutException:
                last = f"timed out after {per_try:.1f}s"
                out_of_time = wait_budget is not None and per_try < (timeout or self.timeout)
            except httpx.TransportError as exc:
                last = f"cannot connect ({type(exc).__name__}: {exc})"
            else:
                if response.status_code < 300:
                    try:
                        body = response.json()
                    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
                        self._count_failure()
                        raise LLMResponseError(f"{self.what}: {url} answered with something that is not JSON") from None
                    with self._lock:
                        self.usage.add(body)
                    self._mark_up()
                    return body
                last = f"HTTP {response.status_code}: {_snippet(response)}"
                if response.status_code not in _RETRY_STATUS:
                    self._count_failure()
                    if response.status_code in (401, 403):
                        raise ConfigError(f"{self.what}: {url} refused the API key from ${self.api_key_env} ({last})")
                    raise LLMResponseError(f"{self.what}: {url} {last}")
                delay = retry_after(response.headers.get("retry-after"))
            if attempt == retries:
                break
            if delay is None:
                delay = min(_MAX_BACKOFF, 0.5 * 2 ** attempt) * (0.5 + random.random() / 2)
            left = remaining()
            if left is not None and delay >= left:
                out_of_time = True
                break
            self._sleep(min(delay, 60.0))
        self._count_failure()
        if out_of_time:  # the caller's deadline ran out: slow, not necessarily down
            raise LLMUnavailable(f"{self.what}: {url} did not answer in the time left ({last})")
        self._mark_down()
        raise LLMUnavailable(f"{self.what}: {url} unavailable ({last})")

    # --- failure memory ---------------------------------------------------------------------

    def _count_failure(self) -> None:
        with self._lock:
            self.usage.failures += 1

    def _endpoints_file(self) -> Path | None:
        return self.state_dir / "endpoints.json" if self.state_dir else None

    def _read_down(self) -> dict[str, float]:
        path = self._endpoints_file()
        if path is None:
            return {}
        try:
            data = json.loads(path.read_text())
            return {k: float(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (OSError, ValueError, TypeError):
            return {}

    def _is_down(self) -> bool:
        return self._read_down().get(self.base_url, 0.0) > time.time()

    def _mark_down(self) -> None:
        self._write_down(time.time() + DOWN_FOR_SECONDS)

    def _mark_up(self) -> None:
        if self.base_url in self._read_down():
            self._write_down(None)

    def _write_down(self, until: float | None) -> None:
        path = self._endpoints_file()
        if path is None:
            return
        from ..store.fsutil import atomic_write

        data = self._read_down()
        if until is None:
            data.pop(self.base_url, None)
        else:
            data[self.base_url] = until
        try:
            atomic_write(path, json.dumps(data))
        except OSError:
            pass


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a `Retry-After` header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _snippet(response: httpx.Response) -> str:
    try:
        text = response.text
    except Exception:  # noqa: BLE001
        return ""
    return " ".join(text.split())[:200]


def _is_local(url: str) -> bool:
    host = httpx.URL(url).host
    return host in {"127.0.0.1", "localhost", "::1", "0.0.0.0"} or host.endswith(".local")
