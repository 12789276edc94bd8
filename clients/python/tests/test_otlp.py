"""OpenTelemetry's Python SDK exporting to a REAL Runwatch server (docs/OTEL.md): OTLP/HTTP protobuf (with gzip)
and OTLP/gRPC exporters configured the way users configure them (endpoint + Authorization header), and a LangGraph
graph instrumented by openinference-instrumentation-langchain. Read back through GET /api/runs/{trace_id}."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Status, StatusCode

from .conftest import RealServer

pytestmark = pytest.mark.integration


class Recording(SpanExporter):
    """Wraps an exporter and keeps its results: a test must see SUCCESS, not only the data."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.results: list[SpanExportResult] = []
        self.trace_ids: list[str] = []

    def export(self, spans: Any) -> SpanExportResult:
        for s in spans:
            t = format(s.context.trace_id, "032x")
            if t not in self.trace_ids:
                self.trace_ids.append(t)
        result = self.inner.export(spans)
        self.results.append(result)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def provider(exporter: SpanExporter, service: str) -> TracerProvider:
    p = TracerProvider(resource=Resource.create({"service.name": service}))
    p.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))
    return p


def trace_hex(span: Any) -> str:
    return format(span.get_span_context().trace_id, "032x")


def genai_agent(tracer: Any) -> str:
    """invoke_agent → chat (tool call) → execute_tool → chat (answer), GenAI semantic conventions."""
    with tracer.start_as_current_span(
        "invoke_agent travel-planner",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "travel-planner"},
    ) as root:
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 420,
                "gen_ai.usage.output_tokens": 30,
                "gen_ai.response.finish_reasons": ["tool_calls"],
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": '{"city": "Lisbon"}',
                "gen_ai.tool.call.result": "sunny",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 500,
                "gen_ai.usage.output_tokens": 60,
                "gen_ai.output.messages": '[{"role": "assistant", "content": "Pack light."}]',
            },
        ):
            pass
        return trace_hex(root)


def spans_of(server: RealServer, trace_id: str) -> list[dict[str, Any]]:
    status, body = server.get(f"/api/runs/{trace_id}/spans")
    assert status == 200, body
    return body["spans"]


def test_http_protobuf_exporter_with_gzip(real_server: RealServer) -> None:
    exporter = Recording(
        HttpSpanExporter(
            endpoint=f"{real_server.base_url}/v1/traces",
            headers={"Authorization": f"Bearer {real_server.api_key}"},
            compression=Compression.Gzip,
        )
    )
    p = provider(exporter, "travel-service")
    trace_id = genai_agent(p.get_tracer("test_otlp"))
    p.shutdown()
    assert exporter.results and all(r == SpanExportResult.SUCCESS for r in exporter.results)
    body = real_server.wait_run(trace_id, lambda b: b["run"]["status"] == "success" and b["run"]["llm_calls"] == 2)
    run = body["run"]
    assert run["agent_name"] == "travel-planner"
    assert (run["prompt_tokens"], run["completion_tokens"]) == (920, 90)
    assert run["cost_usd"] > 0
    spans = spans_of(real_server, trace_id)
    root = next(s for s in spans if s["parent_span_id"] is None)
    assert root["kind"] == "agent"
    assert sorted(s["kind"] for s in spans if s["parent_span_id"] == root["span_id"]) == ["llm", "llm", "tool"]
    tool = next(s for s in spans if s["kind"] == "tool")
    assert (tool["name"], tool["input_preview"], tool["output_preview"]) == (
        "get_weather",
        '{"city": "Lisbon"}',
        "sunny",
    )


def test_grpc_exporter_and_a_failed_run(real_server: RealServer) -> None:
    exporter = Recording(
        GrpcSpanExporter(
            endpoint=f"127.0.0.1:{real_server.env['RUNWATCH_OTLP_GRPC_PORT']}",
            insecure=True,
            headers=(("authorization", f"Bearer {real_server.api_key}"),),
        )
    )
    p = provider(exporter, "billing-service")
    tracer = p.get_tracer("test_otlp")
    ok_trace = genai_agent(tracer)
    with pytest.raises(TimeoutError):
        with tracer.start_as_current_span(
            "invoke_agent refunder", attributes={"gen_ai.agent.name": "refunder"}
        ) as root:
            failed_trace = trace_hex(root)
            raise TimeoutError("the payments API did not answer")
    p.shutdown()
    assert exporter.results and all(r == SpanExportResult.SUCCESS for r in exporter.results)
    real_server.wait_run(ok_trace, lambda b: b["run"]["status"] == "success" and b["run"]["llm_calls"] == 2)
    body = real_server.wait_run(failed_trace, lambda b: b["run"]["status"] == "error")
    error = next(e for e in body["events"] if e["event_type"] == "error")
    assert error["payload"]["error_type"] == "TimeoutError"
    assert error["payload"]["error_message"] == "the payments API did not answer"
    assert "test_otlp.py" in error["payload"]["traceback"]
    assert body["run"]["agent_name"] == "refunder"


def test_bad_key_is_refused_and_nothing_is_stored(real_server: RealServer) -> None:
    exporter = HttpSpanExporter(
        endpoint=f"{real_server.base_url}/v1/traces", headers={"Authorization": "Bearer " + "0" * 64}
    )
    p = TracerProvider(resource=Resource.create({"service.name": "intruder"}))
    span = p.get_tracer("t").start_span("x")
    span.set_status(Status(StatusCode.OK))
    span.end()
    assert exporter.export([span]) == SpanExportResult.FAILURE
    status, _ = real_server.get(f"/api/runs/{trace_hex(span)}")
    assert status == 404


@pytest.fixture
def instrumented() -> Iterator[Any]:
    pytest.importorskip("openinference.instrumentation.langchain")
    pytest.importorskip("langgraph")
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    yield instrumentor
    instrumentor.uninstrument()


def test_openinference_langgraph(real_server: RealServer, instrumented: Any) -> None:
    """A LangGraph ReAct graph (two models, a tool, parallel branches, a subgraph) traced by OpenInference."""
    from langchain_core.messages import HumanMessage

    from .graphs import build_react_graph

    exporter = Recording(
        HttpSpanExporter(
            endpoint=f"{real_server.base_url}/v1/traces", headers={"Authorization": f"Bearer {real_server.api_key}"}
        )
    )
    p = provider(exporter, "trip-service")
    instrumented.instrument(tracer_provider=p)
    graph = build_react_graph()
    graph.invoke({"messages": [HumanMessage(content="Plan a trip to Lisbon")]}, {"configurable": {"thread_id": "oi-1"}})
    p.shutdown()
    assert exporter.results and all(r == SpanExportResult.SUCCESS for r in exporter.results)
    assert len(exporter.trace_ids) == 1  # one graph invocation, one trace
    trace_id = exporter.trace_ids[0]
    body = real_server.wait_run(trace_id, lambda b: b["run"]["status"] == "success" and b["run"]["llm_calls"] >= 2)
    assert body["run"]["framework"] == "openinference.instrumentation.langchain"
    assert body["run"]["prompt_tokens"] > 0
    spans = spans_of(real_server, trace_id)
    kinds = {s["kind"] for s in spans}
    assert {"chain", "llm", "tool"} <= kinds, kinds
    roots = [s for s in spans if s["parent_span_id"] is None]
    assert len(roots) == 1 and roots[0]["kind"] == "chain"
    by_id = {s["span_id"]: s for s in spans}
    for s in spans:  # every span hangs in the one tree
        seen = 0
        while s["parent_span_id"] is not None and seen < 100:
            s = by_id[s["parent_span_id"]]
            seen += 1
        assert s is roots[0]
    llm = next(s for s in spans if s["kind"] == "llm")
    assert llm["provider"] == "genericfakechatmodel"  # OpenInference's llm.provider (a fake model has no model name)
    assert llm["prompt_tokens"] == 120  # sent as the string "120"
    assert "Plan a trip to Lisbon" in llm["input_preview"]


def test_logs_and_metrics_from_the_python_sdk(real_server: RealServer) -> None:
    """Logs (OTLP/HTTP protobuf): a chat span's content and evaluation sent as GenAI event records, exported before the
    span, show on it (input, output, a score); a trace-only line is the run's; metrics are answered, not kept."""
    from opentelemetry import trace as trace_api
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import LogRecordExportResult, SimpleLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult

    headers = {"Authorization": f"Bearer {real_server.api_key}"}
    log_exporter = OTLPLogExporter(
        endpoint=f"{real_server.base_url}/v1/logs", headers=headers, compression=Compression.Gzip
    )
    results: list[Any] = []
    original = log_exporter.export
    log_exporter.export = lambda batch: results.append(original(batch)) or results[-1]  # type: ignore[method-assign]
    logs = LoggerProvider(resource=Resource.create({"service.name": "py-logs"}))
    logs.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logger = logs.get_logger("runwatch-python-logs")

    tracer_provider = provider(
        HttpSpanExporter(endpoint=f"{real_server.base_url}/v1/traces", headers=headers), "py-logs"
    )
    tracer = tracer_provider.get_tracer("runwatch-python-logs")
    with tracer.start_as_current_span(
        "invoke_agent py-agent", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "py-agent"}
    ) as root:
        with tracer.start_as_current_span(
            "chat gpt-4o", attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
        ) as chat:
            ctx = trace_api.set_span_in_context(chat)
            logger.emit(event_name="gen_ai.user.message", body={"content": "Is it raining in Oslo?"}, context=ctx)
            logger.emit(
                event_name="gen_ai.choice",
                body={"index": 0, "message": {"role": "assistant", "content": "Yes."}},
                context=ctx,
            )
            logger.emit(
                event_name="gen_ai.evaluation.result",
                attributes={"gen_ai.evaluation.name": "correctness", "gen_ai.evaluation.score.label": "pass"},
                context=ctx,
            )
            logs.force_flush()
        logger.emit(body="picked the weather tool", severity_text="INFO", context=trace_api.set_span_in_context(root))
    tracer_provider.shutdown()
    logs.shutdown()
    assert results and all(r == LogRecordExportResult.SUCCESS for r in results)

    trace_id = trace_hex(root)
    chat_id = format(chat.get_span_context().span_id, "016x")
    real_server.wait_run(trace_id, lambda b: b["run"]["status"] == "success")
    span: dict[str, Any] = {}
    for _ in range(200):
        status, span = real_server.get(f"/api/runs/{trace_id}/spans/{chat_id}")
        if status == 200 and len(span["logs"]) == 3 and span["scores"]:
            break
        time.sleep(0.1)
    assert [entry["event_name"] for entry in span["logs"]] == [
        "gen_ai.user.message",
        "gen_ai.choice",
        "gen_ai.evaluation.result",
    ]
    assert span["input"] == [{"role": "user", "content": "Is it raining in Oslo?"}]
    assert span["output"] == {"role": "assistant", "content": "Yes."}
    assert [(s["name"], s["value"], s["source"]) for s in span["scores"]] == [("correctness", "pass", "otel")]
    status, run_logs = real_server.get(f"/api/runs/{trace_id}/logs")
    assert status == 200 and len(run_logs["logs"]) == 4
    assert any(
        entry["body"] == "picked the weather tool" and entry["service_name"] == "py-logs" for entry in run_logs["logs"]
    )

    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader], resource=Resource.create({"service.name": "py-logs"}))
    meters.get_meter("runwatch-python-metrics").create_histogram("gen_ai.client.token.usage").record(
        42, {"gen_ai.token.type": "input"}
    )
    data = reader.get_metrics_data()
    assert data is not None
    assert (
        OTLPMetricExporter(endpoint=f"{real_server.base_url}/v1/metrics", headers=headers).export(data)
        == MetricExportResult.SUCCESS
    )
    meters.shutdown()


def test_grpc_logs_metrics_and_a_span_link(real_server: RealServer) -> None:
    """OTLP/gRPC for all three signals, as an SDK pointed at one endpoint sends them: a worker's span links to the
    planner's span of another trace (a handoff), which the span read names as a run of the project; a log record on
    the worker's span shows on it; metrics are answered with success."""
    from opentelemetry import trace as trace_api
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import LogRecordExportResult, SimpleLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult
    from opentelemetry.trace import Link

    grpc = {
        "endpoint": f"127.0.0.1:{real_server.env['RUNWATCH_OTLP_GRPC_PORT']}",
        "insecure": True,
        "headers": (("authorization", f"Bearer {real_server.api_key}"),),
    }
    spans = Recording(GrpcSpanExporter(**grpc))  # type: ignore[arg-type]
    p = provider(spans, "handoff-service")
    tracer = p.get_tracer("test_otlp")
    log_exporter = OTLPLogExporter(**grpc)  # type: ignore[arg-type]
    results: list[Any] = []
    original = log_exporter.export
    log_exporter.export = lambda batch: results.append(original(batch)) or results[-1]  # type: ignore[method-assign]
    logs = LoggerProvider(resource=Resource.create({"service.name": "handoff-service"}))
    logs.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logger = logs.get_logger("test_otlp")

    with tracer.start_as_current_span(
        "invoke_agent planner", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}
    ) as planner:
        pass
    # A new trace (no parent), linked to the planner's span.
    with tracer.start_as_current_span(
        "invoke_agent worker",
        context=trace_api.set_span_in_context(trace_api.INVALID_SPAN),
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "worker"},
        links=[Link(planner.get_span_context(), {"link.kind": "handoff"})],
    ) as worker:
        here = trace_api.set_span_in_context(worker)
        logger.emit(body="took over from the planner", severity_text="INFO", context=here)
    logs.shutdown()
    p.shutdown()
    assert results and all(r == LogRecordExportResult.SUCCESS for r in results)
    assert spans.results and all(r == SpanExportResult.SUCCESS for r in spans.results)

    planner_trace, worker_trace = trace_hex(planner), trace_hex(worker)
    assert planner_trace != worker_trace
    real_server.wait_run(planner_trace, lambda b: b["run"]["status"] == "success")
    real_server.wait_run(worker_trace, lambda b: b["run"]["status"] == "success")
    worker_id = format(worker.get_span_context().span_id, "016x")
    span: dict[str, Any] = {}
    for _ in range(200):
        status, span = real_server.get(f"/api/runs/{worker_trace}/spans/{worker_id}")
        if status == 200 and span["logs"]:
            break
        time.sleep(0.1)
    assert span["links"] == [
        {
            "trace_id": planner_trace,
            "span_id": format(planner.get_span_context().span_id, "016x"),
            "attributes": {"link.kind": "handoff"},
            "run": planner_trace,
            "agent_name": "planner",
        }
    ]
    assert [(entry["body"], entry["service_name"]) for entry in span["logs"]] == [
        ("took over from the planner", "handoff-service")
    ]

    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader], resource=Resource.create({"service.name": "handoff-service"}))
    meters.get_meter("test_otlp").create_histogram("gen_ai.client.operation.duration").record(0.8)
    data = reader.get_metrics_data()
    assert data is not None
    assert OTLPMetricExporter(**grpc).export(data) == MetricExportResult.SUCCESS  # type: ignore[arg-type]
    meters.shutdown()
