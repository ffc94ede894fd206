"""Agent definition files and the tools a child gets from them: pure functions over text and names."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.agent.core.subagents.definitions import find_definitions, parse_definition
from keel.agent.core.subagents.frontmatter import FrontMatterError, split_front_matter
from keel.agent.core.subagents.tool_grant import grant_tools

PARENT_TOOLS = [
    "read_file",
    "write_file",
    "edit_file",
    "apply_patch",
    "search",
    "find_files",
    "code_map",
    "lint",
    "run_command",
    "job_output",
    "task",
]


def test_front_matter_in_the_shapes_claude_code_files_use():
    keys, body = split_front_matter(
        "---\n"
        "name: test-runner\n"
        'description: "Runs tests: use it \\"proactively\\""\n'
        "tools:\n  - Read\n  - Bash\n"
        "model: sonnet  # the alias\n"
        "notes: |\n  line one\n  line two\n"
        "color: 'blue'\n"
        "---\n\nYou run the tests.\n"
    )
    assert keys == {
        "name": "test-runner",
        "description": 'Runs tests: use it "proactively"',
        "tools": ["Read", "Bash"],
        "model": "sonnet",
        "notes": "line one\nline two",
        "color": "blue",
    }
    assert body == "You run the tests."


def test_a_file_without_front_matter_is_all_body_and_an_unclosed_one_is_an_error():
    assert split_front_matter("Just a prompt.\n") == ({}, "Just a prompt.\n")
    with pytest.raises(FrontMatterError):
        split_front_matter("---\nname: x\nno end\n")


def test_a_definition_takes_its_name_from_the_file_when_it_gives_none():
    definition = parse_definition(
        "---\ntools: [Read, 'Grep']\nisolation: worktree\nmaxTurns: 7\n---\nLook.",
        Path("explorer.md"),
        "user",
    )
    assert definition.name == "explorer" and definition.tools == ("Read", "Grep")
    assert definition.isolation == "worktree" and definition.max_turns == 7
    with pytest.raises(ValueError, match="isolation"):
        parse_definition("---\nisolation: docker\n---\n", Path("x.md"), "user")


def test_the_repository_s_definition_replaces_the_person_s_and_broken_files_are_listed(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "reviewer.md").write_text("---\ndescription: mine\n---\nMine.")
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text("---\ndescription: theirs\n---\n")
    (repo / ".claude" / "agents" / "broken.md").write_text("---\nname: broken\n")
    found, problems = find_definitions(repo, [user])
    assert found["reviewer"].description == "theirs" and found["reviewer"].origin == "repository"
    assert [p.path.name for p in problems] == ["broken.md"]


def definition(tools: str | None, origin: str = "repository", disallowed: str = ""):
    front = f"tools: {tools}\n" if tools is not None else ""
    front += f"disallowedTools: {disallowed}\n" if disallowed else ""
    return parse_definition(f"---\n{front}---\n", Path("a.md"), origin)  # type: ignore[arg-type]


def test_no_definition_or_no_tools_named_gives_the_read_tools():
    read = ["read_file", "search", "find_files", "code_map"]
    assert grant_tools(None, PARENT_TOOLS, may_widen=True).tools == read
    assert grant_tools(definition(None, "user"), PARENT_TOOLS, may_widen=True).tools == read


def test_claude_code_names_map_to_keel_tools_and_task_is_never_granted():
    grant = grant_tools(
        definition("Read, Edit, Bash(git diff:*), Task, NotebookEdit", "user"),
        PARENT_TOOLS,
        may_widen=True,
    )
    assert grant.tools == ["read_file", "edit_file", "run_command", "job_output"]
    assert grant.unknown == ["Task", "NotebookEdit"] and grant.writes


def test_an_untrusted_repository_gets_read_tools_only_and_no_more_than_the_parent_has():
    grant = grant_tools(definition("Read, Write, Bash, WebFetch"), PARENT_TOOLS, may_widen=False)
    assert grant.tools == ["read_file"] and not grant.writes
    assert grant.withheld == ["job_output", "run_command", "web_fetch", "write_file"]
    narrow = grant_tools(definition("Read, Write", "user"), ["read_file", "search"], True)
    assert narrow.tools == ["read_file"] and narrow.unknown == ["write_file"]


def test_disallowed_tools_are_taken_away():
    grant = grant_tools(definition("Read, Bash", "user", disallowed="Bash"), PARENT_TOOLS, True)
    assert grant.tools == ["read_file"]
