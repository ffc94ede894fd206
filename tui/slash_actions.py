"""What the main screen's slash commands do beyond a line: /sessions, /model and /undo."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from keel.tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from keel.tui.agents import AgentHandle
    from keel.tui.screens.main_screen import MainScreen


async def past_sessions(screen: MainScreen, handle: AgentHandle, argument: str) -> None:
    """`/sessions`: the session list, and this directory's past sessions listed; `/sessions N|ID` reopens one."""
    from keel.tui.past_sessions import find_past, listing, reopen

    screen.sessions.display = True
    if argument:
        reopened, new = await reopen(screen.pool, argument, screen.past)
        if new:
            await screen.sessions.add_handle(reopened)
        await screen.select(reopened)
        screen.query_one(PromptInput).focus()
        return
    cwd, open_here = screen.pool.base.cwd, {h.stats.session_id for h in screen.pool.handles}
    screen.past = await asyncio.to_thread(find_past, cwd, open_here)
    handle.note(listing(screen.past, cwd))
    screen.sessions.focus()


def set_model(screen: MainScreen, handle: AgentHandle, model: str) -> None:
    """`/model`: the models in use; `/model NAME` picks the model of new agents (and of one not started)."""
    if not model:
        handle.note(
            f"this session: {handle.stats.model or 'no model'}; new agents: {screen.pool.model or 'none'}"
        )
        return
    from keel.agent.core.api import embedded_model_name, is_embedded_model
    from keel.agent.core.errors import KeelError

    try:
        model = embedded_model_name(model) if is_embedded_model(model) else model
    except KeelError as exc:
        handle.note(str(exc), "error")
        return
    screen.pool.model = model
    if not handle.started:
        handle.set_model(model, screen.pool.settings_for(model, handle.settings.cwd))
        handle.note(f"this session will use {model}")
    else:
        handle.note(f"new agents (/new) will use {model}; this session keeps {handle.stats.model}")
    if handle is screen.selected:
        screen.status.show_stats(handle.name, handle.stats)


async def undo(handle: AgentHandle, checkpoint: str) -> None:
    """`/undo [ID]`: the last turn's changes (or a checkpoint's) undone, by the session when it runs."""
    if handle.busy:
        handle.note(
            "the agent is working: wait for the turn to end (or Esc), then /undo", "warning"
        )
        return
    if handle.started:  # the session undoes it itself, so that its model is told (undo.applied)
        handle.undo(checkpoint)
        return
    from keel.agent.core.errors import KeelError
    from keel.tui.undo import undo_last_turn

    try:
        handle.note(await asyncio.to_thread(undo_last_turn, handle.settings.cwd, checkpoint))
    except KeelError as exc:
        handle.note(f"undo failed: {exc}", "error")
