"""keel's tools, one per file; `default_tools` is the set every session starts with."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # tools.base loads pydantic; `from tools.plural import plural` should not
    from tools.base import Tool


def default_tools() -> list[Tool]:
    """One instance of every tool in DESIGN's table, in the order the model sees them."""
    from tools.apply_patch import ApplyPatchTool
    from tools.code_map import CodeMapTool
    from tools.edit_file import EditFileTool
    from tools.find_files import FindFilesTool
    from tools.job_output import JobOutputTool
    from tools.lint import LintTool
    from tools.read_file import ReadFileTool
    from tools.run_command import RunCommandTool
    from tools.search import SearchTool
    from tools.write_file import WriteFileTool

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
    ]
