"""What `import keel` offers programs: settings resolved as `keel run` resolves them, and one task run to its end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from keel.agent.config import resolve_config
from keel.agent.protocol import AnyEvent, Continue, SessionFinished, UserPrompt
from keel.agent.session import Session
from keel.agent.settings import SessionSettings, settings_from_config


def session_settings(cwd: Path | str = ".", **flags: Any) -> SessionSettings:
    """The settings `keel run` would use in cwd: flags (model, api_base, budget, ...) over the environment over
    the config files, then the embedded model when nothing names one."""
    root = Path(cwd).resolve()
    return settings_from_config(resolve_config(root, flags), root, interactive=False)


async def run_task(
    prompt: str | None,
    settings: SessionSettings,
    on_event: Callable[[AnyEvent], None] | None = None,
    resume: Path | None = None,
) -> SessionFinished:
    """Run one task (or, with prompt None, continue the resumed one) and return how it finished; every event
    goes to on_event as it happens."""
    async with Session(settings, resume=resume) as session:
        session.submit(UserPrompt(text=prompt) if prompt else Continue())
        async for event in session.events():
            if on_event is not None:
                on_event(event)
            if isinstance(event, SessionFinished):
                return event
    raise RuntimeError("the session ended without session.finished")  # the loop always sends one
