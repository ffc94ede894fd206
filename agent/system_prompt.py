"""The system prompt: rendered once per tool protocol from prompts/, so the request prefix never changes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from keel.agent.model.client import ToolProtocolName
from keel.agent.workspace_facts import Instructions, WorkspaceFacts
from keel.prompts import render
from keel.tools.registry import ToolRegistry


@dataclass
class SystemPrompt:
    """Renders and caches the system prompt for each protocol the session uses."""

    facts: WorkspaceFacts
    instructions: Instructions | None
    registry: ToolRegistry
    compact: bool = False
    _rendered: dict[str, str] = field(default_factory=dict)

    def text(self, protocol: ToolProtocolName) -> str:
        if protocol not in self._rendered:
            self._rendered[protocol] = render(
                "system_compact" if self.compact else "system",
                workspace=self.facts,
                instructions=self.instructions,
                tool_protocol=protocol,
                text_tools=self._text_tools() if protocol == "text" else "",
            )
        return self._rendered[protocol]

    def _text_tools(self) -> str:
        tools = [
            {
                "name": schema["function"]["name"],
                "description": schema["function"]["description"],
                "parameters": json.dumps(schema["function"]["parameters"], separators=(",", ":")),
            }
            for schema in self.registry.schemas()
        ]
        return render("text_tools", tools=tools)
