"""Loads the core, litellm, the tools and Markdown on a thread after the first paint, so the UI never waits on imports."""

from __future__ import annotations


def warm_up_core() -> None:
    import agent.session  # noqa: F401
    from agent.model import litellm_module
    from tools import default_tools

    litellm_module()
    default_tools()
    import tui.widgets.assistant_block  # noqa: F401
