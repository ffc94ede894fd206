"""The first session's settings, built after the first paint when nothing needs checking before it.

Building them loads pydantic and the config's models, some 50-70 ms; the first frame shows only
the workspace and the model's name, which are known without that.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keel.agent.core.config import KeelConfig
    from keel.agent.core.config_files import ConfigSources
    from keel.agent.core.settings import SessionSettings


class DeferredSettings:
    """Stands in for SessionSettings until they are built (`build()`, once): cwd, model, budget."""

    budget = None  # a budget comes from a flag or a file, and either means no deferring

    def __init__(self, sources: ConfigSources, cwd: Path) -> None:
        from keel.agent.core.api import embedded_model_name, is_embedded_model

        named = sources.model()
        self.sources = sources
        self.cwd = cwd
        self.model = named if named and not is_embedded_model(named) else embedded_model_name(named)
        self._built: SessionSettings | None = None

    def config(self) -> KeelConfig:
        return self.sources.config()

    def build(self) -> SessionSettings:
        if self._built is None:
            from keel.tui.app import initial_settings

            self._built = initial_settings(self.config(), self.cwd, [])
        return self._built


def settled(settings: SessionSettings | DeferredSettings) -> SessionSettings:
    return settings.build() if isinstance(settings, DeferredSettings) else settings
