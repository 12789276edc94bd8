"""The framework-agnostic API: a client, runs, steps, tool calls, decorators and human input."""

from __future__ import annotations

import asyncio
import atexit
import functools
import inspect
import logging
import os
import threading
import time
import traceback as tb_module
import uuid
from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload
from urllib.parse import quote, urlencode

from . import _pricing
from ._http import HttpClient, TransportError
from ._json import iso_utc, preview, to_jsonable, to_object
from ._transport import DropPolicy, Transport, TransportStats
from .errors import HumanInputTimeout, RunwatchError

logger = logging.getLogger("runwatch")

DEFAULT_BASE_URL = "http://localhost:8080"
F = TypeVar("F", bound=Callable[..., Any])


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()

_current_run: ContextVar[Run | None] = ContextVar("runwatch_current_run", default=None)


def current_run() -> Run | None:
    """The run entered most recently in this context (thread / asyncio task), if any."""
    return _current_run.get()


@dataclass(frozen=True)
class HumanInput:
    """An answer given on the dashboard to a human-input request."""

    response: str
    responded_by: str | None = None
    answered_at: str | None = None


def _format_traceback(exc: BaseException) -> str:
    return "".join(tb_module.format_exception(type(exc), exc, exc.__traceback__))


def error_payload(exc: BaseException) -> dict[str, Any]:
    return {
        "error_type": type(exc).__name__,
        "error_message": str(exc)[:4000],
        "traceback": _format_traceback(exc)[-16_000:],
    }


class Runwatch:
    """Sends agent run events to a Runwatch server in the background.

    Events are queued in memory and sent in batches by a daemon thread; recording an event never blocks
    the agent and never raises. Queued events are flushed at interpreter exit.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        debug: bool = False,
        enabled: bool = True,
        max_queue_size: int = 10_000,
        drop_policy: DropPolicy = "oldest",
        batch_size: int = 1000,
        flush_interval: float = 0.2,
        request_timeout: float = 10.0,
        shutdown_timeout: float = 5.0,
        max_retries: int = 8,
    ) -> None:
        self.api_key = api_key or os.environ.get("RUNWATCH_API_KEY") or None
        self.base_url = (base_url or os.environ.get("RUNWATCH_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.debug = debug
        if debug and not logger.handlers and not logging.getLogger().handlers:
            logging.basicConfig()
        if debug:
            logger.setLevel(logging.DEBUG)
        self.enabled = enabled
        if enabled and not self.api_key:
            logger.warning("runwatch: no API key (pass api_key= or set RUNWATCH_API_KEY); events will be dropped")
            self.enabled = False
        self.request_timeout = request_timeout
        self.shutdown_timeout = shutdown_timeout
        self._transport = Transport(
            HttpClient(self.base_url, self.api_key, request_timeout),
            max_queue_size=max_queue_size,
            drop_policy=drop_policy,
            batch_size=batch_size,
            flush_interval=flush_interval,
            max_retries=max_retries,
            debug=debug,
        )
        # Answers already handed out per run, so a second question in the same run never gets the first answer.
        self._consumed_answers: dict[str, set[tuple[str | None, str]]] = {}
        _register_for_exit(self)

    # ---- delivery -------------------------------------------------------------------------------------

    def emit(
        self,
        event_type: str,
        sdk_run_id: str,
        payload: dict[str, Any],
        *,
        agent_name: str | None = None,
        config_version: int | None = None,
        occurred_at: float | None = None,
    ) -> None:
        """Queues one raw event (see the ingest contract). `payload` must already be JSON-safe."""
        if not self.enabled:
            return
        try:
            ev: dict[str, Any] = {
                "event_type": event_type,
                "sdk_run_id": sdk_run_id,
                "payload": payload,
                "_ts": time.time() if occurred_at is None else occurred_at,
            }
            if agent_name is not None:
                ev["agent_name"] = agent_name
            if config_version is not None:
                ev["config_version"] = config_version
            self._transport.enqueue(ev)
        except Exception:  # pragma: no cover - defensive: instrumentation must never break the agent
            logger.debug("runwatch: failed to queue an event", exc_info=True)

    def flush(self, timeout: float | None = None) -> bool:
        """Blocks until queued events are delivered, at most `timeout` seconds. True if all were."""
        try:
            return self._transport.flush(timeout)
        except Exception:  # pragma: no cover
            logger.debug("runwatch: flush failed", exc_info=True)
            return False

    def shutdown(self, timeout: float | None = None) -> bool:
        """Flushes (at most `timeout`, default shutdown_timeout) and stops the sender thread."""
        try:
            return self._transport.shutdown(self.shutdown_timeout if timeout is None else timeout)
        except Exception:  # pragma: no cover
            logger.debug("runwatch: shutdown failed", exc_info=True)
            return False

    @property
    def stats(self) -> TransportStats:
        """Counters: enqueued, sent, dropped (queue full / rejected / failed), retries, requests."""
        return self._transport.stats

    @property
    def pending(self) -> int:
        return self._transport.pending()

    # ---- runs -----------------------------------------------------------------------------------------

    def run(
        self,
        agent_name: str,
        input: Any = UNSET,
        *,
        sdk_run_id: str | None = None,
        framework: str | None = None,
        config_version: int | None = None,
    ) -> Run:
        """A run, to use as `with client.run(...) as run:` (or `async with`), or with run.start()/end()."""
        return Run(self, agent_name, input, sdk_run_id=sdk_run_id, framework=framework, config_version=config_version)

    def trace_run(
        self,
        agent_name: str | None = None,
        *,
        framework: str | None = None,
        capture_input: bool = True,
        capture_output: bool = True,
    ) -> Callable[[F], F]:
        """Decorator: each call of the function is a run (inside another run: a step of that run)."""

        def decorate(fn: F) -> F:
            name = agent_name or fn.__name__

            def open_span(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Run | Step:
                inp = _bound_arguments(fn, args, kwargs) if capture_input else UNSET
                parent = _current_run.get()
                if parent is not None and parent.client is self:
                    return parent.step(name, input=inp)
                return self.run(name, inp, framework=framework)

            return _wrap(fn, open_span, capture_output)

        return decorate

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, *, name: str | None = None) -> Callable[[F], F]: ...

    def tool(self, fn: Any = None, /, *, name: str | None = None) -> Any:
        """Decorator: calls of the function are tool calls of the current run (plain calls outside a run)."""

        def decorate(f: F) -> F:
            tool_name = name or f.__name__

            def open_span(args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolCall | None:
                run = _current_run.get()
                if run is None:
                    return None
                return run.tool_call(tool_name, input=_bound_arguments(f, args, kwargs))

            return _wrap(f, open_span, True)

        return decorate(fn) if fn is not None else decorate

    def step(self, name: str | None = None) -> Callable[[F], F]:
        """Decorator: calls of the function are steps of the current run (plain calls outside a run)."""

        def decorate(f: F) -> F:
            node = name or f.__name__

            def open_span(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Step | None:
                run = _current_run.get()
                return None if run is None else run.step(node)

            return _wrap(f, open_span, True)

        return decorate

    # ---- human input ----------------------------------------------------------------------------------

    def get_input(self, sdk_run_id: str, *, wait: float = 0) -> HumanInput | None:
        """One look at GET /api/runs/{sdk_run_id}/input (long-polls up to `wait` s). None if no answer yet."""
        http = HttpClient(self.base_url, self.api_key, self.request_timeout + wait)
        try:
            return self._poll_input(http, sdk_run_id, wait)
        finally:
            http.close()

    def _poll_input(self, http: HttpClient, sdk_run_id: str, wait: float) -> HumanInput | None:
        query = urlencode({"wait": int(wait)}) if wait > 0 else ""
        path = f"/api/runs/{quote(sdk_run_id, safe='')}/input" + (f"?{query}" if query else "")
        resp = http.request("GET", path, timeout=self.request_timeout + wait)
        if resp.status == 204:
            return None
        if resp.status == 200:
            data = resp.json() or {}
            response = data.get("response")
            if response is None:
                return None
            return HumanInput(
                response=response if isinstance(response, str) else str(response),
                responded_by=data.get("responded_by"),
                answered_at=data.get("answered_at"),
            )
        raise _HttpStatus(resp.status, resp.header("retry-after"), resp.body[:300].decode("utf-8", "replace"))

    def wait_for_input(self, sdk_run_id: str, timeout: float | None = None, *, poll_wait: float = 30.0) -> HumanInput:
        """Long-polls the input endpoint until a (new) answer arrives; raises HumanInputTimeout."""
        if not self.api_key:
            raise RunwatchError("no API key configured")
        deadline = None if timeout is None else time.monotonic() + timeout
        consumed = self._consumed_answers.setdefault(sdk_run_id, set())
        http = HttpClient(self.base_url, self.api_key, self.request_timeout + poll_wait)
        failures = 0
        try:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise HumanInputTimeout(f"no human input for run {sdk_run_id} within {timeout}s")
                wait = poll_wait if left is None else max(0.0, min(poll_wait, left))
                pause = 0.0
                try:
                    answer = self._poll_input(http, sdk_run_id, wait)
                    failures = 0
                    if answer is not None:
                        key = (answer.answered_at, answer.response)
                        if key not in consumed:
                            consumed.add(key)
                            return answer
                        pause = 1.0  # the server still shows an answer we already used: ask again shortly
                    elif wait < 1:
                        pause = 0.5
                except _HttpStatus as e:
                    if e.status in (401, 403):
                        raise RunwatchError(f"the server refused the API key (HTTP {e.status}): {e.body}") from None
                    failures += 1
                    # 404: the run is not stored yet (ingest is asynchronous) or the server lacks the endpoint.
                    pause = e.retry_after if e.retry_after is not None else min(30.0, 0.5 * 2 ** min(failures, 6))
                    if failures == 1 or self.debug:
                        logger.info("runwatch: input endpoint answered HTTP %d; polling again", e.status)
                except TransportError as e:
                    failures += 1
                    pause = min(30.0, 0.5 * 2 ** min(failures, 6))
                    if failures == 1 or self.debug:
                        logger.warning("runwatch: cannot reach the server for human input (%s); retrying", e)
                if pause:
                    if deadline is not None:
                        pause = min(pause, max(0.0, deadline - time.monotonic()))
                    time.sleep(pause)
        finally:
            http.close()


class _HttpStatus(Exception):
    def __init__(self, status: int, retry_after: str | None, body: str) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body
        try:
            self.retry_after: float | None = min(300.0, max(0.0, float(retry_after))) if retry_after else None
        except ValueError:
            self.retry_after = None


class Run:
    """One agent run. Enter it (sync or async) to send run_start; leaving sends run_end, or error."""

    def __init__(
        self,
        client: Runwatch,
        agent_name: str,
        input: Any = UNSET,
        *,
        sdk_run_id: str | None = None,
        framework: str | None = None,
        config_version: int | None = None,
    ) -> None:
        self.client = client
        self.agent_name = agent_name
        self.sdk_run_id = sdk_run_id or str(uuid.uuid4())
        self.framework = framework
        self.config_version = config_version
        self._input = input
        self._output: Any = UNSET
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.total_tokens: int | None = None
        self.cost_usd: float | None = None
        self.model: str | None = None
        self.provider: str | None = None
        self.estimate_cost = True  # estimate cost_usd with genai-prices (when installed) if none was set
        self.started = False
        self.ended = False
        self._tokens: list[Token[Run | None]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Run(agent_name={self.agent_name!r}, sdk_run_id={self.sdk_run_id!r})"

    def emit(self, event_type: str, payload: dict[str, Any]) -> None:
        self.client.emit(
            event_type, self.sdk_run_id, payload, agent_name=self.agent_name, config_version=self.config_version
        )

    # ---- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> Run:
        """Sends run_start (once)."""
        if not self.started:
            self.started = True
            payload: dict[str, Any] = {}
            if self.framework:
                payload["framework"] = self.framework
            if self._input is not UNSET:
                payload["input"] = to_jsonable(self._input)
            self.emit("run_start", payload)
        return self

    def set_output(self, output: Any) -> None:
        self._output = output

    def set_usage(
        self,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        model: str | None = None,
        cost_usd: float | None = None,
        *,
        total_tokens: int | None = None,
        provider: str | None = None,
    ) -> None:
        """Sets the run's usage (reported with run_end). Arguments left as None are kept."""
        with self._lock:
            if prompt_tokens is not None:
                self.prompt_tokens = int(prompt_tokens)
            if completion_tokens is not None:
                self.completion_tokens = int(completion_tokens)
            if total_tokens is not None:
                self.total_tokens = int(total_tokens)
            if model is not None:
                self.model = model
            if provider is not None:
                self.provider = provider
            if cost_usd is not None:
                self.cost_usd = float(cost_usd)

    def add_usage(
        self,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        model: str | None = None,
        cost_usd: float | None = None,
        *,
        provider: str | None = None,
    ) -> None:
        """Adds one LLM call's usage to the run's totals."""
        with self._lock:
            self.prompt_tokens += int(prompt_tokens or 0)
            self.completion_tokens += int(completion_tokens or 0)
            if model:
                self.model = model
            if provider:
                self.provider = provider
            if cost_usd is not None:
                self.cost_usd = (self.cost_usd or 0.0) + float(cost_usd)

    def usage_payload(self) -> dict[str, Any]:
        p: dict[str, Any] = {}
        if self.prompt_tokens or self.completion_tokens or self.total_tokens:
            p["prompt_tokens"] = self.prompt_tokens
            p["completion_tokens"] = self.completion_tokens
            p["total_tokens"] = (
                self.total_tokens if self.total_tokens is not None else self.prompt_tokens + self.completion_tokens
            )
        if self.model:
            p["model"] = self.model
        cost = self.cost_usd
        if cost is None and self.estimate_cost:
            cost = _pricing.estimate_cost_usd(self.model, self.prompt_tokens, self.completion_tokens, self.provider)
        if cost is not None:
            p["cost_usd"] = round(cost, 10)
        return p

    def end(self, output: Any = UNSET) -> None:
        """Sends run_end with the output and usage (once)."""
        if self.ended:
            return
        self.start()
        self.ended = True
        if output is not UNSET:
            self._output = output
        payload = self.usage_payload()
        if self._output is not UNSET:
            payload["output"] = to_jsonable(self._output)
        self.emit("run_end", payload)

    def fail(self, error: BaseException | str, message: str | None = None, traceback: str | None = None) -> None:
        """Sends the error event (once): from an exception, or from a type name, message and traceback."""
        if self.ended:
            return
        self.start()
        self.ended = True
        if isinstance(error, BaseException):
            payload = error_payload(error)
        else:
            payload = {"error_type": error, "error_message": message or "", "traceback": traceback or ""}
        payload.update(self.usage_payload())  # extra fields: what the failed run cost so far
        self.emit("error", payload)

    def __enter__(self) -> Run:
        self.start()
        self._tokens.append(_current_run.set(self))
        return self

    def __exit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        if self._tokens:
            try:
                _current_run.reset(self._tokens.pop())
            except ValueError:  # exited in another context than entered
                pass
        if exc is None:
            self.end()
        else:
            self.fail(exc)
        return False

    async def __aenter__(self) -> Run:
        return self.__enter__()

    async def __aexit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        return self.__exit__(et, exc, tb)

    # ---- children -------------------------------------------------------------------------------------

    def step(self, node_name: str, *, input: Any = UNSET) -> Step:
        """A step (graph node): `with run.step("plan") as step:` sends step start/end with duration_ms."""
        return Step(self, node_name, input)

    def tool_call(self, tool_name: str, input: Any = UNSET) -> ToolCall:
        """A tool call: `with run.tool_call("search", input=q) as call: call.set_output(r)`, or .start()/.end()."""
        return ToolCall(self, tool_name, input)

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, *, name: str | None = None) -> Callable[[F], F]: ...

    def tool(self, fn: Any = None, /, *, name: str | None = None) -> Any:
        """Decorator: each call of the function is a tool call of this run."""

        def decorate(f: F) -> F:
            tool_name = name or f.__name__
            return _wrap(f, lambda a, k: self.tool_call(tool_name, input=_bound_arguments(f, a, k)), True)

        return decorate(fn) if fn is not None else decorate

    # ---- human in the loop ----------------------------------------------------------------------------

    def request_human_input(
        self,
        question: str,
        context: Any = None,
        channel: str | None = None,
        timeout: float | None = None,
        *,
        poll_wait: float = 30.0,
    ) -> str:
        """Asks a person on the dashboard and blocks until the answer comes back; returns the answer.

        Sends human_input_requested (status waiting_for_input), long-polls the input endpoint, then sends
        human_input_received with responded_by (status running). Raises HumanInputTimeout after `timeout`.
        """
        self.start()
        payload: dict[str, Any] = {"question": str(question)}
        if context is not None:
            payload["context"] = to_object(context)
        if channel:
            payload["channel"] = channel
        self.emit("human_input_requested", payload)
        self.client.flush(timeout=min(timeout, 10.0) if timeout is not None else 10.0)
        answer = self.client.wait_for_input(self.sdk_run_id, timeout, poll_wait=poll_wait)
        self.report_human_input(answer.response, answer.responded_by)
        return answer.response

    async def arequest_human_input(
        self,
        question: str,
        context: Any = None,
        channel: str | None = None,
        timeout: float | None = None,
        *,
        poll_wait: float = 30.0,
    ) -> str:
        """request_human_input for async code: the waiting happens in a worker thread."""
        return await asyncio.to_thread(
            self.request_human_input, question, context, channel, timeout, poll_wait=poll_wait
        )

    def report_human_input(self, response: Any, responded_by: str | None = None) -> None:
        """Sends human_input_received (e.g. when the answer came from somewhere other than the dashboard)."""
        payload: dict[str, Any] = {"response": response if isinstance(response, str) else preview(response, 4000)}
        if responded_by:
            payload["responded_by"] = responded_by
        self.emit("human_input_received", payload)


_S = TypeVar("_S", bound="_Span")


class _Span:
    """Shared timing and start/end events for steps and tool calls (subclasses fill in the payloads)."""

    event_type: str  # "step" or "tool_call"
    run: Run
    _input: Any
    _t0: float | None = None
    _done = False
    _output: Any = UNSET

    def set_output(self, output: Any) -> None:
        self._output = output

    def _duration_ms(self) -> int:
        return max(0, round((time.perf_counter() - self._t0) * 1000)) if self._t0 is not None else 0

    def _name_field(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _add_input(self, payload: dict[str, Any]) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:  # pragma: no cover
        raise NotImplementedError

    def start(self: _S) -> _S:
        if self._t0 is None:
            self._t0 = time.perf_counter()
            payload: dict[str, Any] = {**self._name_field(), "phase": "start"}
            if self._input is not UNSET:
                self._add_input(payload)
            self.run.emit(self.event_type, payload)
        return self

    def end(self, output: Any = UNSET, *, error: BaseException | None = None) -> None:
        if self._done:
            return
        self._done = True
        if output is not UNSET:
            self._output = output
        payload: dict[str, Any] = {**self._name_field(), "phase": "end", "duration_ms": self._duration_ms()}
        self._add_result(payload, error)
        self.run.emit(self.event_type, payload)

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        self.end(error=exc)
        return False

    async def __aenter__(self: _S) -> _S:
        return self.start()

    async def __aexit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        self.end(error=exc)
        return False


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


class Step(_Span):
    event_type = "step"

    def __init__(self, run: Run, node_name: str, input: Any = UNSET) -> None:
        self.run = run
        self.node_name = node_name
        self._input = input

    def _name_field(self) -> dict[str, Any]:
        return {"node_name": self.node_name}

    def _add_input(self, payload: dict[str, Any]) -> None:
        payload["input"] = to_jsonable(self._input)

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:
        if self._output is not UNSET:
            payload["output"] = to_jsonable(self._output)
        if error is not None:
            payload["error"] = _error_text(error)


class ToolCall(_Span):
    event_type = "tool_call"

    def __init__(self, run: Run, tool_name: str, input: Any = UNSET) -> None:
        self.run = run
        self.tool_name = tool_name
        self._input = input

    def _name_field(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name}

    def _add_input(self, payload: dict[str, Any]) -> None:
        payload["input_preview"] = preview(self._input)

    def _add_result(self, payload: dict[str, Any], error: BaseException | None) -> None:
        if error is not None:
            payload["error"] = _error_text(error)
            payload["output_preview"] = preview(payload["error"])
        elif self._output is not UNSET:
            payload["output_preview"] = preview(self._output)


# ---- decorator plumbing ---------------------------------------------------------------------------------


def _bound_arguments(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
        return {k: v for k, v in bound.arguments.items() if k not in ("self", "cls")}
    except (TypeError, ValueError):
        return {"args": list(args), "kwargs": kwargs}


def _wrap(fn: F, open_span: Callable[[tuple[Any, ...], dict[str, Any]], Any], capture_output: bool) -> F:
    """Wraps a sync or async function so that each call runs inside the span open_span returns (or none)."""

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            span = _safe_open(open_span, args, kwargs)
            if span is None:
                return await fn(*args, **kwargs)
            async with span:
                result = await fn(*args, **kwargs)
                if capture_output:
                    span.set_output(result)
                return result

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        span = _safe_open(open_span, args, kwargs)
        if span is None:
            return fn(*args, **kwargs)
        with span:
            result = fn(*args, **kwargs)
            if capture_output:
                span.set_output(result)
            return result

    return wrapper  # type: ignore[return-value]


def _safe_open(open_span: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return open_span(args, kwargs)
    except Exception:  # pragma: no cover - instrumentation must not break the call
        logger.debug("runwatch: could not open a span", exc_info=True)
        return None


# ---- default client and exit ----------------------------------------------------------------------------

_default_client: Runwatch | None = None
_default_lock = threading.Lock()


def get_client() -> Runwatch:
    """The process-wide default client (created from RUNWATCH_API_KEY / RUNWATCH_BASE_URL on first use)."""
    global _default_client
    if _default_client is None:
        with _default_lock:
            if _default_client is None:
                _default_client = Runwatch()
    return _default_client


def set_client(client: Runwatch) -> None:
    """Makes `client` the default used by CallbackHandler() and helpers when none is passed."""
    global _default_client
    _default_client = client


_clients_for_exit: list[Any] = []


def _register_for_exit(client: Runwatch) -> None:
    import weakref

    _clients_for_exit.append(weakref.ref(client))


@atexit.register
def _flush_at_exit() -> None:
    for ref in _clients_for_exit:
        client = ref()
        if client is not None:
            client.shutdown()


__all__ = [
    "UNSET",
    "HumanInput",
    "Run",
    "Runwatch",
    "Step",
    "ToolCall",
    "current_run",
    "get_client",
    "iso_utc",
    "set_client",
]
