"""How an attached image enters the history: on the user message it belongs to, or as the note said instead."""

from __future__ import annotations

from keel.agent.core.messages import ImagePart, Message
from keel.agent.core.protocol import ImageAttached
from keel.prompts import render


def with_image(history: tuple[Message, ...], event: ImageAttached) -> tuple[Message, ...]:
    """The history with the image (or its note) on the last user message: the prompt it came with, or the
    message after a step's tool results that carries what read_file read (a new one when there is none)."""
    text = render("image_attached", event=event)
    images = (ImagePart(media_type=event.media_type, data=event.data),) if event.data else ()
    last = history[-1] if history else None
    if last is None or last.role != "user" or (event.origin == "tool" and not last.images):
        return (*history, Message(role="user", content=text, images=images))
    content = f"{last.content}\n\n{text}" if text and last.content else last.content or text
    merged = last.model_copy(
        update={
            "content": content,
            "images": (*last.images, *images),
            "token_count": None,
            "native_wire": None,
        }
    )
    return (*history[:-1], merged)
