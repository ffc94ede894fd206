"""The conversation as keel keeps it, and its translation into the chat format a provider receives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from keel.agent.core.protocol import ToolCall
from keel.prompts import render

Role = Literal["system", "user", "assistant", "tool"]


class ImagePart(BaseModel):
    """An image in a user message, as litellm's OpenAI-style content part carries it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    media_type: str
    data: str = Field(repr=False)  # base64

    def wire(self) -> dict[str, Any]:
        url = f"data:{self.media_type};base64,{self.data}"
        return {"type": "image_url", "image_url": {"url": url}}


class Message(BaseModel):
    """One message of the history; `tool_calls` on assistant messages, `tool_call_id` on tool results."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = []
    tool_call_id: str | None = None
    name: str | None = None
    # on user messages: the person's images, or those read_file read
    images: tuple[ImagePart, ...] = ()
    token_count: int | None = Field(default=None, exclude=True)
    # a plain (excluded) field, not a private attribute: it is read for every message of every request
    native_wire: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)

    def with_content(self, text: str) -> Message:
        """A copy with another text (masking makes one), without what was derived from the old text."""
        return self.model_copy(update={"content": text, "token_count": None, "native_wire": None})


def system(text: str) -> Message:
    return Message(role="system", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def tool_result(call: ToolCall, output: str) -> Message:
    return Message(role="tool", content=output, tool_call_id=call.id, name=call.name)


def content_of(message: Message, images: bool = True) -> str | list[dict[str, Any]]:
    """The message's content: its text, or content parts when it carries images (a note instead of them for
    a model that takes none: a session resumed with another model)."""
    if not message.images:
        return message.content
    if not images:
        note = render("images_not_sent", count=len(message.images))
        return f"{message.content}\n\n{note}" if message.content else note
    text = [{"type": "text", "text": message.content}] if message.content else []
    return [*text, *(image.wire() for image in message.images)]


def _joined(first: str | list[dict[str, Any]], second: str | list[dict[str, Any]]) -> Any:
    """Two user messages' contents as one (text protocol); parts when either has images."""
    if isinstance(first, str) and isinstance(second, str):
        return first + "\n\n" + second

    def parts(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"type": "text", "text": content}] if isinstance(content, str) else content

    return [*parts(first), *parts(second)]


def _native(message: Message, images: bool) -> dict[str, Any]:
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in message.tool_calls
            ],
        }
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    return {"role": message.role, "content": content_of(message, images)}


def _cached_native(message: Message, images: bool) -> dict[str, Any]:
    """Each message is converted once; the same dict is returned every time, so nobody may change it (a
    session's `images` never changes)."""
    wire = message.native_wire
    if wire is None:
        wire = message.native_wire = _native(message, images)
    return wire


def _text_result(message: Message) -> str:
    return f'<tool_result name="{message.name}">\n{message.content}\n</tool_result>'


def to_wire(
    messages: Sequence[Message], protocol: Literal["native", "text"], images: bool = True
) -> list[dict[str, Any]]:
    """The messages in OpenAI chat format (read-only: native ones are cached on the messages); in the
    text protocol tool results travel as user messages. `images`: whether the model takes images."""
    if protocol == "native":
        return [_cached_native(m, images) for m in messages]
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "user" if message.role == "tool" else message.role
        content = _text_result(message) if message.role == "tool" else content_of(message, images)
        if wire and role == "user" and wire[-1]["role"] == "user":
            # providers want user/assistant to alternate
            wire[-1]["content"] = _joined(wire[-1]["content"], content)
        else:
            wire.append({"role": role, "content": content})
    return wire
