"""The Textual app: owns the sessions and the core warm-up; `main` is the `keel` launch contract."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App
from textual.worker import Worker, WorkerFailed

from tui.agents import AgentChanged, AgentHandle
from tui.pool import AgentPool
from tui.transcript import Change

if TYPE_CHECKING:
    from agent.config import KeelConfig
    from agent.protocol import AnyEvent
    from agent.settings import SessionSettings
    from tui.screens.main_screen import MainScreen

_HERE = Path(__file__).parent


class KeelApp(App[int]):
    TITLE = "keel"
    CSS_PATH = sorted(str(path) for path in _HERE.glob("*/*.tcss"))

    def __init__(
        self,
        settings: SessionSettings,
        config: KeelConfig | None = None,
        resume: Path | None = None,
        history: list[AnyEvent] | None = None,
    ) -> None:
        super().__init__()
        self.pool = AgentPool(settings, self._relay, config)
        self.pool.add(settings, resume=resume, history=history)
        self._warm_up: Worker[None] | None = None
        self._main: MainScreen | None = None

    def on_mount(self) -> None:
        from tui.screens.main_screen import MainScreen

        self._main = MainScreen(self.pool)
        self.push_screen(self._main)
        self.call_after_refresh(self._start_warm_up)

    def _start_warm_up(self) -> None:
        from tui.warmup import warm_up_core

        self._warm_up = self.run_worker(warm_up_core, thread=True, name="warm-up", exit_on_error=False)

    async def core_ready(self) -> None:
        """Wait for the warm-up; if it failed, creating the Session repeats the error where it shows."""
        if self._warm_up is None:
            self._start_warm_up()
        assert self._warm_up is not None
        try:
            await self._warm_up.wait()
        except WorkerFailed:
            pass

    def start(self, handle: AgentHandle) -> None:
        """Create the handle's Session (once) and relay its events, as a worker the app cancels at exit."""
        if handle.started:
            return
        handle.starting = True
        self.run_worker(handle.run(self.core_ready), name=handle.name, group="agents", exit_on_error=False)

    def _relay(self, handle: AgentHandle, changes: list[Change]) -> None:
        if self._main is not None and changes:
            self._main.post_message(AgentChanged(handle, changes))

    async def on_unmount(self) -> None:
        await self.pool.close_all()


def initial_settings(config: KeelConfig, cwd: Path, history: list[AnyEvent]) -> SessionSettings:
    """Settings for the first session; with no model configured the TUI still opens and /model sets one."""
    from agent.settings import settings_from_config

    model = config.model or next((e.model for e in history if e.type == "session.started"), None)
    if model:
        return settings_from_config(config.model_copy(update={"model": model}), cwd, interactive=True)
    placeholder = settings_from_config(config.model_copy(update={"model": "unset"}), cwd, interactive=True)
    return placeholder.model_copy(update={"model": ""})


def main(config: KeelConfig, cwd: Path, resume_id: str | None = None) -> int:
    """Run the TUI in cwd; with resume_id, reopen that session (its transcript shown, its log continued)."""
    history: list[AnyEvent] = []
    resume = None
    if resume_id is not None:
        from agent.store import find_session, read_events

        resume = find_session(resume_id, cwd)
        if resume is None:
            print(f"keel: no single session matches {resume_id!r}; `keel sessions` lists them", file=sys.stderr)
            return 2
        history = read_events(resume)
    app = KeelApp(initial_settings(config, cwd, history), config, resume, history)
    app.run()
    return app.return_code or 0
