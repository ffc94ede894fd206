"""Skills (issue 31, point 5): a skill's name and description reach the system prompt, and the `skill` tool
loads its body when the scripted model asks; the real `keel run` against the scripted server."""

from __future__ import annotations

from keel_cli import git_repo, run_streamed

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

SKILL = """---
name: release-notes
description: Write release notes from the git log in the project's house style.
---

# Release notes

1. Read `git log` since the last tag.
2. Group the changes as Added / Fixed, one line each, in the past tense.
"""


def load(name: str, **more: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="skill", arguments={"name": name, **more})])


def test_a_skills_description_is_in_the_system_prompt_and_its_body_loads_on_request(
    scripted_server, tmp_path
):
    workspace = git_repo(
        tmp_path / "repo",
        {
            ".claude/skills/release-notes/SKILL.md": SKILL,
            ".claude/skills/release-notes/style.md": "Past tense, no emoji.\n",
        },
    )
    server = scripted_server(
        [
            load("release"),
            load("release-notes"),
            load("release-notes", file="style.md"),
            load("release-notes", file="../../../.git/config"),
            "Notes written.",
        ]
    )
    result = run_streamed(
        server.url, "write the release notes", cwd=workspace, home=tmp_path / "home"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    first = server.requests[0]
    system = first.messages[0]["content"]
    assert (
        "release-notes: Write release notes from the git log in the project's house style."
        in system
    )
    assert "Group the changes" not in system  # only the description, until asked
    assert "skill" in first.tool_names
    wrong, right, style, outside = [e for e in result.events if e["type"] == "tool.finished"]
    assert style["output"] == "Past tense, no emoji.\n"
    assert outside["status"] == "error" and "its files are: style.md" in outside["output"]
    assert wrong["status"] == "error" and "the skills are: release-notes" in wrong["output"]
    loaded = server.requests[2].last_text("tool")
    assert "Group the changes as Added / Fixed" in loaded and "style.md" in loaded
    assert right["status"] == "ok"


def test_without_skills_there_is_no_skill_tool_and_no_list_of_them(scripted_server, tmp_path):
    workspace = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    server = scripted_server(["hi"])
    result = run_streamed(server.url, "hello", cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "skill" not in server.requests[0].tool_names
    assert "Skills you can use" not in server.requests[0].messages[0]["content"]
