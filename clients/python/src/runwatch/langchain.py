"""LangChain / LangGraph callback handler (``pip install runwatch[langchain]``).

    from runwatch.langchain import CallbackHandler
    graph.invoke(inputs, config={"callbacks": [CallbackHandler()]})

Mapping: the root chain (the graph invocation) → run_start / run_end / error; each LangGraph node (metadata
``langgraph_node``) → step start/end with duration and output; tools and retrievers → tool_call start/end
with previews; chat model / LLM usage → summed into run_end's tokens, model and cost. A LangGraph
``interrupt()`` → human_input_requested (the run waits, it did not fail); resuming the thread with
``Command(resume=...)`` → human_input_received and the run goes on under the same sdk_run_id.

The handler keys its state by the root run_id, so one handler serves concurrent runs (threads or asyncio
tasks), and a subgraph's root chain (it has a parent) is part of the outer run, not a new one. It sets
``run_inline`` so that under ``ainvoke``/``astream`` its (non-blocking) methods run inline on the event
loop, in order, instead of in a thread pool.
"""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from uuid import UUID

try:
    from langchain_core.callbacks import BaseCallbackHandler
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("runwatch.langchain needs langchain-core: pip install 'runwatch[langchain]'") from e

from . import _pricing
from .client import Run, Runwatch, Step, ToolCall, current_run, get_client

logger = logging.getLogger("runwatch")

METADATA_SDK_RUN_ID = "runwatch_sdk_run_id"
METADATA_AGENT_NAME = "runwatch_agent_name"
METADATA_RESPONDED_BY = "runwatch_responded_by"
METADATA_INPUT_REPORTED = "runwatch_input_reported"
MAX_WAITING_RUNS = 10_000
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
    cost_complete: bool = True


class CallbackHandler(BaseCallbackHandler):
    """Reports LangChain / LangGraph runs to Runwatch. Safe to share between threads and tasks.

    Args:
        client: the Runwatch client (default: runwatch.get_client(), configured from the environment).
        agent_name: name of the agent (default: config metadata ``runwatch_agent_name``, else the graph's name).
        sdk_run_id: use this run id for the next root invocation(s) (default: derived, see run_id_from_thread).
        run_id_from_thread: when the config has a ``thread_id``, use it as the sdk_run_id, so that a graph resumed
            after an interrupt (even in another process) continues the same run. Set False for chat-style threads
            whose every turn should be its own run; resumes in the same process still continue the paused run.
        framework: reported in run_start (default "langgraph" for graphs, else "langchain").
    """

    run_inline = True
    raise_error = False

    def __init__(
        self,
        client: Runwatch | None = None,
        *,
        agent_name: str | None = None,
        sdk_run_id: str | None = None,
        run_id_from_thread: bool = True,
        framework: str | None = None,
    ) -> None:
        super().__init__()
        self.client = client or get_client()
        self.agent_name = agent_name
        self.sdk_run_id = sdk_run_id
        self.run_id_from_thread = run_id_from_thread
        self.framework = framework
        self._roots: dict[UUID, _RootState] = {}
        self._owner: dict[UUID, UUID] = {}  # any run_id seen → its root run_id
        self._waiting: dict[str, Run] = {}  # thread_id → run paused by an interrupt (in this process)
        self._lock = threading.Lock()
        self.last_run: Run | None = None

    # ---- public helpers -------------------------------------------------------------------------------

    def waiting_run(self, thread_id: str) -> Run | None:
        """The run paused by an interrupt on this thread (in this process), if any."""
        return self._waiting.get(str(thread_id))

    def sdk_run_id_for_thread(self, thread_id: str) -> str | None:
        run = self._waiting.get(str(thread_id))
        if run is not None:
            return run.sdk_run_id
        return str(thread_id) if self.run_id_from_thread else None

    # ---- state ----------------------------------------------------------------------------------------

    def _state_of(self, run_id: UUID | None) -> _RootState | None:
        if run_id is None:
            return None
        root = self._owner.get(run_id)
        return self._roots.get(root) if root is not None else None

    def _adopt(self, run_id: UUID, parent_run_id: UUID | None) -> _RootState | None:
        """Registers a child run under its parent's root; None when the parent is unknown."""
        state = self._state_of(parent_run_id)
        if state is not None:
            self._owner[run_id] = self._owner[parent_run_id]  # type: ignore[index]
            state.members.append(run_id)
        return state

    def _open_root(
        self,
        run_id: UUID,
        name: str | None,
        inputs: Any,
        metadata: dict[str, Any] | None,
        kind: str,
    ) -> _RootState:
        metadata = metadata or {}
        thread_id = metadata.get("thread_id")
        thread_id = str(thread_id) if thread_id is not None else None
        outer = current_run()
        if outer is not None and outer.client is self.client and not outer.ended:
            # Inside `with client.run(...)`: report into that run instead of opening one.
            state = _RootState(run=outer, thread_id=thread_id, owns_run=False, root_kind=kind)
        else:
            resumed, resume_value = _resume_value(inputs)
            sdk_run_id = metadata.get(METADATA_SDK_RUN_ID) or self.sdk_run_id
            run = self._waiting.pop(thread_id, None) if thread_id is not None else None
            if run is not None and sdk_run_id and run.sdk_run_id != sdk_run_id:
                run = None
            if run is None:
                if not sdk_run_id and thread_id is not None and (self.run_id_from_thread or resumed):
                    sdk_run_id = thread_id
                agent = self.agent_name or metadata.get(METADATA_AGENT_NAME) or name or "agent"
                framework = self.framework or (
                    "langgraph" if metadata.get("ls_integration") == "langgraph" or name == "LangGraph" else "langchain"
                )
                run = self.client.run(
                    str(agent),
                    inputs if not resumed else None,
                    sdk_run_id=sdk_run_id or str(uuid.uuid4()),
                    framework=framework,
                )
            state = _RootState(run=run, thread_id=thread_id, owns_run=True, root_kind=kind)
            if resumed:
                run.started = True  # the run exists already: it continues, it does not start again
                if not metadata.get(METADATA_INPUT_REPORTED):
                    run.report_human_input(resume_value, metadata.get(METADATA_RESPONDED_BY) or "langgraph")
            else:
                run.start()
        self._roots[run_id] = state
        self._owner[run_id] = run_id
        state.members.append(run_id)
        self.last_run = state.run
        return state

    def _close_root(self, run_id: UUID) -> _RootState | None:
        state = self._roots.pop(run_id, None)
        if state is not None:
            for member in state.members:
                self._owner.pop(member, None)
        return state

    def _end_root(self, run_id: UUID, output: Any = None, error: BaseException | None = None) -> bool:
        """Closes and finishes run_id when it is a root; False when it is not one."""
        if run_id not in self._roots:
            return False
        state = self._close_root(run_id)
        if state is not None:
            self._finish(state, output=output, error=error)
        return True

    def _finish(self, state: _RootState, output: Any = None, error: BaseException | None = None) -> None:
        run = state.run
        # Close what callbacks left open (e.g. a node interrupted mid-way, a stream abandoned).
        for step in list(state.steps.values()):
            step.end(error=error)
        for tool in list(state.tools.values()):
            tool.end(error=error)
        if not state.cost_complete:
            # Some call's model has no known price: report tokens only and let the server price the run.
            run.cost_usd = None
            run.estimate_cost = False
        if error is not None and is_interrupt(error):
            self._record_interrupts(state, error, None)
        if not state.owns_run:
            return
        if state.interrupted or (error is not None and _is_control_flow(error)):
            if state.interrupted and state.thread_id is not None:
                self._waiting[state.thread_id] = run  # the resume continues this run (usage keeps adding up)
                while len(self._waiting) > MAX_WAITING_RUNS:  # never resumed: forget the oldest
                    self._waiting.pop(next(iter(self._waiting)))
            return
        if error is not None:
            run.fail(error)
        else:
            run.end(output)

    def _record_interrupts(self, state: _RootState, exc: BaseException, node: str | None) -> None:
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
            from ._json import to_object

            state.run.emit(
                "human_input_requested",
                {"question": question, "context": to_object(context), "channel": "langgraph"},
            )

    # ---- chains (graphs, nodes) -----------------------------------------------------------------------

    @_logs_failures
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name")
        state = self._adopt(run_id, parent_run_id)
        if state is None:
            self._open_root(run_id, name, inputs, metadata, "chain")
            return
        node = (metadata or {}).get("langgraph_node")
        if not node or node != name or str(node).startswith("__"):
            return
        parent_step = state.steps.get(parent_run_id) if parent_run_id is not None else None
        if parent_step is not None and parent_step.node_name.endswith(str(node)):
            return  # a runnable inside the node that carries the node's name
        state.steps[run_id] = state.run.step(_node_path(metadata or {}, str(node))).start()

    @_logs_failures
    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        if self._end_root(run_id, output=outputs):
            return
        state = self._state_of(run_id)
        if state is not None:
            step = state.steps.pop(run_id, None)
            if step is not None:
                step.end(output=outputs)

    @_logs_failures
    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        if self._end_root(run_id, error=error):
            return
        state = self._state_of(run_id)
        if state is None:
            return
        step = state.steps.pop(run_id, None)
        if is_interrupt(error):
            if step is not None:
                step.set_output({"interrupted": True})
                step.end()
            self._record_interrupts(state, error, step.node_name if step else None)
        elif step is not None:
            step.end(error=None if _is_control_flow(error) else error)

    # ---- tools and retrievers -------------------------------------------------------------------------

    def _tool_start(self, run_id: UUID, parent_run_id: UUID | None, name: str, input_value: Any) -> None:
        state = self._adopt(run_id, parent_run_id)
        if state is None:
            state = self._open_root(run_id, name, input_value, None, "tool")
        state.tools[run_id] = state.run.tool_call(name, input=input_value).start()

    def _tool_end(self, run_id: UUID, output: Any = None, error: BaseException | None = None) -> None:
        state = self._state_of(run_id)
        if state is None:
            return
        tool = state.tools.pop(run_id, None)
        if tool is not None:
            if error is not None:
                tool.end(error=error)
            else:
                tool.end(output)
        self._end_root(run_id, output=output, error=error)

    @_logs_failures
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        self._tool_start(run_id, parent_run_id, str(name), inputs if inputs is not None else input_str)

    @_logs_failures
    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._tool_end(run_id, output)

    @_logs_failures
    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        if _is_control_flow(error):  # interrupt() inside a tool: the node's error callback reports it
            self._tool_end(run_id, {"interrupted": True})
        else:
            self._tool_end(run_id, error=error)

    @_logs_failures
    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "retriever"
        self._tool_start(run_id, parent_run_id, str(name), query)

    @_logs_failures
    def on_retriever_end(self, documents: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any):
        docs = [getattr(d, "page_content", d) for d in documents or []]
        self._tool_end(run_id, docs)

    @_logs_failures
    def on_retriever_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._tool_end(run_id, error=error)

    # ---- models ---------------------------------------------------------------------------------------

    def _llm_start(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        serialized: dict[str, Any] | None,
        inputs: Any,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        state = self._adopt(run_id, parent_run_id)
        name = kwargs.get("name") or (serialized or {}).get("name") or "llm"
        if state is None:
            state = self._open_root(run_id, str(name), inputs, metadata, "llm")
        params = kwargs.get("invocation_params") or {}
        md = metadata or {}
        model = md.get("ls_model_name") or params.get("model") or params.get("model_name")
        provider = md.get("ls_provider")
        state.llm_models[run_id] = (str(model) if model else None, str(provider) if provider else None)

    @_logs_failures
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._llm_start(run_id, parent_run_id, serialized, messages, metadata, kwargs)

    @_logs_failures
    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._llm_start(run_id, parent_run_id, serialized, prompts, metadata, kwargs)

    @_logs_failures
    def on_llm_end(self, response: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        state = self._state_of(run_id)
        if state is None:
            return
        start_model, provider = state.llm_models.pop(run_id, (None, None))
        prompt, completion, model = usage_from_llm_result(response)
        model = model or start_model
        if prompt or completion:
            cost = None
            if _pricing.available():
                cost = _pricing.estimate_cost_usd(model, prompt, completion, provider)
                if cost is None:
                    state.cost_complete = False
            state.run.add_usage(prompt, completion, model, cost, provider=provider)
        elif model and not state.run.model:
            state.run.set_usage(model=model)
        if run_id in self._roots:
            self._end_root(run_id, output=_first_generation_text(response))

    @_logs_failures
    def on_llm_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        state = self._state_of(run_id)
        if state is None:
            return
        state.llm_models.pop(run_id, None)
        self._end_root(run_id, error=error)


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


__all__ = ["CallbackHandler", "is_interrupt", "usage_from_llm_result"]
