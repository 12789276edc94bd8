"""A run: run_start on entry, run_end or error on exit, usage and cost, its steps and tool calls, human input, its
tags and metadata (_attributes.py)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextvars import Token
from typing import TYPE_CHECKING, Any, Literal

from . import _pricing
from ._attributes import MetadataValue, RunAttributes, logger, metadata_dict, tag_list
from ._context import UNSET, _current_run, error_payload
from ._decorators import ToolDecorator
from ._json import OMIT, Deferred, deferred_jsonable, preview, to_object
from ._spans import LlmCall, Step, ToolCall

if TYPE_CHECKING:
    from ._scores import ScoreSource
    from .client import Runwatch


def _rounded_or_omit(price: Any, *args: Any) -> Any:
    """price(*args) rounded for the wire, or OMIT (no cost_usd: the server prices the run)."""
    cost = price(*args)
    return OMIT if cost is None else round(cost, 10)


class Run(ToolDecorator):
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
        session_id: str | None = None,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        end_user: str | None = None,
        environment: str | None = None,
        release: str | None = None,
        start_fields: Mapping[str, Any] | None = None,
    ) -> None:
        self.client = client
        # Extra fields of the run_start payload (an experiment's run names its experiment and item here).
        self.start_fields = dict(start_fields or {})
        self.session_id = session_id[:200] if session_id else None
        self.agent_name = agent_name
        self.sdk_run_id = sdk_run_id or str(uuid.uuid4())
        # Tags, metadata, end user, environment and release: all on run_start, later additions on the next event.
        self._attributes = RunAttributes(
            self.sdk_run_id, tags, metadata, end_user=end_user, environment=environment, release=release
        )
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
        # LLM calls whose cost is estimated on the sender thread, when run_end is made wire-ready (price_later).
        self._calls_to_price: list[tuple[str | None, int, int, str | None]] = []
        self.started = False
        self.ended = False
        self._tokens: list[Token[Run | None]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Run(agent_name={self.agent_name!r}, sdk_run_id={self.sdk_run_id!r})"

    def emit(
        self, event_type: str, payload: dict[str, Any], *, span_id: str | None = None, parent_span_id: str | None = None
    ) -> None:
        attributes = None
        if self._attributes.pending is not None:  # read without the lock: the common case costs one comparison
            with self._lock:
                attributes = self._attributes.take_pending()
        self.client.emit(
            event_type,
            self.sdk_run_id,
            payload,
            agent_name=self.agent_name,
            config_version=self.config_version,
            span_id=span_id,
            parent_span_id=parent_span_id,
            session_id=self.session_id,
            attributes=attributes,
        )

    # ---- tags and metadata ------------------------------------------------------------------------------

    @property
    def tags(self) -> list[str]:
        """The run's tags (what it sent and will send)."""
        return list(self._attributes.tags)

    @property
    def metadata(self) -> dict[str, MetadataValue]:
        """The run's metadata, as sent (values that are not strings, numbers or booleans JSON-encoded)."""
        return dict(self._attributes.metadata)

    def add_tags(self, *tags: str) -> None:
        """Adds tags to the run; they go with its next event (a run keeps at most 50)."""
        self._add_attributes(tag_list(tags), {})

    def set_metadata(self, metadata: Mapping[str, Any] | None = None, /, **values: Any) -> None:
        """Sets metadata keys of the run (`run.set_metadata({"customer": "acme"})` or `run.set_metadata(tier=2)`);
        they go with its next event (a run keeps at most 64 keys; a later value of a key replaces the earlier)."""
        self._add_attributes([], {**metadata_dict(metadata), **metadata_dict(values)})

    def _add_attributes(self, tags: list[str], metadata: dict[str, MetadataValue]) -> None:
        if not tags and not metadata:
            return
        if self.ended:
            logger.warning("runwatch: run %s has ended; tags and metadata added now are not sent", self.sdk_run_id)
            return
        with self._lock:
            self._attributes.add_tags(tags)
            self._attributes.set_metadata(metadata)

    # ---- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> Run:
        """Sends run_start (once)."""
        if not self.started:
            self.started = True
            payload: dict[str, Any] = dict(self.start_fields)
            if self.framework:
                payload["framework"] = self.framework
            if self._input is not UNSET:
                payload["input"] = deferred_jsonable(self._input)
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

    def price_later(
        self, model: str | None, prompt_tokens: int, completion_tokens: int, provider: str | None = None
    ) -> None:
        """Adds one LLM call's cost, estimated with genai-prices off the agent's thread; when a call's model has no
        known price, the run reports tokens only and the server prices it."""
        with self._lock:
            self._calls_to_price.append((model, int(prompt_tokens or 0), int(completion_tokens or 0), provider))

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
        if self._calls_to_price:
            p["cost_usd"] = Deferred(_rounded_or_omit, _pricing.total_cost_usd, cost, list(self._calls_to_price))
        elif cost is None and self.estimate_cost:
            args = (self.model, self.prompt_tokens, self.completion_tokens, self.provider)
            p["cost_usd"] = Deferred(_rounded_or_omit, _pricing.estimate_cost_usd, *args)
        elif cost is not None:
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
            payload["output"] = deferred_jsonable(self._output)
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

    def step(
        self, node_name: str, *, input: Any = UNSET, span_id: str | None = None, parent_span_id: Any = UNSET
    ) -> Step:
        """A step (graph node): `with run.step("plan") as step:` sends step start/end with duration_ms.

        Spans nest by context (a step entered inside another nests in it); span_id / parent_span_id set them.
        """
        return Step(self, node_name, input, span_id=span_id, parent_span_id=parent_span_id)

    def tool_call(
        self, tool_name: str, input: Any = UNSET, *, span_id: str | None = None, parent_span_id: Any = UNSET
    ) -> ToolCall:
        """A tool call: `with run.tool_call("search", input=q) as call: call.set_output(r)`, or .start()/.end()."""
        return ToolCall(self, tool_name, input, span_id=span_id, parent_span_id=parent_span_id)

    def llm_call(
        self,
        name: str = "llm",
        *,
        model: str | None = None,
        provider: str | None = None,
        input: Any = UNSET,
        span_id: str | None = None,
        parent_span_id: Any = UNSET,
        prompt: Any = None,
    ) -> LlmCall:
        """An LLM call, a span with its own model, tokens and cost (the run's totals are the sum of its calls):

        with run.llm_call("chat", model="gpt-4o", provider="openai", input=messages) as call:
            reply = llm(messages)
            call.set_output(reply.text)
            call.set_usage(prompt_tokens=reply.usage.input, completion_tokens=reply.usage.output)

        `prompt` (a Prompt from client.get_prompt) records the prompt version the call used.
        """
        return LlmCall(
            self,
            name,
            model=model,
            provider=provider,
            input=input,
            span_id=span_id,
            parent_span_id=parent_span_id,
            prompt=prompt,
        )

    def _open_tool_call(self, tool_name: str, input_of: Callable[[], Any]) -> ToolCall:
        """The `tool` decorator's calls are tool calls of this run."""
        return self.tool_call(tool_name, input=input_of())

    # ---- scores -------------------------------------------------------------------------------------

    def score(
        self,
        name: str,
        value: float | bool | str,
        *,
        comment: str | None = None,
        span_id: str | None = None,
        source: ScoreSource | None = None,
        timeout: float = 10.0,
    ) -> str:
        """Scores this run, or one of its spans with `span_id` (user feedback, an evaluation); returns the score_id."""
        return self.client.score(
            self.sdk_run_id, name, value, comment=comment, span_id=span_id, source=source, timeout=timeout
        )

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
