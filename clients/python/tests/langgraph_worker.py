"""Another process for tests/test_langgraph_sessions.py: opens the same SQLite checkpoint, waits for the dashboard's
answer to the thread's interrupt with a fresh handler and client (from RUNWATCH_API_KEY / RUNWATCH_BASE_URL), resumes
the graph with it, then runs the thread's next turn.

    python -m tests.langgraph_worker <checkpoint.sqlite> <thread_id>
"""

from __future__ import annotations

import sqlite3
import sys

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

import runwatch
from runwatch.langchain import CallbackHandler
from runwatch.langgraph import resume_from_dashboard

from .graphs import build_graph


def main(db_path: str, thread_id: str) -> None:
    conn = sqlite3.connect(db_path, check_same_thread=False)
    graph = build_graph(name="py-session-agent", checkpointer=SqliteSaver(conn))
    config = {"configurable": {"thread_id": thread_id}, "callbacks": [CallbackHandler()]}
    out = resume_from_dashboard(graph, config, timeout=60, poll_wait=5)
    print("resumed:", out["messages"][-1].content, flush=True)
    out = graph.invoke({"messages": [HumanMessage("And tomorrow?")]}, config)  # the next turn: a run of its own
    print("next turn interrupted:", "__interrupt__" in out, flush=True)
    assert runwatch.get_client().shutdown(timeout=10)
    conn.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
