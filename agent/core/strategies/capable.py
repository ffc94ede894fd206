"""The strategy for capable models: the full prompt and every tool, replies read as they come, repeated calls
run again (the loop guard still stops a circle), and a task ends when the model answers."""

from __future__ import annotations

from typing import Any

from keel.agent.core.strategies.base import Strategy
from keel.agent.core.system_prompt import PromptStyle
from keel.tools import default_tools
from keel.tools.base import Tool


class Capable(Strategy):
    """What keel does for a model that needs no special help."""

    name = "full"
    prompt_style = PromptStyle()
    nudges_by_default = False
    verifies_by_default = False

    def tools(self) -> list[Tool[Any]]:
        return default_tools()
