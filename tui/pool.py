"""All the sessions of one TUI: creating them (same tree or own worktree), the model for new ones, closing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from tui.agents import AgentHandle, NewAgentRequest, Notify

if TYPE_CHECKING:
    from agent.config import KeelConfig
    from agent.protocol import AnyEvent
    from agent.settings import SessionSettings


class AgentPool:
    """Sessions in the order they were made; `model` is what /new and /model start new ones with."""

    def __init__(
        self, settings: SessionSettings, notify: Notify, config: KeelConfig | None = None
    ) -> None:
        self.base = settings
        self.config = config
        self.model = settings.model
        self.notify = notify
        self.handles: list[AgentHandle] = []

    def settings_for(self, model: str, cwd: Path | None = None) -> SessionSettings:
        """A model's settings: from the config (its `[models."NAME"]` table applies) when there is one."""
        cwd = cwd or self.base.cwd
        if self.config is not None and model:
            from agent.settings import settings_from_config

            return settings_from_config(
                self.config.model_copy(update={"model": model}), cwd, interactive=True
            )
        return self.base.model_copy(update={"model": model, "cwd": cwd})

    def add(
        self,
        settings: SessionSettings,
        name: str = "",
        resume: Path | None = None,
        history: list[AnyEvent] | None = None,
    ) -> AgentHandle:
        handle = AgentHandle(len(self.handles) + 1, settings, self.notify, name, resume, history)
        self.handles.append(handle)
        return handle

    async def create(self, request: NewAgentRequest) -> AgentHandle:
        """A new agent; with `own_worktree`, in a fresh git worktree of the repository."""
        cwd = self.base.cwd
        if request.own_worktree:
            from agent.workspaces import create_worktree

            name = request.name or f"agent-{len(self.handles) + 1}"
            worktree = await create_worktree(self.base.cwd, name)
            cwd = worktree.path
        handle = self.add(self.settings_for(request.model or self.model, cwd), request.name)
        if request.own_worktree:
            handle.branch = worktree.branch
            handle.note(f"own git worktree on branch {worktree.branch}; your checkout is untouched")
        return handle

    async def close_all(self) -> None:
        await asyncio.gather(*(handle.close() for handle in self.handles), return_exceptions=True)
