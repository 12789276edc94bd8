"""The model callbacks of the LangChain handler (langchain.py): each LLM or chat model call is an LLM span (its
LangChain run id is the span id) with its own model, provider, messages, answer and token usage; the usage is also
added to the run (or the call is a run of its own when made outside one)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from . import _pricing
from ._context import UNSET
from ._langchain_support import (
    _first_generation_text,
    _logs_failures,
    _RootState,
    messages_of,
    usage_details_from_llm_result,
    usage_from_llm_result,
)


class _ModelCallbacks:
    """Mixed into CallbackHandler, which provides the root-run bookkeeping used here."""

    # From CallbackHandler: _roots, _adopt, _open_root, _state_of, _end_root.
    _roots: dict[UUID, _RootState]

    def _llm_start(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        serialized: dict[str, Any] | None,
        inputs: Any,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
        tags: list[str] | None = None,
    ) -> None:
        state = self._adopt(run_id, parent_run_id)
        name = kwargs.get("name") or (serialized or {}).get("name") or "llm"
        if state is None:
            state = self._open_root(run_id, str(name), inputs, metadata, "llm", tags)
        params = kwargs.get("invocation_params") or {}
        md = metadata or {}
        model = md.get("ls_model_name") or params.get("model") or params.get("model_name")
        provider = md.get("ls_provider")
        state.llm_models[run_id] = (str(model) if model else None, str(provider) if provider else None)
        state.llms[run_id] = state.run.llm_call(
            str(name),
            model=str(model) if model else None,
            provider=str(provider) if provider else None,
            input=messages_of(inputs),
            span_id=str(run_id),
            # No span above it in LangChain's tree: the span around the call in this context, if any.
            parent_span_id=state.span_parent(parent_run_id) or UNSET,
            # metadata={"runwatch_prompt": prompt} in the call's config: the prompt version it used.
            prompt=md.get("runwatch_prompt"),
        ).start()
        state.spans.add(run_id)

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
        self._llm_start(run_id, parent_run_id, serialized, messages, metadata, kwargs, tags)

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
        self._llm_start(run_id, parent_run_id, serialized, prompts, metadata, kwargs, tags)

    @_logs_failures
    def on_llm_end(self, response: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        state = self._state_of(run_id)
        if state is None:
            return
        start_model, provider = state.llm_models.pop(run_id, (None, None))
        prompt, completion, model = usage_from_llm_result(response)
        model = model or start_model
        span = state.llms.pop(run_id, None)
        if span is not None:
            span.set_usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                model=model,
                **usage_details_from_llm_result(response),
            )
            span.end(output=_first_generation_text(response))
        if prompt or completion:
            state.run.add_usage(prompt, completion, model, None, provider=provider)
            if _pricing.available():
                state.run.price_later(model, prompt, completion, provider)  # on the sender thread, with run_end
            else:
                state.cost_complete = False
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
        span = state.llms.pop(run_id, None)
        if span is not None:
            span.end(error=error)
        self._end_root(run_id, error=error)
