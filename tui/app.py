"""The Textual app: owns the sessions and the core warm-up; keel.tui.launch starts it as `keel` does."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType

from keel.agent.core.errors import ExitCode
from keel.tui.agents import AgentChanged, AgentHandle
from keel.tui.pool import AgentPool
from keel.tui.terminal_guard import exit_if_stuck, stop_on_signals
from keel.tui.transcript import Change
from keel.tui.warmup import freeze_loaded_objects

if TYPE_CHECKING:
    from keel.agent.core.config import KeelConfig
    from keel.agent.core.config_files import ConfigSources
    from keel.agent.core.protocol import AnyEvent
    from keel.agent.core.settings import SessionSettings
    from keel.tui.first_settings import DeferredSettings
    from keel.tui.screens.main_screen import MainScreen

_HERE = Path(__file__).parent


class KeelApp(App[int]):
    TITLE = "keel"
    CSS_PATH = sorted(str(path) for path in _HERE.glob("*/*.tcss"))
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+z", "suspend_process", "Suspend", show=False)
    ]

    def __init__(
        self,
        settings: SessionSettings | DeferredSettings,
        config: KeelConfig | None = None,
        resume: Path | None = None,
        history: list[AnyEvent] | None = None,
    ) -> None:
        # Textual and the config stay loaded: a full collection before the first paint costs ~25 ms
        freeze_loaded_objects("startup")
        super().__init__()
        self.pool = AgentPool(settings, self._relay, config)
        self.pool.add(settings, resume=resume, history=history)
        self._warmed: asyncio.Event | None = None
        self._main: MainScreen | None = None
        self.stopped_by: int | None = None  # the signal that closed the app
        self._unhook_signals: Callable[[], None] = lambda: None
        # keys typed before anything has the focus (at launch): kept for the prompt box, then None
        self._early_keys: list[events.Key] | None = []

    def get_default_screen(self) -> MainScreen:
        """The main screen is the first on the stack: no blank default screen to set up and cover."""
        from keel.tui.screens.main_screen import MainScreen

        self._main = MainScreen(self.pool)
        return self._main

    def on_mount(self) -> None:
        self._unhook_signals = stop_on_signals(self._stop_by_signal)

    async def on_event(self, event: events.Event) -> None:
        """Keys typed while the UI starts wait until the prompt box has the focus, instead of going to
        a screen that drops them (a person types at `keel` as soon as they have pressed Enter on it)."""
        if (
            isinstance(event, events.Key)
            and self._early_keys is not None
            and not event.is_forwarded
        ):
            if self.focused is None:
                self._early_keys.append(event)
                return
            await self._replay_early_keys()
        await super().on_event(event)

    async def on_ready(self) -> None:
        """The first screen is up: the keys typed before it go to what has the focus (the prompt box)."""
        if self._early_keys is not None and self.focused is None and self._main is not None:
            from keel.tui.widgets.prompt_input import PromptInput

            self._main.set_focus(self._main.query_one(PromptInput))
        await self._replay_early_keys()

    async def _replay_early_keys(self) -> None:
        keys, self._early_keys = self._early_keys or [], None
        for key in keys:
            await super().on_event(typed_before_raw_mode(key))

    def on_main_screen_painted(self) -> None:
        """The warm-up starts after the first frame, so its imports do not compete with it; so does
        the garbage collector when the launch held it back (keel.tui.launch), past what startup made."""
        if not gc.isenabled():
            freeze_loaded_objects("first frame")
            gc.enable()
        self._start_warm_up()

    def _stop_by_signal(self, signum: int) -> None:
        """SIGTERM, SIGHUP or SIGINT: close the sessions and the app as on quit, exit with 128+N."""
        if self.stopped_by is None:
            self.stopped_by = signum
            code = ExitCode.of_signal(signum)
            exit_if_stuck(code)
            self.exit(return_code=code)

    def _start_warm_up(self) -> None:
        """A daemon thread, not a worker: quitting right after launch must not wait for litellm's import.

        Settings deferred past the first paint are built first, here on the UI's thread.
        """
        if self._warmed is not None:
            return
        self.pool.settle()
        loop, warmed = asyncio.get_running_loop(), asyncio.Event()
        self._warmed = warmed
        first = self.pool.handles[0]

        def on_loop(callback: Callable[..., object], *args: object) -> None:
            with suppress(RuntimeError):  # the app already closed its loop
                loop.call_soon_threadsafe(callback, *args)

        def warm_up() -> None:
            from keel.agent.core.api import prepare_model
            from keel.tui.warmup import warm_up_core

            try:
                warm_up_core()
            except Exception:  # noqa: BLE001, S110 - creating the Session imports them again and shows why
                pass
            problem = prepare_model(first.settings, lambda event: on_loop(first.show, event))
            if problem:
                on_loop(self.pool.embedded_unavailable, problem)
            on_loop(warmed.set)

        threading.Thread(target=warm_up, name="keel-warm-up", daemon=True).start()

    async def core_ready(self) -> None:
        self._start_warm_up()
        assert self._warmed is not None
        await self._warmed.wait()

    def start(self, handle: AgentHandle) -> None:
        """Create the handle's Session (once) and relay its events, as a worker the app cancels at exit."""
        if handle.started:
            return
        handle.starting = True
        self.run_worker(
            handle.run(self.core_ready), name=handle.name, group="agents", exit_on_error=False
        )

    def _relay(self, handle: AgentHandle, changes: list[Change]) -> None:
        if self._main is not None and changes:
            self._main.post_message(AgentChanged(handle, changes))

    async def on_unmount(self) -> None:
        self._unhook_signals()
        await self.pool.close_all()
        from keel.agent.core.api import stop_model_workers

        stop_model_workers()  # a model worker this UI started ends with it


def typed_before_raw_mode(key: events.Key) -> events.Key:
    """Enter typed while the terminal was still in line mode arrives as a newline (Ctrl+J): it was Enter."""
    if key.key == "ctrl+j":
        return events.Key("enter", "\r")
    return key


def initial_settings(config: KeelConfig, cwd: Path, history: list[AnyEvent]) -> SessionSettings:
    """Settings for the first session: the configured (or resumed) model, else the embedded one, which is
    described here and made ready after the first paint (where a missing install shows in the transcript)."""
    from keel.agent.core.settings import settings_from_config

    model = config.model or next((e.model for e in history if e.type == "session.started"), None)
    if model:
        config = config.model_copy(update={"model": model})
    return settings_from_config(config, cwd, interactive=True, prepare=False)


def main(sources: ConfigSources, cwd: Path, resume_id: str | None = None) -> int:
    """The entry point's old home (`keel.tui.app:main`), for an install made before it moved to keel.tui.launch."""
    from keel.tui.launch import main as launch

    return launch(sources, cwd, resume_id)
