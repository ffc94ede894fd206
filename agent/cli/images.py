"""`keel run --image FILE`: each file checked before the session starts, so a wrong path is a usage error."""

from __future__ import annotations

from pathlib import Path

from keel.agent.core.errors import UsageError


def image_paths(files: list[str], prompt: str | None) -> list[str]:
    """The images as absolute paths; a file that is missing, not an image or too large stops the run (exit 2)."""
    if not files:
        return []
    from keel.agent.core.api.tools import ImageError, load_image

    if prompt is None:
        raise UsageError("--image goes with a prompt: say what to do with the image")
    paths = []
    for text in files:
        path = Path(text).expanduser().absolute()
        try:
            load_image(path, text)
        except ImageError as exc:
            raise UsageError(f"--image: {exc}") from None
        paths.append(str(path))
    return paths
