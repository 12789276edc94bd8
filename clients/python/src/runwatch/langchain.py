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

import logging
import threading
import uuid
from typing import Any
from uuid import UUID

try:
    from langchain_core.callbacks import BaseCallbackHandler
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("runwatch.langchain needs langchain-core: pip install 'runwatch[langchain]'") from e

from ._context import UNSET
from ._langchain_models import _ModelCallbacks
from ._langchain_support import (
    MAX_WAITING_RUNS,
    METADATA_AGENT_NAME,
    METADATA_INPUT_REPORTED,
    METADATA_RESPONDED_BY,
    METADATA_SDK_RUN_ID,
    _is_control_flow,
    _logs_failures,
    _node_path,
    _resume_value,
    _RootState,
    is_interrupt,
    record_interrupts,
    run_metadata,
    run_tags,
    usage_from_llm_result,
)
from .client import Run, Runwatch, current_run, get_client

logger = logging.getLogger("runwatch")


class CallbackHandler(_ModelCallbacks, BaseCallbackHandler):
    """Reports LangChain / LangGraph runs to Runwatch. Safe to share between threads and tasks.

    Args:
        client: the Runwatch client (default: runwatch.get_client(), configured from the environment).
        agent_name: name of the agent (default: config metadata ``runwatch_agent_name``, else the graph's name).
        sdk_run_id: use this run id for the next root invocation(s) (default: derived, see run_id_from_thread).
        run_id_from_thread: True: the config's ``thread_id`` is the sdk_run_id, so every invocation of a thread (each
            chat turn) adds to one run — the behaviour before sessions. Default False: one run per invocation, the
            thread its session (``session_id``); a resume continues the run its interrupt paused, found on the
            server when this handler did not see the interrupt (another process).
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
        run_id_from_thread: bool = False,
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
        """The run a resume of the thread continues, as far as this handler knows without asking the server."""
        run = self._waiting.get(str(thread_id))
        if run is not None:
            return run.sdk_run_id
        if self.sdk_run_id:
            return self.sdk_run_id
        return str(thread_id) if self.run_id_from_thread else None

    def find_waiting_run(self, thread_id: str) -> str | None:
        """sdk_run_id_for_thread, else the thread's run that the server says waits for input (None: none stored)."""
        return self.sdk_run_id_for_thread(thread_id) or self.client.waiting_run_of(str(thread_id))

    def _waiting_on_server(self, thread_id: str) -> str | None:
        try:
            return self.client.waiting_run_of(thread_id)
        except Exception as e:  # the resume is then reported as a run of its own
            logger.warning("runwatch: could not ask which run of thread %r waits for input: %s", thread_id, e)
            return None

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
            state.parent_of[run_id] = parent_run_id
        return state

    def _open_root(
        self,
        run_id: UUID,
        name: str | None,
        inputs: Any,
        metadata: dict[str, Any] | None,
        kind: str,
        tags: list[str] | None = None,
    ) -> _RootState:
        metadata = metadata or {}
        thread_id = metadata.get("thread_id")
        thread_id = str(thread_id) if thread_id is not None else None
        # The config's own tags and metadata (invoke(..., config={"tags": [...], "metadata": {...}})) are the run's.
        user_tags, user_metadata = run_tags(tags), run_metadata(metadata)
        outer = current_run()
        if outer is not None and outer.client is self.client and not outer.ended:
            # Inside `with client.run(...)`: report into that run instead of opening one.
            state = _RootState(run=outer, thread_id=thread_id, owns_run=False, root_kind=kind)
            outer.add_tags(*user_tags)
            outer.set_metadata(user_metadata)
        else:
            resumed, resume_value = _resume_value(inputs)
            sdk_run_id = metadata.get(METADATA_SDK_RUN_ID) or self.sdk_run_id
            run = self._waiting.pop(thread_id, None) if thread_id is not None else None
            if run is not None and sdk_run_id and run.sdk_run_id != sdk_run_id:
                run = None
            if run is not None and not resumed and not self.run_id_from_thread:
                run = None  # a new turn while an interrupt is unanswered: a run of its own
            continues = run is not None and resumed
            if run is None:
                if not sdk_run_id and thread_id is not None and self.run_id_from_thread:
                    sdk_run_id = thread_id
                elif not sdk_run_id and thread_id is not None and resumed:
                    sdk_run_id = self._waiting_on_server(thread_id)
                continues = resumed and bool(sdk_run_id)
                agent = self.agent_name or metadata.get(METADATA_AGENT_NAME) or name or "agent"
                framework = self.framework or (
                    "langgraph" if metadata.get("ls_integration") == "langgraph" or name == "LangGraph" else "langchain"
                )
                run = self.client.run(
                    str(agent),
                    {"resume": resume_value} if resumed else inputs,
                    sdk_run_id=sdk_run_id or str(uuid.uuid4()),
                    framework=framework,
                    session_id=thread_id,
                    tags=user_tags,
                    metadata=user_metadata,
                )
            else:  # a run this handler paused, resumed: what the resume's config adds goes with its next event
                run.add_tags(*user_tags)
                run.set_metadata(user_metadata)
            state = _RootState(run=run, thread_id=thread_id, owns_run=True, root_kind=kind)
            if continues:
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
            record_interrupts(state, error, None)
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
            self._open_root(run_id, name, inputs, metadata, "chain", tags)
            return
        node = (metadata or {}).get("langgraph_node")
        if not node or node != name or str(node).startswith("__"):
            return
        parent_step = state.steps.get(parent_run_id) if parent_run_id is not None else None
        if parent_step is not None and parent_step.node_name.endswith(str(node)):
            return  # a runnable inside the node that carries the node's name
        state.steps[run_id] = state.run.step(
            _node_path(metadata or {}, str(node)),
            span_id=str(run_id),
            parent_span_id=state.span_parent(parent_run_id) or UNSET,
        ).start()
        state.spans.add(run_id)

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
            record_interrupts(state, error, step.node_name if step else None)
        elif step is not None:
            step.end(error=None if _is_control_flow(error) else error)

    # ---- tools and retrievers -------------------------------------------------------------------------

    def _tool_start(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        name: str,
        input_value: Any,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        state = self._adopt(run_id, parent_run_id)
        if state is None:
            state = self._open_root(run_id, name, input_value, metadata, "tool", tags)
        state.tools[run_id] = state.run.tool_call(
            name, input=input_value, span_id=str(run_id), parent_span_id=state.span_parent(parent_run_id) or UNSET
        ).start()
        state.spans.add(run_id)

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
        self._tool_start(run_id, parent_run_id, str(name), inputs if inputs is not None else input_str, tags, metadata)

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


__all__ = ["CallbackHandler", "is_interrupt", "usage_from_llm_result"]
