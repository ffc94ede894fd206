"""Text the model reads comes from prompts/ templates, not literals in code: each renders for every case the code
asks about, word for word what the model was told before the text moved there."""

from __future__ import annotations

from keel.agent.core.approval import Approvals
from keel.prompts import render
from keel.tools.base import ToolKind
from keel.tools.editing.matching import Stage


def test_every_forgiving_match_has_its_note_and_an_exact_match_none():
    notes = {stage: render("edit_stage_note", stage=stage.name) for stage in Stage}
    assert notes.pop(Stage.EXACT) == ""
    assert all(n.startswith("(old_string") and n.endswith(")") for n in notes.values()), notes
    assert notes[Stage.TRAILING_WHITESPACE] == (
        "(old_string matched once trailing whitespace was ignored)"
    )
    assert notes[Stage.INDENTATION] == (
        "(old_string matched once indentation was ignored; new_string was re-indented to the file's "
        "indentation: check the lines below)"
    )


def test_approval_denials_say_why_and_what_would_work():
    assert Approvals("read-only").denial("run_command", ToolKind.EXEC) == (
        "Denied: the approval policy is 'read-only', which does not allow exec tools such as run_command. "
        "Work with the tools that are allowed, or tell the user what you would need to run."
    )
    assert Approvals.unattended("run_command") == (
        "Denied: run_command needs a person's approval under this session's policy, and this run is "
        "headless, so nobody can give it. Continue without it, or finish and say what should be run. "
        "(The user can allow it with --approval full-auto.)"
    )
    assert render("approval_denied", why="person", tool="write_file") == (
        "Denied: the user did not approve this write_file call. Ask them or try another way."
    )


def test_an_empty_reply_is_told_to_go_on():
    assert render("empty_reply") == (
        "Your reply was empty. Continue the task with a tool call, or give your final answer."
    )
