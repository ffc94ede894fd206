"""All the sessions of one TUI: creating them (same tree, own worktree, or N on one task), the model, closing."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from keel.tui import format as fmt
from keel.tui.agents import AgentHandle, NewAgentRequest, Notify
from keel.tui.first_settings import DeferredSettings, settled

if TYPE_CHECKING:
    from keel.agent.core.api import Worktree
    from keel.agent.core.config import KeelConfig
    from keel.agent.core.protocol import AnyEvent
    from keel.agent.core.settings import SessionSettings


class FanOutError(Exception):
    """Agents that each need their own worktree could not get them; nothing was started."""


@dataclass
class AgentGroup:
    """Agents started together on one task, each in its own worktree; the side-by-side view shows them."""

    name: str
    task: str
    handles: list[AgentHandle]

    @property
    def title(self) -> str:
        return f"{fmt.plural(len(self.handles), 'agent')} on: {self.task}"


def group_name(task: str) -> str:
    """A short name from the task's first words, for the agents' names and branches: `fix-the-failing-test`."""
    words = re.findall(r"[a-z0-9]+", task.lower())[:4]
    return "-".join(words)[:24].strip("-") or "fan"


class AgentPool:
    """Sessions in the order they were made; `model` is what /new and /model start new ones with."""

    def __init__(
        self,
        settings: SessionSettings | DeferredSettings,
        notify: Notify,
        config: KeelConfig | None = None,
    ) -> None:
        self._base = settings
        self._config = config
        self.model = settings.model
        self.notify = notify
        self.handles: list[AgentHandle] = []
        self.groups: list[AgentGroup] = []

    @property
    def base(self) -> SessionSettings:
        return settled(self._base)

    @property
    def cwd(self) -> Path:
        """The workspace, known before the settings are built (the first frame needs no pydantic)."""
        return self._base.cwd

    @property
    def config(self) -> KeelConfig | None:
        if isinstance(self._base, DeferredSettings):
            return self._base.config()
        return self._config

    def settle(self) -> None:
        """Build the settings deferred for the first paint (they are built on first use otherwise)."""
        for handle in self.handles:
            handle.settings  # noqa: B018 - the property builds them

    def settings_for(self, model: str, cwd: Path | None = None) -> SessionSettings:
        """A model's settings: from the config (its `[models."NAME"]` table applies) when there is one."""
        cwd = cwd or self.base.cwd
        if self.config is not None and model:
            from keel.agent.core.settings import settings_from_config

            return settings_from_config(
                self.config.model_copy(update={"model": model}),
                cwd,
                interactive=True,
                prepare=False,
            )
        return self.base.model_copy(update={"model": model, "cwd": cwd})

    def add(
        self,
        settings: SessionSettings | DeferredSettings,
        name: str = "",
        resume: Path | None = None,
        history: list[AnyEvent] | None = None,
    ) -> AgentHandle:
        handle = AgentHandle(len(self.handles) + 1, settings, self.notify, name, resume, history)
        self.handles.append(handle)
        return handle

    def reopen(self, log: Path, history: list[AnyEvent]) -> AgentHandle:
        """A past session as a new agent here: its transcript shown, its log continued by the next prompt,
        on the model it ran with, in its own workspace, under this UI's settings otherwise."""
        started = next((e for e in history if e.type == "session.started"), None)
        model = started.model if started is not None else self.model
        cwd = Path(started.cwd) if started is not None and Path(started.cwd).is_dir() else None
        return self.add(self.settings_for(model, cwd), resume=log, history=history)

    def embedded_unavailable(self, problem: str) -> None:
        """The embedded model cannot run here: agents not yet started on it wait for /model, and say why."""
        from keel.agent.core.api import is_embedded_model

        if is_embedded_model(self.model):
            self.model = ""
        for handle in self.handles:
            if is_embedded_model(handle.stats.model) and not handle.started:
                handle.set_model("", handle.settings.model_copy(update={"model": ""}))
                handle.note(
                    f"the embedded model cannot run here: {problem}; or choose a model now: /model NAME",
                    "error",
                )

    def group_of(self, handle: AgentHandle) -> AgentGroup | None:
        return next((group for group in self.groups if handle in group.handles), None)

    async def create(self, request: NewAgentRequest) -> AgentHandle:
        """A new agent; with `own_worktree`, in a fresh git worktree of the repository."""
        if not request.own_worktree:
            return self.add(self.settings_for(request.model or self.model), request.name)
        from keel.agent.core.api import create_worktree

        name = request.name or f"agent-{len(self.handles) + 1}"
        worktree = await create_worktree(self.base.cwd, name)
        return self._add_in_worktree(request, worktree, request.name)

    async def fan_out(self, request: NewAgentRequest) -> AgentGroup:
        """`request.copies` agents, each in its own new worktree on its own branch; all of them or none."""
        from keel.agent.core.api import create_worktree, remove_worktree, repo_top
        from keel.agent.core.errors import KeelError

        count = request.copies
        try:
            await asyncio.to_thread(repo_top, self.base.cwd)
        except KeelError as exc:
            raise FanOutError(
                f"{fmt.plural(count, 'agent')} need a git worktree each, and worktrees need a git repository: "
                f"{exc}. Nothing was started (git init and a first commit would do)."
            ) from None
        stem = request.name or group_name(request.task)
        made = await asyncio.gather(
            *(create_worktree(self.base.cwd, f"{stem}-{n}") for n in range(1, count + 1)),
            return_exceptions=True,
        )
        worktrees = [result for result in made if not isinstance(result, BaseException)]
        if len(worktrees) < count:
            await asyncio.gather(*map(remove_worktree, worktrees), return_exceptions=True)
            failure = next(result for result in made if isinstance(result, BaseException))
            if not isinstance(failure, Exception):  # cancelled: not the person's to fix
                raise failure
            raise FanOutError(f"could not create the worktrees ({failure}); nothing was started")
        handles = [
            self._add_in_worktree(request, worktree, worktree.name) for worktree in worktrees
        ]
        group = AgentGroup(stem, request.task, handles)
        self.groups.append(group)
        return group

    def _add_in_worktree(
        self, request: NewAgentRequest, worktree: Worktree, name: str
    ) -> AgentHandle:
        handle = self.add(self.settings_for(request.model or self.model, worktree.path), name)
        handle.branch = worktree.branch
        handle.note(f"own git worktree on branch {worktree.branch}; your checkout is untouched")
        return handle

    async def close_all(self) -> None:
        await asyncio.gather(*(handle.close() for handle in self.handles), return_exceptions=True)
