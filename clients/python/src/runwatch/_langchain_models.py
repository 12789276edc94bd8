"""The model callbacks of the LangChain handler (langchain.py): an LLM or chat model call records its model, token
usage and cost on the run it belongs to (or is a run of its own when called outside one)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from . import _pricing
from ._langchain_support import _first_generation_text, _logs_failures, _RootState, usage_from_llm_result


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
