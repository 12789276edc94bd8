"""Finding a session's run that waits for input (GET /api/runs?session_id&status=waiting_for_input): how a LangGraph
handler in another process — one that did not see the interrupt — knows which run a resume continues."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from ._http import HttpClient, TransportError
from .errors import RunwatchError

if TYPE_CHECKING:
    from .client import Runwatch


def find_waiting_run(client: Runwatch, session_id: str, timeout: float = 5.0) -> str | None:
    """The sdk_run_id of the session's newest run waiting for input; None when it has none (or the server has not
    stored the interrupt yet). Raises RunwatchError when the server refuses or cannot be reached."""
    if not client.api_key:
        raise RunwatchError("no API key configured")
    http = HttpClient(client.base_url, client.api_key, timeout)
    path = f"/api/runs?session_id={quote(session_id, safe='')}&status=waiting_for_input&limit=1"
    try:
        resp = http.request("GET", path)
    except TransportError as e:
        raise RunwatchError(f"GET {path}: {e}") from e
    finally:
        http.close()
    if resp.status != 200:
        raise RunwatchError(f"GET {path} answered HTTP {resp.status}: {resp.body[:300].decode('utf-8', 'replace')}")
    runs = (resp.json() or {}).get("runs") or []
    found = runs[0].get("sdk_run_id") if runs else None
    return found if isinstance(found, str) else None
