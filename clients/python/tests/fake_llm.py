"""An LLM on loopback for the experiment tests: an HTTP server answering OpenAI Chat Completions
(`POST /v1/chat/completions`, not streamed) and a LangChain chat model that calls it over HTTP, so a LangGraph
graph's model calls cross the network as a provider's would and report real usage.

Script: the answer is the last user message, upper-cased when the system message says "style: shout"; a message
containing FAIL_MARKER is answered HTTP 500; every answer waits `delay` seconds first. A judge's request (structured
output named "verdict", as Runwatch's evaluators ask) is answered with a verdict: false (or the lowest score) when the
prompt contains JUDGE_FAIL_MARKER, else true (or the highest)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

FAIL_MARKER = "please-fail-500"
JUDGE_FAIL_MARKER = "WRONG"


def _verdict(schema: dict[str, Any], prompt: str) -> str:
    bad = JUDGE_FAIL_MARKER in prompt
    score_schema = schema.get("properties", {}).get("score", {})
    if "enum" in score_schema:
        score: Any = score_schema["enum"][-1 if bad else 0]
    elif score_schema.get("type") == "boolean":
        score = not bad
    else:
        score = 0 if bad else 1
    return json.dumps({"explanation": "The answer is wrong." if bad else "The answer is right.", "score": score})


@contextmanager
def fake_llm(delay: float = 0.0) -> Iterator[str]:
    """Serves the script above; yields the base URL clients take (ends in /v1)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            messages = body["messages"]
            user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
            shout = any(m["role"] == "system" and "style: shout" in m["content"] for m in messages)
            time.sleep(delay)
            if FAIL_MARKER in user:
                self._send(500, {"error": {"message": "the model is overloaded", "type": "server_error"}})
                return
            json_schema = (body.get("response_format") or {}).get("json_schema") or {}
            if json_schema.get("name") == "verdict":
                content = _verdict(json_schema.get("schema") or {}, user)
            else:
                content = user.upper() if shout else user
            self._send(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                    ],
                    "usage": {
                        "prompt_tokens": 20 + len(user),
                        "completion_tokens": 5 + len(content),
                        "total_tokens": 25 + len(user) + len(content),
                    },
                },
            )

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


class HttpChatModel(BaseChatModel):
    """A LangChain chat model calling a Chat Completions endpoint over HTTP (the fake above, or a compatible one)."""

    base_url: str
    model: str = "gpt-4o-mini"

    @property
    def _llm_type(self) -> str:
        return "http-chat-completions"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        roles = {"human": "user", "ai": "assistant", "system": "system"}
        body = {
            "model": self.model,
            "messages": [{"role": roles.get(m.type, "user"), "content": str(m.content)} for m in messages],
        }
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                answer = json.loads(resp.read())
        except urllib.error.HTTPError as err:
            raise RuntimeError(f"the LLM answered HTTP {err.code}: {err.read().decode()}") from None
        usage = answer["usage"]
        message = AIMessage(
            content=answer["choices"][0]["message"]["content"],
            usage_metadata={
                "input_tokens": usage["prompt_tokens"],
                "output_tokens": usage["completion_tokens"],
                "total_tokens": usage["total_tokens"],
            },
            response_metadata={"model_name": answer["model"]},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
