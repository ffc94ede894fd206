"""A repository's link to a file outside it is never read for the model: a cloned repo that commits `notes.py ->
~/.ssh/id_rsa` (or `AGENTS.md -> …`) would otherwise send the key to the model's provider with the project's files,
in the code map or as the project's instructions. The tools refuse such a path; what keel gives the model
unasked (the files with a small model's task and after failed checks, the code map, AGENTS.md, the repository's
skills, commands and agent definitions) is read the same way."""

from __future__ import annotations

import subprocess

from keel_cli import git_repo
from small_model_support import run_task, served_settings

from keel.agent.harness.testing.scripted_server import Reply

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- the-key-itself"
CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}


def linked_repo(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text(SECRET + "\n")
    repo = git_repo(tmp_path / "repo", CALC)
    (repo / "notes.py").symlink_to(outside / "id_rsa")
    (repo / "inside.py").symlink_to(
        "calc.py"
    )  # a link within the repository is a file like any other
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "links"], cwd=repo, check=True)
    return repo


async def test_a_link_out_of_the_repository_is_not_given_with_the_task(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = linked_repo(tmp_path)
    broken = (
        "def add(a, b)\n    return a + b\n"  # fails the syntax check: the files come back again
    )
    fixed = "def add(a, b):\n    return a + b\n"
    server = scripted_server(
        [
            Reply(text=f"FILE: calc.py\n```python\n{broken}```"),
            Reply(text=f"FILE: calc.py\n```python\n{fixed}```"),
        ]
    )
    events, _ = await run_task(served_settings(server, repo), "add() in calc.py is broken")
    sent = "".join(str(request.messages) for request in server.requests)
    assert len(server.requests) == 2 and "FILE: calc.py" in server.requests[1].last_text("user")
    assert SECRET not in sent and "FILE: notes.py" not in sent
    assert "FILE: inside.py" in server.requests[0].last_text("user")
    assert events[-1].status == "completed"


def test_the_code_map_leaves_out_a_link_out_of_the_repository(tmp_path):
    from keel.tools.codeintel.source_files import discover

    repo = linked_repo(tmp_path)
    (tmp_path / "outside" / "secrets_module.py").write_text("def deploy_key():\n    return 1\n")
    (repo / "linked_module.py").symlink_to(tmp_path / "outside" / "secrets_module.py")
    assert [source.rel for source in discover(repo, repo)] == ["calc.py", "inside.py"]


def test_instructions_linked_out_of_the_repository_are_not_read(tmp_path):
    from keel.agent.core.workspace_facts import load_instructions

    repo = linked_repo(tmp_path)
    (repo / "AGENTS.md").symlink_to(tmp_path / "outside" / "id_rsa")
    (repo / "CLAUDE.md").write_text("Keep functions short.\n")
    found = load_instructions(repo)
    assert found is not None and found.name == "CLAUDE.md" and SECRET not in found.text


def repo_with_linked_prompts(tmp_path, monkeypatch):
    """A repository whose skill, command and agent definition link out of it (a skill's body, a command's prompt
    and an agent's prompt all go to the model), beside a skill of its own and the person's skill folder, itself
    a link (dotfiles), which is read as it is."""
    repo = linked_repo(tmp_path)
    outside = tmp_path / "outside"
    (outside / "skill.md").write_text(f"---\ndescription: deploy the app\n---\n{SECRET}\n")
    for link in [
        ".keel/skills/deploy/SKILL.md",
        ".claude/commands/review.md",
        ".keel/agents/helper.md",
    ]:
        (repo / link).parent.mkdir(parents=True, exist_ok=True)
        (repo / link).symlink_to(outside / ("skill.md" if "skills" in link else "id_rsa"))
    (repo / ".keel/skills/tidy").mkdir()
    (repo / ".keel/skills/tidy/SKILL.md").write_text(
        "---\ndescription: tidy up\n---\nSort imports.\n"
    )
    dotfiles = tmp_path / "dotfiles" / "skills" / "notes"
    dotfiles.mkdir(parents=True)
    (dotfiles / "SKILL.md").write_text("---\ndescription: take notes\n---\nWrite them down.\n")
    (tmp_path / "config" / "keel").mkdir(parents=True)
    (tmp_path / "config" / "keel" / "skills").symlink_to(dotfiles.parent)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return repo


def test_a_skill_linked_out_of_the_repository_is_not_listed(tmp_path, monkeypatch):
    from keel.agent.core.skills.catalog import find_skills

    repo = repo_with_linked_prompts(tmp_path, monkeypatch)
    skills = {skill.name: skill.body() for skill in find_skills(repo)}
    assert skills == {"tidy": "Sort imports.\n", "notes": "Write them down.\n"}


def test_a_command_linked_out_of_the_repository_is_not_offered(tmp_path, monkeypatch):
    from keel.agent.core.commands.markdown import find_commands

    repo = repo_with_linked_prompts(tmp_path, monkeypatch)
    (repo / ".claude/commands/ship.md").write_text("Ship it.\n")
    commands = find_commands(repo)
    assert "review" not in commands and commands["ship"].body == "Ship it.\n"


def test_an_agent_definition_linked_out_of_the_repository_is_a_problem_not_a_prompt(
    tmp_path, monkeypatch
):
    from keel.agent.core.subagents.definitions import find_definitions

    repo = repo_with_linked_prompts(tmp_path, monkeypatch)
    definitions, problems = find_definitions(repo, user_dirs=[])
    assert "helper" not in definitions
    (problem,) = problems
    assert problem.path.name == "helper.md" and "links out of the repository" in problem.problem
