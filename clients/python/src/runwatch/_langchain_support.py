"""What the LangChain callback handler (langchain.py) builds on: metadata keys, LangGraph interrupts, the state
of a root run, the run's tags and metadata, token usage and names read from LangChain's objects. Needs no LangChain
import itself."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from ._json import Deferred, to_jsonable

if TYPE_CHECKING:
    from ._run import Run
    from ._spans import LlmCall, Step, ToolCall

logger = logging.getLogger("runwatch")

METADATA_SDK_RUN_ID = "runwatch_sdk_run_id"
METADATA_AGENT_NAME = "runwatch_agent_name"
METADATA_RESPONDED_BY = "runwatch_responded_by"
METADATA_INPUT_REPORTED = "runwatch_input_reported"
MAX_WAITING_RUNS = 10_000
# What LangChain and LangGraph add to a run's tags and metadata themselves (a node's step, LangSmith's flags, the
# thread and checkpoint, the integration and model names, versions), and the handler's own keys: not the user's.
_INTERNAL_TAG = re.compile(r"^(?:seq|graph):step:\d+$|^langsmith:")
_INTERNAL_KEYS = frozenset(("thread_id", "checkpoint_ns", "checkpoint_id"))
_INTERNAL_KEY_PREFIXES = ("langgraph_", "ls_", "lc_", "runwatch_", "__")
_M = TypeVar("_M", bound=Callable[..., Any])


def _logs_failures(method: _M) -> _M:
    """A callback never raises into the user's graph: a failure is logged at debug level and swallowed."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception:
            logger.debug("runwatch: %s failed", method.__name__, exc_info=True)
            return None

    return wrapper  # type: ignore[return-value]


def _mro_names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def is_interrupt(exc: BaseException) -> bool:
    """LangGraph's interrupt() (GraphInterrupt, NodeInterrupt): the run pauses for input, it did not fail."""
    return "GraphInterrupt" in _mro_names(exc)


def _is_control_flow(exc: BaseException) -> bool:
    """LangGraph's GraphBubbleUp family (interrupts, Command(graph=PARENT)): not errors."""
    return "GraphBubbleUp" in _mro_names(exc)


def _interrupts_of(exc: BaseException) -> list[Any]:
    arg = exc.args[0] if exc.args else None
    if isinstance(arg, Sequence) and not isinstance(arg, (str, bytes)):
        return list(arg)
    return [arg] if arg is not None else []


def record_interrupts(state: _RootState, exc: BaseException, node: str | None) -> None:
    """human_input_requested for each interrupt of a GraphInterrupt not reported yet: its question and context."""
    from ._json import to_object

    for intr in _interrupts_of(exc):
        value = getattr(intr, "value", intr)
        intr_id = getattr(intr, "id", None) or getattr(intr, "interrupt_id", None)
        key = str(intr_id) if intr_id is not None else repr(value)
        if key in state.interrupt_ids:
            continue
        state.interrupt_ids.add(key)
        state.interrupted = True
        if isinstance(value, dict):
            q = value.get("question") or value.get("prompt") or value.get("message") or value.get("query")
            question = q if isinstance(q, str) else _short(value)
            context: dict[str, Any] = dict(value)
        else:
            question = value if isinstance(value, str) else _short(value)
            context = {"value": value}
        if intr_id is not None:
            context["interrupt_id"] = str(intr_id)
        if node:
            context["node"] = node
        state.run.emit(
            "human_input_requested", {"question": question, "context": to_object(context), "channel": "langgraph"}
        )


def run_tags(tags: list[str] | None) -> list[str]:
    """The tags a root run's config gave (`config={"tags": [...]}`), without LangChain's own."""
    return [t for t in tags or () if isinstance(t, str) and not _INTERNAL_TAG.match(t)]


def run_metadata(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The metadata a root run's config gave (`config={"metadata": {...}}`), without LangChain's and LangGraph's own
    keys (thread_id is the run's session already)."""
    return {
        k: v
        for k, v in (metadata or {}).items()
        if isinstance(k, str) and k not in _INTERNAL_KEYS and not k.startswith(_INTERNAL_KEY_PREFIXES)
    }


def _resume_value(inputs: Any) -> tuple[bool, Any]:
    """(True, value) when the graph input is a LangGraph Command(resume=...)."""
    if type(inputs).__name__ == "Command" and getattr(inputs, "resume", None) is not None:
        return True, inputs.resume
    return False, None


@dataclass
class _RootState:
    run: Run
    thread_id: str | None
    owns_run: bool  # False when the callbacks report into a run the user opened with client.run()
    root_kind: str = "chain"
    interrupted: bool = False
    interrupt_ids: set[str] = field(default_factory=set)
    members: list[UUID] = field(default_factory=list)
    steps: dict[UUID, Step] = field(default_factory=dict)
    tools: dict[UUID, ToolCall] = field(default_factory=dict)
    llm_models: dict[UUID, tuple[str | None, str | None]] = field(default_factory=dict)
    llms: dict[UUID, LlmCall] = field(default_factory=dict)
    # LangChain's run tree: each member's parent, and which members are spans (their run id is the span id).
    parent_of: dict[UUID, UUID | None] = field(default_factory=dict)
    spans: set[UUID] = field(default_factory=set)

    def span_parent(self, parent_run_id: UUID | None) -> str | None:
        """The nearest ancestor that is a span (a node, a tool or an LLM call), as a span id; None at the top."""
        seen = 0
        while parent_run_id is not None and seen < 1000:
            if parent_run_id in self.spans:
                return str(parent_run_id)
            parent_run_id = self.parent_of.get(parent_run_id)
            seen += 1
        return None

    cost_complete: bool = True


def usage_from_llm_result(response: Any) -> tuple[int, int, str | None]:
    """(prompt_tokens, completion_tokens, model) of an LLMResult: usage_metadata, else llm_output."""
    prompt = completion = 0
    model: str | None = None
    found = False
    for gens in getattr(response, "generations", None) or []:
        for gen in gens or []:
            msg = getattr(gen, "message", None)
            um = getattr(msg, "usage_metadata", None)
            if um:
                prompt += int(um.get("input_tokens") or 0)
                completion += int(um.get("output_tokens") or 0)
                found = True
            rm = getattr(msg, "response_metadata", None) or {}
            model = model or rm.get("model_name") or rm.get("model")
    llm_output = getattr(response, "llm_output", None) or {}
    if not found:
        tu = llm_output.get("token_usage") or llm_output.get("usage") or {}
        if isinstance(tu, dict):
            prompt = int(tu.get("prompt_tokens") or tu.get("input_tokens") or 0)
            completion = int(tu.get("completion_tokens") or tu.get("output_tokens") or 0)
    model = model or llm_output.get("model_name") or llm_output.get("model")
    return prompt, completion, (str(model) if model else None)


def _first_generation_text(response: Any) -> Any:
    try:
        gen = response.generations[0][0]
        msg = getattr(gen, "message", None)
        return msg if msg is not None else gen.text
    except (AttributeError, IndexError, TypeError):
        return None


def _node_path(metadata: dict[str, Any], node: str) -> str:
    """'outer/inner' for a node of a subgraph (from langgraph_checkpoint_ns), else the node name."""
    ns = metadata.get("langgraph_checkpoint_ns")
    if isinstance(ns, str) and "|" in ns:
        parts = [p.split(":", 1)[0] for p in ns.split("|") if p]
        if parts and parts[-1] == node:
            return "/".join(parts)
    return node


def _short(value: Any) -> str:
    from ._json import preview

    return preview(value)


def usage_details_from_llm_result(response: Any) -> dict[str, int]:
    """cached_tokens, cache_write_tokens and reasoning_tokens from the messages' usage_metadata, where reported."""
    out: dict[str, int] = {}
    for gens in getattr(response, "generations", None) or []:
        for gen in gens or []:
            um = getattr(getattr(gen, "message", None), "usage_metadata", None) or {}
            inp = um.get("input_token_details") or {}
            outp = um.get("output_token_details") or {}
            for key, value in (
                ("cached_tokens", inp.get("cache_read")),
                ("cache_write_tokens", inp.get("cache_creation")),
                ("reasoning_tokens", outp.get("reasoning")),
            ):
                if isinstance(value, int) and value > 0:
                    out[key] = out.get(key, 0) + value
    return out


def _message_pairs(batches: list[list[Any]]) -> Any:
    return to_jsonable(
        [
            {"role": str(getattr(m, "type", "message")), "content": m.content if hasattr(m, "content") else str(m)}
            for batch in batches
            for m in batch
        ]
    )


def messages_of(inputs: Any) -> Any:
    """A chat model's messages ([[BaseMessage]]) as role/content pairs, converted on the sender thread (the lists
    copied now, the messages read there: a message's str() is slow pydantic repr work); prompts as they are."""
    if isinstance(inputs, list) and inputs and isinstance(inputs[0], list):
        return Deferred(_message_pairs, [list(batch) for batch in inputs])
    return inputs
