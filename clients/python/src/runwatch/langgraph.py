"""LangGraph human-in-the-loop helpers: resume an interrupted graph with the answer given on the dashboard.

handler = CallbackHandler()
config = {"configurable": {"thread_id": "ticket-42"}, "callbacks": [handler]}
result = graph.invoke(inputs, config)          # an interrupt() pauses it: status waiting_for_input
if "__interrupt__" in result:
    result = resume_from_dashboard(graph, config, timeout=3600)   # waits for the answer, then resumes
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .client import HumanInput, Runwatch, get_client
from .langchain import (
    METADATA_INPUT_REPORTED,
    METADATA_RESPONDED_BY,
    METADATA_SDK_RUN_ID,
    CallbackHandler,
)


def _handlers(config: dict[str, Any]) -> list[CallbackHandler]:
    cbs = config.get("callbacks")
    handlers = getattr(cbs, "handlers", cbs) or []  # a list, or a CallbackManager
    return [h for h in handlers if isinstance(h, CallbackHandler)]


def _client_for(config: dict[str, Any], client: Runwatch | None) -> Runwatch:
    """The client given, else the first Runwatch handler's in the config, else the default client."""
    if client is not None:
        return client
    handlers = _handlers(config)
    return handlers[0].client if handlers else get_client()


def sdk_run_id_for(config: dict[str, Any], sdk_run_id: str | None = None) -> str:
    """The Runwatch run a resume with this config continues: explicit, metadata, what the config's handler saw, else
    the thread's run waiting for input on the server (one run per invocation) or the thread id (run_id_from_thread).
    Raises LookupError when the server has no such run."""
    if sdk_run_id:
        return sdk_run_id
    metadata = config.get("metadata") or {}
    if metadata.get(METADATA_SDK_RUN_ID):
        return str(metadata[METADATA_SDK_RUN_ID])
    thread_id = (config.get("configurable") or {}).get("thread_id")
    handlers = _handlers(config)
    for handler in handlers:
        if thread_id is not None:
            found = handler.sdk_run_id_for_thread(str(thread_id))
            if found:
                return found
        if handler.sdk_run_id:
            return handler.sdk_run_id
    if thread_id is None:
        raise ValueError("cannot tell which run to resume: pass sdk_run_id= or a config with a thread_id")
    if handlers and not handlers[0].run_id_from_thread:
        # One run per invocation and this process did not see the interrupt: the server knows the paused run.
        found = handlers[0].client.waiting_run_of(str(thread_id))
        if found:
            return found
        raise LookupError(f"no run of thread {thread_id!r} waits for input (yet)")
    return str(thread_id)


def _resume_config(config: dict[str, Any], sdk_run_id: str, answer: HumanInput, client: Runwatch) -> dict[str, Any]:
    metadata = dict(config.get("metadata") or {})
    metadata[METADATA_SDK_RUN_ID] = sdk_run_id
    if answer.responded_by:
        metadata[METADATA_RESPONDED_BY] = answer.responded_by
    if not _handlers(config):
        # No handler will see the resume: report the answer here so the run leaves waiting_for_input.
        client.emit(
            "human_input_received",
            sdk_run_id,
            {"response": answer.response, **({"responded_by": answer.responded_by} if answer.responded_by else {})},
        )
        metadata[METADATA_INPUT_REPORTED] = True
    return {**config, "metadata": metadata}


def _command(value: Any) -> Any:
    try:
        from langgraph.types import Command
    except ImportError as e:  # pragma: no cover
        raise ImportError("resume_from_dashboard needs langgraph: pip install 'runwatch[langgraph]'") from e
    return Command(resume=value)


def wait_for_dashboard_answer(
    config: dict[str, Any],
    client: Runwatch | None = None,
    timeout: float | None = None,
    *,
    sdk_run_id: str | None = None,
    poll_wait: float = 30.0,
) -> tuple[str, HumanInput]:
    """Blocks until a person answers the run's pending question on the dashboard; (sdk_run_id, answer)."""
    client = _client_for(config, client)
    client.flush(timeout=10)  # the question must be on the server before anyone can answer it
    rid = _paused_run(config, sdk_run_id, timeout)
    return rid, client.wait_for_input(rid, timeout, poll_wait=poll_wait)


def _paused_run(config: dict[str, Any], sdk_run_id: str | None, timeout: float | None) -> str:
    """sdk_run_id_for, asked again while the server has not stored the interrupt yet (up to 30 s or `timeout`)."""
    deadline = time.monotonic() + min(30.0, timeout if timeout is not None else 30.0)
    while True:
        try:
            return sdk_run_id_for(config, sdk_run_id)
        except LookupError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.25)


def resume_from_dashboard(
    graph: Any,
    config: dict[str, Any],
    client: Runwatch | None = None,
    timeout: float | None = None,
    *,
    sdk_run_id: str | None = None,
    poll_wait: float = 30.0,
) -> Any:
    """Waits for the dashboard answer to the graph's interrupt, then resumes it with Command(resume=answer).

    Returns what graph.invoke returns. Raises runwatch.HumanInputTimeout if nobody answers within `timeout`.
    """
    client = _client_for(config, client)
    rid, answer = wait_for_dashboard_answer(config, client, timeout, sdk_run_id=sdk_run_id, poll_wait=poll_wait)
    return graph.invoke(_command(answer.response), _resume_config(config, rid, answer, client))


async def aresume_from_dashboard(
    graph: Any,
    config: dict[str, Any],
    client: Runwatch | None = None,
    timeout: float | None = None,
    *,
    sdk_run_id: str | None = None,
    poll_wait: float = 30.0,
) -> Any:
    """resume_from_dashboard for async graphs: waits in a worker thread, resumes with graph.ainvoke."""
    client = _client_for(config, client)
    rid, answer = await asyncio.to_thread(
        wait_for_dashboard_answer, config, client, timeout, sdk_run_id=sdk_run_id, poll_wait=poll_wait
    )
    return await graph.ainvoke(_command(answer.response), _resume_config(config, rid, answer, client))


__all__ = ["aresume_from_dashboard", "resume_from_dashboard", "sdk_run_id_for", "wait_for_dashboard_answer"]
