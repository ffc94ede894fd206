"""keel's tools, one per file; `default_tools` is the set every session starts with, `small_model_tools` the
fewer a small model is offered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # keel.tools.base loads pydantic, which importing this package should not
    from keel.tools.base import Tool


def default_tools() -> list[Tool[Any]]:
    """One instance of every tool in the README's table (Tools), in the order the model sees them."""
    from keel.tools.apply_patch import ApplyPatchTool
    from keel.tools.code_map import CodeMapTool
    from keel.tools.edit_file import EditFileTool
    from keel.tools.find_files import FindFilesTool
    from keel.tools.job_output import JobOutputTool
    from keel.tools.lint import LintTool
    from keel.tools.read_file import ReadFileTool
    from keel.tools.run_command import RunCommandTool
    from keel.tools.search import SearchTool
    from keel.tools.task import TaskTool
    from keel.tools.todo import TodoTool
    from keel.tools.web_fetch import WebFetchTool
    from keel.tools.write_file import WriteFileTool

    return [
        ReadFileTool(),
        WriteFileTool(),
        EditFileTool(),
        ApplyPatchTool(),
        SearchTool(),
        FindFilesTool(),
        CodeMapTool(),
        LintTool(),
        RunCommandTool(),
        JobOutputTool(),
        TaskTool(),
        TodoTool(),
        WebFetchTool(),
    ]


SMALL_MODEL_TOOLS = ("read_file", "write_file", "edit_file", "search", "find_files", "run_command")


def small_model_tools() -> list[Tool[Any]]:
    """The tools a small model gets: reading, searching, editing, running. Patches, the code map, the linter
    and background jobs cost it schema tokens and it rarely uses them well."""
    return [tool for tool in default_tools() if tool.name in SMALL_MODEL_TOOLS]
