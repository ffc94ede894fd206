"""The events that give a prompt's images to the model: each file read, capped and encoded, or a note on why
it was not sent (the model does not take images, the file is missing or too large)."""

from __future__ import annotations

from pathlib import Path

from keel.agent.core.protocol import ImageAttached
from keel.tools.images.image_file import ImageData, ImageError, load_image

NO_IMAGES = "this model does not take images"


def attached(image: ImageData, origin: str = "user", call_id: str = "") -> ImageAttached:
    """The event for an image that is sent."""
    return ImageAttached(
        name=image.name,
        origin="tool" if origin == "tool" else "user",
        call_id=call_id,
        media_type=image.media_type,
        size=image.size,
        sha256=image.sha256,
        data=image.data,
    )


def prompt_images(paths: list[str], root: Path, takes_images: bool) -> list[ImageAttached]:
    """One event per image of a prompt; paths are relative to the workspace root (or absolute)."""
    events = []
    for text in paths:
        path = Path(text).expanduser()
        path = path if path.is_absolute() else root / path
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else text
        try:
            image = load_image(path, name)
        except ImageError as exc:
            events.append(ImageAttached(name=name, note=str(exc)))
            continue
        if takes_images:
            events.append(attached(image))
        else:
            events.append(
                ImageAttached(
                    name=name,
                    media_type=image.media_type,
                    size=image.size,
                    sha256=image.sha256,
                    note=NO_IMAGES,
                )
            )
    return events
