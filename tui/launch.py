"""The `keel.frontends` entry point: the TUI from launch to exit, light to import (no Textual, no pydantic).

The session to reopen is found first (a wrong id is a usage error, exit 2), then the UI runs in
a child process while this one guards the terminal (keel.tui.terminal_guard); with nothing to check in
the config, the first session's settings are built after the first paint (keel.tui.first_settings).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keel.agent.core.config_files import ConfigSources
    from keel.agent.core.protocol import AnyEvent
    from keel.tui.app import KeelApp


def main(sources: ConfigSources, cwd: Path, resume_id: str | None = None) -> int:
    """Run the TUI in cwd; with resume_id, reopen that session (its transcript shown, its log continued)."""
    history: list[AnyEvent] = []
    resume = None
    if resume_id is not None:
        from keel.agent.core.api import find_session, read_session
        from keel.agent.core.errors import ExitCode

        resume = find_session(resume_id, cwd)
        if resume is None:
            print(
                f"keel: no single session matches {resume_id!r}; `keel sessions` lists them",
                file=sys.stderr,
            )
            return ExitCode.USAGE
        history = read_session(resume)
    from keel.tui.terminal_guard import run_guarded

    def run() -> int:
        return run_app(build_app(settle_trust(sources, ask_trust), cwd, resume, history))

    return run_guarded(run)


def ask_trust(root: Path, keys: list[str]) -> bool:
    """The person's answer to the trust modal (keel.tui.screens.trust_modal), shown on its own."""
    from keel.tui.screens.trust_modal import TrustApp

    return bool(TrustApp(root, keys).run())


def settle_trust(sources: ConfigSources, ask: Callable[[Path, list[str]], bool]) -> ConfigSources:
    """Ask once about a repository config that would widen permissions; record the answer (trust, or
    not to ask again) in the user's config. Sources trusted when the person said yes."""
    keys = sources.untrusted_keys()
    root = sources.trust_root
    if not keys or root is None:
        return sources
    from keel.agent.core.api import record_trust, trust_was_declined

    if trust_was_declined(root):
        return sources
    trusted = ask(root, keys)
    record_trust(root, trusted)
    return sources.with_trust() if trusted else sources


def build_app(
    sources: ConfigSources,
    cwd: Path,
    resume: Path | None = None,
    history: list[AnyEvent] | None = None,
) -> KeelApp:
    """The app as `keel` starts it: settings deferred past the first paint when the config allows.

    The garbage collector waits for the first frame too (KeelApp turns it back on): its passes
    over what Textual's import and the first layout allocate cost some 12 ms before it.
    """
    gc.disable()
    from keel.tui.app import KeelApp, initial_settings
    from keel.tui.first_settings import DeferredSettings

    if sources.plain and not history:
        return KeelApp(DeferredSettings(sources, cwd))
    config = sources.config()
    return KeelApp(initial_settings(config, cwd, history or []), config, resume, history)


def run_app(app: KeelApp) -> int:
    """Run it; a stop by signal is said on the restored terminal, and so are --debug's tracebacks."""
    from keel.agent.core.api import tracebacks_held

    with tracebacks_held():
        app.run()
    if app.stopped_by is not None:
        from keel.tui.terminal_guard import report, stop_reason

        report(stop_reason(app.stopped_by))
    return app.return_code or 0
