"""keel as an ACP agent: the protocol's methods, each onto keel's Session and its ops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
)

from keel import __version__
from keel.agent.acp.live import ContentBlock, LiveSession, prompt_text
from keel.agent.acp.updates import prompt_usage, stop_reason
from keel.agent.core.api.sessions import find_session, read_events
from keel.agent.core.errors import KeelError
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings

SettingsFor = Callable[[Path], SessionSettings]  # the settings `keel run` would use in a directory
log = logging.getLogger(__name__)


def _failure(message: str) -> RequestError:
    """An error the editor shows as it is: what went wrong and what to do."""
    return RequestError(-32603, message)


class KeelAgent:
    """The ACP agent: one keel Session per ACP session, driven by ops, shown by its events."""

    def __init__(self, settings_for: SettingsFor) -> None:
        self.settings_for = settings_for
        self.sessions: dict[str, LiveSession] = {}
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None, "the connection calls on_connect first"
        return self._client

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
            ),
            agent_info=Implementation(name="keel", title="keel", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """keel offers no auth methods: API keys come from the environment, as for `keel run`."""

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        live = await self._open(cwd, mcp_servers, resume=None)
        live.start()
        return NewSessionResponse(session_id=live.id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Resume a keel session: its history is sent as updates, then it takes prompts again."""
        if session_id in self.sessions:
            await self.sessions.pop(session_id).close()
        path = find_session(session_id)
        if path is None or path.stem != session_id:
            raise _failure(f"no keel session {session_id!r}; `keel sessions` lists them")
        live = await self._open(cwd, mcp_servers, resume=path)
        await live.replay(read_events(path))
        live.start()
        return LoadSessionResponse()

    async def prompt(
        self, session_id: str, prompt: list[ContentBlock], **kwargs: Any
    ) -> PromptResponse:
        live = self._live(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"details": "the prompt is empty; say what to do"})
        finished = await live.prompt(text)
        reason = stop_reason(finished.status)
        if reason is None:
            raise _failure(f"keel stopped with an error: {finished.reason}")
        return PromptResponse(stop_reason=reason, usage=prompt_usage(finished.task_usage))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.cancel()

    async def close(self) -> None:
        """End every session (its running turn, its child processes) and close its log."""
        sessions, self.sessions = list(self.sessions.values()), {}
        for live in sessions:
            await live.close()

    def _live(self, session_id: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise _failure(f"no open keel session {session_id!r}; start one with session/new")
        return live

    async def _open(
        self, cwd: str, mcp_servers: list[Any] | None, resume: Path | None
    ) -> LiveSession:
        root = Path(cwd).expanduser()
        if not root.is_absolute() or not root.is_dir():
            raise RequestError.invalid_params(
                {"details": f"cwd {cwd!r} is not an absolute directory"}
            )
        if mcp_servers:
            log.warning(
                "keel acp: the client's %d MCP server(s) are ignored; configure them in "
                ".keel/config.toml instead",
                len(mcp_servers),
            )
        try:
            settings = await asyncio.to_thread(self.settings_for, root.resolve())
            session = Session(settings, resume=resume)
        except KeelError as exc:
            raise _failure(str(exc)) from None
        live = LiveSession(session, self.client)
        self.sessions[live.id] = live
        return live
