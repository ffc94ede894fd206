"""Markdown slash commands (issue 31, point 5): Claude Code's `.claude/commands/*.md` taken as written, expanded
by the real `keel run` against the scripted server; the expansion rules as pure functions."""

from __future__ import annotations

from pathlib import Path

import pytest
from keel_cli import git_repo, run_streamed

from keel.agent.core.commands.front_matter import split_front_matter
from keel.agent.core.commands.markdown import expand, expand_prompt, find_commands
from keel.agent.harness.testing.scripted_wire import content_text
from keel.tui.commands import CommandError, command_names, parse_command

# as Claude Code's docs write a project command
REVIEW = """---
allowed-tools: Bash(git diff:*), Bash(git log:*)
argument-hint: [file]
description: Review a file for bugs and unclear names
---

## Your task

Review $ARGUMENTS for bugs, unclear names and missing tests. Start with the file $1.
"""


def said_by_user(request) -> str:
    """Every user message of a request (the prompt, and keel's status lines after it), as one text."""
    return "\n".join(
        content_text(m.get("content")) for m in request.messages if m.get("role") == "user"
    )


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / "config"))
    return git_repo(tmp_path / "repo", {"foo.py": "x = 1\n", ".claude/commands/review.md": REVIEW})


def test_a_claude_code_command_works_unchanged_through_keel_run(
    scripted_server, workspace, tmp_path
):
    server = scripted_server(["Looks fine."])
    result = run_streamed(server.url, "/review foo.py", cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr[-3000:]
    sent = said_by_user(server.requests[0])
    assert (
        "Review foo.py for bugs, unclear names and missing tests. Start with the file foo.py."
        in sent
    )
    assert "allowed-tools" not in sent and "/review" not in sent
    assert result.events[-1]["final_message"] == "Looks fine."


def test_front_matter_arguments_and_where_commands_come_from(workspace, tmp_path):
    keys, body = split_front_matter(REVIEW)
    assert keys["description"] == "Review a file for bugs and unclear names"
    assert keys["argument-hint"] == "[file]" and body.startswith("## Your task")
    user = tmp_path / "home" / "config" / "keel" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("the user's review\n")
    (user / "explain.md").write_text("Explain this code.\n")
    (workspace / ".keel" / "commands").mkdir(parents=True)
    (workspace / ".keel" / "commands" / "ship.md").write_text(
        "---\nmodel: openai/other\n---\nShip $2 then $1.\n"
    )
    commands = find_commands(workspace)
    assert (
        commands["review"].description == "Review a file for bugs and unclear names"
    )  # the repo's wins
    assert commands["ship"].model == "openai/other"
    assert expand(commands["ship"], "a 'b c'") == "Ship b c then a."
    assert expand(commands["explain"], "foo.py") == "Explain this code.\n\nARGUMENTS: foo.py"
    assert expand_prompt(workspace, "/nothing here") == "/nothing here"
    assert expand_prompt(workspace, "/explain") == "Explain this code."


def test_the_prompt_box_sends_markdown_commands_as_prompts_and_completes_them(workspace):
    names = find_commands(workspace)
    assert parse_command("/review foo.py", names) is None  # a prompt: the session expands it
    assert parse_command("/help", names) is not None
    assert "/review" in command_names(names)
    with pytest.raises(CommandError, match="/review"):
        parse_command("/nope", names)
