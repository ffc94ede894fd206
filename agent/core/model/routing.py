"""The session id every model call of a session carries, so that a router keeps a session on one server.

A rollout's calls share a growing prompt; a router that sends them all to the server already holding that
prefix in its KV cache saves recomputing it. Every call of a session sends the session's id as the
`X-Session-ID` header (SESSION_HEADER): vLLM production-stack's session router (`--routing-logic session
--session-key X-Session-ID`) and gateways hashing a header read it there. With `record_tokens` (a trainer's
vLLM-shaped server, already asked for vLLM's own parameters) the body carries it too, as `session_id`
(SESSION_BODY_KEY), for routers that hash a body field; without it the body stays what any OpenAI-compatible
server accepts (OpenAI itself refuses unknown fields). Sampling parameters are not touched. The embedded
model has no router: it gets neither.
"""

from __future__ import annotations

from typing import Any

SESSION_HEADER = "X-Session-ID"
SESSION_BODY_KEY = "session_id"


def session_headers(session_id: str) -> dict[str, str]:
    """The headers that name the session (none without an id)."""
    return {SESSION_HEADER: session_id} if session_id else {}


def session_body(session_id: str, record_tokens: bool) -> dict[str, Any]:
    """The body fields that name the session: with `record_tokens` only (see the module's docstring)."""
    return {SESSION_BODY_KEY: session_id} if session_id and record_tokens else {}
