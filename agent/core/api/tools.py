"""The public surface of the tools: their sets, the context they run in and the few a harness runs itself."""

from __future__ import annotations

from keel.tools import default_tools, small_model_tools
from keel.tools.base import ToolContext, ToolError, ToolResult
from keel.tools.images.image_file import ImageError, load_image
from keel.tools.propose_setup import ProposeSetupArgs, ProposeSetupTool
from keel.tools.run_command import RunCommandArgs, RunCommandTool

__all__ = [
    "ImageError",
    "ProposeSetupArgs",
    "ProposeSetupTool",
    "RunCommandArgs",
    "RunCommandTool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "default_tools",
    "load_image",
    "small_model_tools",
]
