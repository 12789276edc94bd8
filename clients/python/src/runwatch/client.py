"""The client: queues a run's events and sends them in the background (_transport.py), opens runs (_run.py), and
offers the decorators (trace_run, tool, step: _decorators.py) and the human-input calls (_human_input.py)."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ._attributes import MAX_ENVIRONMENT_CHARS, MAX_RELEASE_CHARS, label
from ._context import UNSET, current_run
from ._datasets import add_dataset_items, create_dataset, dataset_items, get_dataset
from ._decorators import Decorators
from ._evaluators import ServerEvaluators
from ._experiments import ExperimentSpec, ExperimentSummary, run_experiment
from ._gate import activate_config_version
from ._http import HttpClient
from ._human_input import HumanInput, get_input, wait_for_input
from ._json import iso_utc
from ._prompts import Prompt, PromptCache
from ._run import Run
from ._scores import ScoreSource, post_score
from ._sessions import find_waiting_run
from ._spans import Step, ToolCall
from ._transport import DropPolicy, Transport, TransportStats

logger = logging.getLogger("runwatch")

DEFAULT_BASE_URL = "http://localhost:8080"


class Runwatch(Decorators, ServerEvaluators):
    """Sends agent run events to a Runwatch server in the background.

    Events are queued in memory and sent in batches by a daemon thread; recording an event never blocks
    the agent and never raises. Queued events are flushed at interpreter exit. `environment` and `release`
    (default: RUNWATCH_ENVIRONMENT / RUNWATCH_RELEASE) are those of every run that names none of its own.
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
        environment: str | None = None,
        release: str | None = None,
    ) -> None:
        self.environment = label(
            environment or os.environ.get("RUNWATCH_ENVIRONMENT"), MAX_ENVIRONMENT_CHARS, "environment"
        )
        self.release = label(release or os.environ.get("RUNWATCH_RELEASE"), MAX_RELEASE_CHARS, "release")
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
        self.prompt_cache = PromptCache(self)
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
        span_id: str | None = None,
        parent_span_id: str | None = None,
        session_id: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> None:
        """Queues one raw event (see the ingest contract). `payload` must already be JSON-safe; `attributes` are
        envelope fields sent as they are (tags, metadata, end_user, environment, release)."""
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
            if span_id:
                ev["span_id"] = span_id
            if parent_span_id:
                ev["parent_span_id"] = parent_span_id
            if session_id:
                ev["session_id"] = session_id
            if attributes:
                ev.update(attributes)
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
        session_id: str | None = None,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        end_user: str | None = None,
        environment: str | None = None,
        release: str | None = None,
        start_fields: Mapping[str, Any] | None = None,
    ) -> Run:
        """A run, to use as `with client.run(...) as run:` (or `async with`), or with run.start()/end().
        `session_id` groups it with the other turns of a conversation or thread (the dashboard's /sessions).
        `tags` (strings), `metadata` (flat: string, number or boolean values), `end_user` (your agent's user),
        `environment` and `release` (default: the client's) describe the run; the runs list filters by them.
        They are cut to the server's bounds (see _attributes.py); run.add_tags() / run.set_metadata() add more.
        `start_fields` are extra fields of its run_start payload (low level)."""
        return Run(
            self,
            agent_name,
            input,
            sdk_run_id=sdk_run_id,
            framework=framework,
            config_version=config_version,
            session_id=session_id,
            tags=tags,
            metadata=metadata,
            end_user=end_user,
            environment=environment if environment is not None else self.environment,
            release=release if release is not None else self.release,
            start_fields=start_fields,
        )

    # ---- scores (_scores.py) ------------------------------------------------------------------------------

    def score(
        self,
        sdk_run_id: str,
        name: str,
        value: float | bool | str,
        *,
        comment: str | None = None,
        span_id: str | None = None,
        source: ScoreSource | None = None,
        timeout: float = 10.0,
    ) -> str:
        """Scores a run or one of its spans (POST /api/scores); returns the score_id. Flushes the run's events
        first and retries while the server is still storing the run; raises RunwatchError when refused."""
        return post_score(
            self, sdk_run_id, name, value, comment=comment, span_id=span_id, source=source, timeout=timeout
        )

    def waiting_run_of(self, session_id: str) -> str | None:
        """The sdk_run_id of the session's newest run waiting for input (None when the server has none): how a
        LangGraph resume in another process finds its run. Raises RunwatchError on a refusal or no network."""
        return find_waiting_run(self, session_id)

    def get_prompt(
        self,
        name: str,
        label: str = "production",
        *,
        version: int | None = None,
        fallback: Any = None,
        cache_ttl_s: float = 60.0,
        timeout_s: float = 2.0,
    ) -> Prompt:
        """A prompt version by label or number, to `compile(**vars)`: from the in-process cache, else the server
        within `timeout_s`, else `fallback` (text, messages, or {"prompt", "config"}). Never waits on a refresh
        (_prompts.py)."""
        return self.prompt_cache.get(
            name, label=label, version=version, fallback=fallback, cache_ttl_s=cache_ttl_s, timeout_s=timeout_s
        )

    # ---- datasets (_datasets.py) ----------------------------------------------------------------------------

    def create_dataset(self, name: str, description: str | None = None) -> dict[str, Any]:
        """Creates a dataset in the key's project (POST /api/datasets); returns it. Raises RunwatchError when the
        name is taken or refused."""
        return create_dataset(self, name, description)

    def get_dataset(self, name: str) -> dict[str, Any]:
        """The dataset and its versions, newest first: {"dataset": {...}, "versions": [...]}."""
        return get_dataset(self, name)

    def add_dataset_items(self, name: str, items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
        """Adds or updates items (each {"input", "expected_output"?, "metadata"?, "id"?, "source_sdk_run_id"?}) as one
        new version, all or nothing: {"version", "ids", "changed"}. Raises RunwatchError naming a bad item."""
        return add_dataset_items(self, name, items)

    def dataset_items(
        self, name: str, *, version: int | None = None, status: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every item of a version (default: the current one), by id, fetched a page at a time."""
        return dataset_items(self, name, version=version, status=status)

    def run_experiment(
        self,
        *,
        dataset: str,
        name: str,
        task: Callable[..., Any],
        evaluators: Iterable[Callable[..., Any]] = (),
        server_evaluators: Iterable[str] = (),
        max_concurrency: int = 8,
        repetitions: int = 1,
        description: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        agent_name: str | None = None,
        config_version: int | None = None,
        prompt: Prompt | None = None,
        prompt_name: str | None = None,
        prompt_version: int | None = None,
        dataset_version: int | None = None,
        resume: bool = False,
        results_timeout: float = 30.0,
    ) -> ExperimentSummary:
        """Runs `task` over every active item of a dataset version as the experiment `name` (docs/EVALUATION.md):
        each item x repetition is a run naming the experiment and the item, scored by `evaluators`, at most
        `max_concurrency` at once; `server_evaluators` (names of the project's evaluators) judge each run on the
        server as it ends, their scores arriving a moment later. A task that raises makes that item's run an error;
        the rest go on. `resume=True` continues the experiment of that name, re-running only items without a
        successful result. `prompt` (what get_prompt returned, the one the task uses) or `prompt_name` and
        `prompt_version` name the prompt version the experiment runs, listed on the prompt's page and compared by the
        gate on its `production` label (docs/PROMPTS.md). Returns the server's summary (score means, errors, cost,
        latency p50/p95) and the experiment's URL."""
        if prompt is not None:
            if prompt.is_fallback or prompt.version is None:
                raise ValueError(
                    f"prompt {prompt.name!r} is the caller's fallback (the server was not reached): it has no version "
                    "an experiment can name"
                )
            prompt_name, prompt_version = prompt.name, prompt.version
        return run_experiment(
            self,
            ExperimentSpec(
                dataset=dataset,
                name=name,
                task=task,
                evaluators=tuple(evaluators),
                server_evaluators=tuple(server_evaluators),
                max_concurrency=max_concurrency,
                repetitions=repetitions,
                description=description,
                metadata=dict(metadata or {}),
                agent_name=agent_name,
                config_version=config_version,
                prompt_name=prompt_name,
                prompt_version=prompt_version,
                dataset_version=dataset_version,
                resume=resume,
                results_timeout=results_timeout,
            ),
        )

    def activate_config_version(
        self, agent: str, version: int, *, force: bool = False, reason: str | None = None
    ) -> dict[str, Any]:
        """Activates a config version through the activation gate (docs/EVALUATION.md): returns {agent, version,
        forced, gate}; raises RunwatchError (HTTP 409) naming the score and both values when its latest experiment
        broke a rule, unless `force=True` with a `reason` (a key of an admin or the owner)."""
        return activate_config_version(self, agent, version, force=force, reason=reason)

    # ---- human input (_human_input.py) ------------------------------------------------------------------

    def get_input(self, sdk_run_id: str, *, wait: float = 0) -> HumanInput | None:
        """One look at GET /api/runs/{sdk_run_id}/input (long-polls up to `wait` s). None if no answer yet."""
        return get_input(self, sdk_run_id, wait=wait)

    def wait_for_input(self, sdk_run_id: str, timeout: float | None = None, *, poll_wait: float = 30.0) -> HumanInput:
        """Long-polls the input endpoint until a (new) answer arrives; raises HumanInputTimeout."""
        return wait_for_input(self, sdk_run_id, timeout, poll_wait=poll_wait)


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
