"""What the LangGraph handler costs a small support graph on the agent's thread.

    clients/python/.venv/bin/python clients/python/bench/graph_overhead.py [--cycles 200] [--rounds 5]

A cycle is one conversation turn of tests/graphs.py's weather agent (agent → tool → agent → review, which
interrupts) and its resume: about 46 events. Each condition runs the same cycles: no handler; a no-op callback
handler (LangChain's own dispatch); Runwatch's handler with the server down (nothing is sent: the queue drops) and
up (a capture server in another process). The figure is the CPU time of the thread that runs the graph
(time.thread_time) per cycle; conditions alternate round by round, so the machine's drift hits all alike. The
"long conversation" rows give every turn a history of 200 earlier messages: the handler's cost should not grow
with it.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.graphs import build_graph  # noqa: E402

from runwatch import Runwatch  # noqa: E402
from runwatch.langchain import CallbackHandler  # noqa: E402

SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.capture_server import CaptureServer
s = CaptureServer()
print(s.port, flush=True)
time.sleep(3600)
"""


class NoopHandler(BaseCallbackHandler):
    """Receives every callback the Runwatch handler receives, and does nothing."""

    run_inline = True

    def on_chain_start(self, *a: Any, **k: Any) -> None: ...
    def on_chain_end(self, *a: Any, **k: Any) -> None: ...
    def on_chain_error(self, *a: Any, **k: Any) -> None: ...
    def on_chat_model_start(self, *a: Any, **k: Any) -> None: ...
    def on_llm_end(self, *a: Any, **k: Any) -> None: ...
    def on_tool_start(self, *a: Any, **k: Any) -> None: ...
    def on_tool_end(self, *a: Any, **k: Any) -> None: ...


HISTORY = [
    m
    for i in range(100)
    for m in (HumanMessage(f"earlier question {i} " + "q" * 200), AIMessage(f"earlier answer {i} " + "a" * 400))
]


def cycle(graph: Any, handler: Any, n: int, history: list[Any]) -> None:
    cfg: dict[str, Any] = {"configurable": {"thread_id": f"bench-{n}"}}
    if handler is not None:
        cfg["callbacks"] = [handler]
    graph.invoke({"messages": [*history, HumanMessage("What is the weather in Paris?")]}, cfg)
    graph.invoke(Command(resume="yes, send it"), cfg)


def main() -> None:
    ap = argparse.ArgumentParser()
    # The graph's fake chat model holds 100 replies (50 cycles): each round gets a new graph.
    ap.add_argument("--cycles", type=int, default=45)
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()

    server = subprocess.Popen([sys.executable, "-c", SERVER, str(HERE.parent)], stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline())  # type: ignore[union-attr]
    up = Runwatch(api_key="f" * 64, base_url=f"http://127.0.0.1:{port}", max_queue_size=1_000_000)
    down = Runwatch(api_key="f" * 64, base_url="http://127.0.0.1:9", max_queue_size=10_000, max_retries=0)
    conditions: dict[str, tuple[Any, list[Any]]] = {
        "no handler": (None, []),
        "no-op handler": (NoopHandler(), []),
        "Runwatch, server down": (CallbackHandler(client=down), []),
        "Runwatch, server up": (CallbackHandler(client=up), []),
        "no-op handler, long conversation": (NoopHandler(), HISTORY),
        "Runwatch (down), long conversation": (CallbackHandler(client=down), HISTORY),
    }
    per_cycle: dict[str, list[float]] = {name: [] for name in conditions}
    n = 0
    for _name, (handler, history) in conditions.items():  # warm-up
        graph = build_graph(name="bench")
        for _ in range(20):
            n += 1
            cycle(graph, handler, n, history)
    for _ in range(args.rounds):
        for name, (handler, history) in conditions.items():
            graph = build_graph(name="bench")
            gc.collect()
            t0 = time.thread_time()
            for _ in range(min(args.cycles, 50)):
                n += 1
                cycle(graph, handler, n, history)
            per_cycle[name].append((time.thread_time() - t0) / min(args.cycles, 50) * 1000)
    up.flush(30)
    base = {
        "": statistics.median(per_cycle["no-op handler"]),
        "long": statistics.median(per_cycle["no-op handler, long conversation"]),
    }
    print(f"graph-thread CPU per cycle (invoke + resume), median of {args.rounds} rounds of {args.cycles}:")
    for name, values in per_cycle.items():
        ref = base["long"] if "long" in name else base[""]
        median = statistics.median(values)
        print(f"  {name:38s} {median:7.2f} ms  ({median / ref - 1:+.1%} vs the no-op handler)")
    up.shutdown()
    down.shutdown()
    server.kill()


if __name__ == "__main__":
    main()
