"""How fast run_experiment gets through a dataset when the LLM is slow.

    clients/python/.venv/bin/python clients/python/bench/experiment_throughput.py [--items 320] [--rounds 2]
        [--flush-interval 0.2]

A LangGraph graph whose model calls an LLM server on loopback that answers after 50 ms is the task, over a dataset
of ITEMS items at concurrency 16 and of 40 items at concurrency 1, alternately (ROUNDS rounds each), against
`runwatch start` on this machine. The figure is items per second from the call to the summary (every run stored,
every score stored); the yardstick is the bound the LLM's delay sets (concurrency / 50 ms), and the concurrency-1
round measured in the same run.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.conftest import running_server  # noqa: E402
from tests.fake_llm import HttpChatModel, fake_llm  # noqa: E402

from runwatch import Runwatch  # noqa: E402
from runwatch.langchain import CallbackHandler  # noqa: E402

DELAY_S = 0.05


class QA(TypedDict, total=False):
    question: str
    answer: str


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=320)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--flush-interval", type=float, default=0.2, help="the client's; 0.2 s is its default")
    args = parser.parse_args()
    small = min(args.items, 40)  # concurrency 1 is slow by design: fewer items

    with fake_llm(delay=DELAY_S) as llm_url, running_server(llm_url) as server:
        client = Runwatch(api_key=server.api_key, base_url=server.base_url, flush_interval=args.flush_interval)
        try:
            for name, n in (("throughput", args.items), ("throughput-small", small)):
                client.create_dataset(name)
                client.add_dataset_items(
                    name,
                    [
                        {"id": f"i{i}", "input": {"question": f"question {i}"}, "expected_output": f"QUESTION {i}"}
                        for i in range(n)
                    ],
                )
            model = HttpChatModel(base_url=llm_url)

            def respond(state: QA) -> QA:
                reply = model.invoke([SystemMessage("style: shout"), HumanMessage(state["question"])])
                return {"answer": str(reply.content)}

            graph = StateGraph(QA).add_node("respond", respond).add_edge(START, "respond")
            graph = graph.add_edge("respond", END).compile()

            def task(inp: Any) -> str:
                handler = CallbackHandler(client=client)
                return graph.invoke({"question": inp["question"]}, config={"callbacks": [handler]})["answer"]

            def correct(*, output: Any, expected_output: Any, **_: Any) -> int:
                return 1 if output == expected_output else 0

            rates: dict[int, list[float]] = {1: [], 16: []}
            for round_ in range(args.rounds):
                for concurrency in (1, 16):
                    items = small if concurrency == 1 else args.items
                    t0 = time.perf_counter()
                    summary = client.run_experiment(
                        dataset="throughput-small" if concurrency == 1 else "throughput",
                        name=f"c{concurrency} r{round_}",
                        task=task,
                        evaluators=[correct],
                        max_concurrency=concurrency,
                    )
                    seconds = time.perf_counter() - t0
                    if (
                        summary.error_count
                        or summary.completed_count != items
                        or summary.scores["correct"]["mean"] != 1
                    ):
                        raise RuntimeError(f"unexpected summary: {summary}")
                    rates[concurrency].append(items / seconds)
                    print(
                        f"round {round_ + 1}, concurrency {concurrency:2d}: {items} LLM items in {seconds:.2f} s"
                        f" -> {items / seconds:.1f} items/s (bound {concurrency / DELAY_S:.0f})",
                        flush=True,
                    )
            one, sixteen = statistics.median(rates[1]), statistics.median(rates[16])
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"median: concurrency 1 {one:.1f} items/s, 16 {sixteen:.1f} items/s: {sixteen / one:.1f}x"
                f" (the delay's bound is 16x); peak RSS of the client process {rss:.0f} MiB"
            )
        finally:
            client.shutdown(timeout=5)


if __name__ == "__main__":
    main()
