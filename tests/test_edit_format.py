"""The small-model prompt's edit format by file size: whole files up to the threshold, edit_file beyond it."""

from __future__ import annotations

from pathlib import Path

from keel.agent.core.config import LoopSettings
from keel.agent.core.context.edit_format import WHOLE_FILE_MAX_LINES, edit_format
from keel.agent.core.context.small_project import ProjectFile
from keel.agent.core.profile import ModelProfile
from keel.agent.core.strategies.small import SmallModel
from keel.agent.core.system_prompt import SystemPrompt
from keel.agent.core.workspace_facts import gather_facts
from keel.prompts import render
from keel.tools import small_model_tools
from keel.tools.registry import ToolRegistry


def test_a_file_up_to_the_threshold_is_rewritten_whole_a_longer_one_by_search_replace():
    at_limit = "x = 1\n" * WHOLE_FILE_MAX_LINES
    assert edit_format(at_limit) == "whole"
    assert (
        edit_format(at_limit.rstrip("\n")) == "whole"
    )  # no newline at the end: still the same lines
    assert edit_format(at_limit + "y = 2") == "search_replace"
    assert edit_format("") == "whole"
    assert edit_format("a\nb\nc\n", max_lines=2) == "search_replace"


def test_the_small_model_prompt_states_the_threshold_and_the_full_prompt_does_not(tmp_path: Path):
    facts = gather_facts(tmp_path, list_files=True)
    registry = ToolRegistry(small_model_tools())
    small = SmallModel(ModelProfile(compact=True), LoopSettings()).prompt_style
    compact = SystemPrompt(facts=facts, instructions=None, registry=registry, style=small)
    text = compact.text("native")
    assert f"A file of up to {WHOLE_FILE_MAX_LINES} lines: rewrite it whole" in text
    assert "A longer file: change it with edit_file" in text
    full = SystemPrompt(facts=facts, instructions=None, registry=registry).text("native")
    assert f"{WHOLE_FILE_MAX_LINES} lines" not in full


def test_the_files_given_with_a_task_name_those_to_change_by_search_replace_blocks():
    small = ProjectFile(path="small.py", text="x = 1\n")
    long = ProjectFile(path="long.py", text="x = 1\n" * (WHOLE_FILE_MAX_LINES + 1))
    text = render("project_files", files=[small, long], task="fix it", partial=False, failing=None)
    assert "Too long to give whole: long.py." in text and ">>>>>>> REPLACE" in text
    assert (small.whole, long.whole) == (True, False)
    assert "Too long" not in render(
        "project_files", files=[small], task="fix it", partial=False, failing=None
    )


def test_the_files_given_are_fenced_with_their_language_as_one_call_would_show_them():
    files = [ProjectFile(path="calc.py", text="x = 1\n"), ProjectFile(path="notes.xyz", text="a\n")]
    text = render("project_files", files=files, task="fix it", partial=False, failing=None)
    assert "FILE: calc.py\n```python\nx = 1\n```" in text
    assert "FILE: notes.xyz\n```\na\n```" in text
