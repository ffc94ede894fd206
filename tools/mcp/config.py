"""One `[mcp_servers.NAME]` table, in the shape Codex uses; pydantic only, so the config loads it cheaply."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class McpServerConfig(BaseModel):
    """A stdio server (`command`, `args`, `env`, `cwd`) or a streamable HTTP one (`url`)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: Path | None = Field(None, description="the server's directory (default: the workspace)")
    url: str | None = None
    bearer_token_env_var: str | None = Field(
        None, description="an environment variable holding a bearer token for the url"
    )
    http_headers: dict[str, str] = {}
    enabled: bool = True
    read_only: bool = Field(
        False, description="its tools only read: approved as read tools, not as commands"
    )
    startup_timeout_sec: float = Field(10.0, gt=0)
    tool_timeout_sec: float = Field(60.0, gt=0)
    enabled_tools: list[str] | None = Field(None, description="offer only these tools")
    disabled_tools: list[str] = []

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                "give either command (a server keel starts, over stdio) or url (a streamable HTTP "
                "server), not both or neither"
            )
        if self.url is None and (self.bearer_token_env_var or self.http_headers):
            raise ValueError("bearer_token_env_var and http_headers are for url servers")
        if self.command is not None and not self.command.strip():
            raise ValueError("command is empty; name the program that starts the server")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r} is not an http:// or https:// address")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def offers(self, tool: str) -> bool:
        """Whether the tool of that (server's own) name is offered, by enabled_tools and disabled_tools."""
        allowed = self.enabled_tools is None or tool in self.enabled_tools
        return allowed and tool not in self.disabled_tools


def check_server_names(names: list[str]) -> None:
    """Names become part of tool names (`mcp__NAME__tool`): letters, digits, `_` and `-` only."""
    for name in names:
        if not SERVER_NAME.match(name):
            raise ValueError(
                f"server name {name!r} must be 1-40 letters, digits, '_' or '-' (it becomes part "
                "of its tools' names, mcp__NAME__tool)"
            )
