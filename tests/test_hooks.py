"""Hooks (issue 31, point 4): the real `keel run` against the scripted server, in a real git repo, the hook
commands run for real in the sandbox; Claude Code's hook scripts and settings.json taken as they are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from keel_cli import git_repo, run_streamed
from small_model_support import call

from keel.agent.harness.testing.scripted_server import Reply
from keel.agent.harness.testing.scripted_wire import content_text

# A PreToolUse hook as Claude Code's docs teach it: read the event on stdin, exit 2 with the reason on stderr.
BLOCK_RM = """#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if data.get("tool_name") == "Bash" and command.split()[:1] == ["rm"]:
    print("Deleting files is not allowed here: move them to trash/ instead.", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"""
CLAUDE_SETTINGS = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": 'python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.py',
                    }
                ],
            }
        ]
    }
}


def said_by_user(request) -> str:
    """Every user message of a request (the prompt, and keel's status lines after it), as one text."""
    return "\n".join(
        content_text(m.get("content")) for m in request.messages if m.get("role") == "user"
    )


@pytest.fixture
def workspace(tmp_path) -> Path:
    return git_repo(
        tmp_path / "repo",
        {
            "keep.txt": "precious\n",
            ".claude/hooks/block-rm.py": BLOCK_RM,
            ".claude/settings.json": json.dumps(CLAUDE_SETTINGS, indent=2),
        },
    )


def user_config(home: Path, text: str) -> None:
    folder = home / "config" / "keel"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def hook_runs(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "hook.ran"]


def test_a_claude_code_pretooluse_script_blocks_rm_and_the_model_reads_why(
    scripted_server, workspace, tmp_path
):
    server = scripted_server(
        [call("run_command", command="rm keep.txt"), call("run_command", command="ls"), "ok"]
    )
    result = run_streamed(server.url, "--trust", "clean up", cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (workspace / "keep.txt").exists()
    blocked, allowed = hook_runs(result.events)
    assert blocked["hook_event"] == "PreToolUse" and blocked["tool_name"] == "run_command"
    assert blocked["exit_code"] == 2 and blocked["blocked"] is True
    assert "move them to trash/" in blocked["reason"]
    assert allowed["exit_code"] == 0 and allowed["blocked"] is False
    finished = [e for e in result.events if e["type"] == "tool.finished"]
    assert [e["status"] for e in finished] == ["denied", "ok"]
    shown = server.requests[1].last_text("tool")
    assert "A hook blocked this call" in shown and "move them to trash/" in shown


def test_posttooluse_gets_the_tool_response_and_its_context_reaches_the_model(
    scripted_server, workspace, tmp_path
):
    home = tmp_path / "home"
    (workspace / "seen.py").write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "open('post.json', 'w').write(json.dumps(data))\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PostToolUse',"
        " 'additionalContext': 'Remember the style guide.'}}))\n"
    )
    user_config(home, '[[hooks.PostToolUse]]\nmatcher = "read_file"\ncommand = "python3 seen.py"\n')
    server = scripted_server([call("read_file", path="keep.txt"), "read it"])
    result = run_streamed(server.url, "look", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads((workspace / "post.json").read_text())
    assert seen["hook_event_name"] == "PostToolUse" and seen["tool_name"] == "read_file"
    assert seen["tool_input"] == {"path": "keep.txt"}
    assert "precious" in seen["tool_response"]["output"] and seen["tool_response"]["success"]
    assert seen["cwd"] == str(workspace.resolve()) and seen["session_id"]
    assert Path(seen["transcript_path"]).is_file()
    assert "Remember the style guide." in server.requests[1].last_text("tool")


def test_an_untrusted_repositorys_hooks_do_not_run_and_keel_says_so_once(
    scripted_server, workspace, tmp_path
):
    (workspace / ".keel").mkdir()
    (workspace / ".keel" / "config.toml").write_text(
        '[[hooks.UserPromptSubmit]]\ncommand = "touch keel-hook-ran"\n'
    )
    server = scripted_server([call("run_command", command="rm keep.txt"), "removed"])
    result = run_streamed(server.url, "clean up", cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (workspace / "keep.txt").exists()  # the untrusted hook did not stop it
    assert not (workspace / "keel-hook-ran").exists()
    assert hook_runs(result.events) == []
    notices = [e["message"] for e in result.events if e["type"] == "error"]
    assert len(notices) == 2, notices  # one for each file
    assert any(".claude/settings.json" in n and "hooks" in n for n in notices)
    assert any(".keel/config.toml" in n and "hooks.UserPromptSubmit" in n for n in notices)


def test_prompt_and_stop_hooks_add_context_and_keep_the_agent_going(
    scripted_server, workspace, tmp_path
):
    """UserPromptSubmit's plain stdout becomes context; a Stop hook that blocks once (stop_hook_active)
    makes the model go on with its reason; a blocked prompt ends the task without calling the model."""
    home = tmp_path / "home"
    (workspace / "stop.py").write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "if not data['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'Run the tests first.'}))\n"
    )
    user_config(
        home,
        '[[hooks.UserPromptSubmit]]\ncommand = "echo Today is a holiday."\n'
        '[[hooks.Stop]]\ncommand = "python3 stop.py"\n',
    )
    server = scripted_server([Reply(text="done"), Reply(text="tests pass, done")])
    result = run_streamed(server.url, "fix it", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Today is a holiday." in said_by_user(server.requests[0])
    assert "Run the tests first." in said_by_user(server.requests[1])
    assert result.events[-1]["final_message"] == "tests pass, done"
    stops = [e for e in hook_runs(result.events) if e["hook_event"] == "Stop"]
    assert [e["blocked"] for e in stops] == [True, False]

    user_config(home, '[[hooks.UserPromptSubmit]]\ncommand = "echo no prompts today >&2; exit 2"\n')
    blocked = run_streamed(server.url, "fix it", cwd=workspace, home=home)
    assert blocked.returncode == 1
    assert "no prompts today" in blocked.events[-1]["reason"]
    assert len(server.requests) == 2  # the model was not called


def test_the_tui_asks_to_trust_a_repository_whose_only_config_is_claude_code_hooks(
    workspace, tmp_path, monkeypatch
):
    from keel.agent.core.config_files import ConfigSources
    from keel.tui.launch import settle_trust

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / "config"))
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    sources = ConfigSources.find(workspace, {})
    assert sources.config().hooks == {}
    assert sources.untrusted_keys() == ["hooks (.claude/settings.json)"]
    asked: list[Path] = []
    trusted = settle_trust(sources, lambda root, keys: asked.append(root) or True)
    assert asked == [workspace]
    [group] = trusted.config().hooks["PreToolUse"]
    assert group.matcher == "Bash" and group.tool_names == "claude"
    assert ConfigSources.find(workspace, {}).trusted  # remembered


DENY = json.dumps(
    {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not on main",
        }
    }
)


@pytest.mark.parametrize(
    ("event", "exit_code", "stdout", "stderr", "blocked", "said"),
    [
        ("PreToolUse", 2, "", "no rm", True, "no rm"),
        ("PreToolUse", 1, "", "crashed", False, ""),  # any other exit code blocks nothing
        ("SessionStart", 2, "", "late", False, ""),  # SessionStart cannot block
        (
            "PreToolUse",
            0,
            DENY,
            "",
            True,
            "not on main",
        ),
        ("PreToolUse", 0, '{"hookSpecificOutput": {"permissionDecision": "allow"}}', "", False, ""),
        (
            "PostToolUse",
            0,
            '{"decision": "block", "reason": "lint failed"}',
            "",
            True,
            "lint failed",
        ),
        ("Stop", 0, '{"continue": false, "stopReason": "enough"}', "", True, "enough"),
        ("UserPromptSubmit", 0, "plain context", "", False, "plain context"),
        ("PreToolUse", 0, "not json {", "", False, ""),
    ],
)
def test_a_hooks_answer_is_read_as_claude_code_reads_it(
    event, exit_code, stdout, stderr, blocked, said
):
    from keel.agent.core.hooks.runner import HookRun
    from keel.agent.core.hooks.session_hooks import _verdict

    verdict = _verdict(event, HookRun(exit_code, stdout, stderr, 1))
    assert verdict.blocked is blocked
    assert "\n".join([*verdict.reasons, *verdict.context]) == said


async def test_a_hook_that_hangs_is_stopped_at_its_timeout_and_blocks_nothing(ctx):
    from keel.agent.core.hooks.config import HookGroup
    from keel.agent.core.hooks.session_hooks import Hooks
    from keel.agent.core.protocol import HookRan

    ran: list[HookRan] = []
    group = HookGroup(command="cat > got.json; sleep 30", timeout=1)
    hooks = Hooks({"PreToolUse": [group]}, ctx, "s1", None, ran.append)  # type: ignore[arg-type]
    assert await hooks.before_tool("c1", "run_command", {"command": "ls"}) is None
    [event] = ran
    assert event.exit_code is None and not event.blocked and "1 s" in event.reason
    seen = json.loads((ctx.root / "got.json").read_text())
    assert seen["tool_name"] == "run_command" and seen["tool_use_id"] == "c1"
