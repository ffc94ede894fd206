"""The small-model profile and the text-call fixes (issue 15's behaviours 3–8): what a served small model is
sent, one call per reply, repeated reads, usage without a server's count, calls returned as text."""

from __future__ import annotations

from pathlib import Path

import pytest
from keel_cli import git_repo
from small_model_support import (
    CALC,
    CAPABLE,
    FIX,
    call,
    model_answer,
    run_task,
    served_settings,
)

from keel.agent.core.model.tokens import count_json, count_text
from keel.agent.core.profile import LOCAL_REPLY_TOKENS
from keel.agent.core.protocol import AssistantMessage, ToolFinished
from keel.agent.harness.testing.scripted_server import Reply


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", CALC)


def tagged(name: str, **arguments) -> str:
    import json

    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


# ------------------------------------------------ 3 and 6: what a small model is sent


async def test_a_served_small_model_gets_the_compact_profile(scripted_server, workspace):
    server = scripted_server([call("read_file", path="calc.py"), Reply(text="It subtracts.")])
    await run_task(served_settings(server, workspace), "what does calc.py do?")
    capable = scripted_server([Reply(text="It subtracts.")])
    await run_task(served_settings(capable, workspace, CAPABLE), "what does calc.py do?")

    small_first, full_first = server.requests[0], capable.requests[0]
    for request in server.requests:
        assert "[keel status]" not in str(request.messages)  # no bare status line to copy
        assert request.body["temperature"] == 0.2  # not the server's default of 0.8
        assert request.body["max_tokens"] == LOCAL_REPLY_TOKENS  # llama.cpp's server sets no limit
    assert "[keel status]" in str(full_first.messages) and "temperature" not in full_first.body
    assert "max_tokens" not in full_first.body
    assert "apply_patch" not in small_first.tool_names and "edit_file" in small_first.tool_names

    def prompt_tokens(request) -> int:
        return count_json(request.messages) + count_json(request.tools)

    assert prompt_tokens(small_first) < 1_200
    assert prompt_tokens(full_first) > 2_000


async def test_the_profile_and_temperature_are_configurable(scripted_server, workspace):
    server = scripted_server([Reply(text="ok")])
    await run_task(served_settings(server, workspace, prompt="full", temperature=0.5), "hi")
    assert "[keel status]" in str(server.requests[0].messages)
    assert server.requests[0].body["temperature"] == 0.5
    server = scripted_server([Reply(text="ok")])
    await run_task(served_settings(server, workspace, CAPABLE, prompt="compact"), "hi")
    assert "apply_patch" not in server.requests[0].tool_names


# ------------------------------------------------ 4: a repeated read is answered, and logged


async def test_a_repeated_read_points_at_the_result_and_the_task_goes_on(
    scripted_server, workspace
):
    read = call("read_file", path="calc.py")
    server = scripted_server([read, read, call("edit_file", **FIX), Reply(text="fixed")])
    events, log = await run_task(served_settings(server, workspace), "fix add")
    results = [e for e in log if isinstance(e, ToolFinished)]
    assert "return a - b" in results[0].output
    assert results[1].output.startswith("Not run again") and "return a" not in results[1].output
    assert events[-1].status == "completed" and model_answer(events[-1].final_message) == "fixed"
    assert "return a + b" in (workspace / "calc.py").read_text()


async def test_a_repeated_read_asks_for_the_answer_without_tools(scripted_server, workspace):
    """A question: the first repeat gets its result again and a request for the answer; a change task
    gets one more chance to act (the test above)."""
    read = call("read_file", path="calc.py")
    written_call = '{"name": "read_file", "arguments": {"path": "calc.py"}}'
    server = scripted_server([read, read, Reply(text=written_call), Reply(text="unused")])
    events, log = await run_task(served_settings(server, workspace), "what does calc.py do?")
    results = [e for e in log if isinstance(e, ToolFinished)]
    assert all("return a - b" in r.output for r in results) and len(results) == 2
    asked = [e for e in log if getattr(e, "purpose", None) == "answer"]
    assert len(asked) == 1 and "Answer my request now" in asked[0].text
    assert server.requests[2].tools == [] and server.requests[1].tools != []
    # the answer is taken as it is: a call written in it is not run
    assert events[-1].status == "completed" and events[-1].final_message == written_call
    assert len(server.requests) == 3


async def test_a_call_that_failed_runs_again_when_repeated(scripted_server, workspace):
    read = call("read_file", path="missing.py")
    server = scripted_server([read, read, Reply(text="there is no missing.py")])
    _, log = await run_task(served_settings(server, workspace), "what is in missing.py?")
    results = [e for e in log if isinstance(e, ToolFinished)]
    assert [r.status for r in results] == ["error", "error"]
    assert all(r.output.startswith("Error") for r in results)


async def test_a_capable_model_reading_twice_reads_twice(scripted_server, workspace):
    read = call("read_file", path="calc.py")
    server = scripted_server([read, read, Reply(text="ok")])
    _, log = await run_task(served_settings(server, workspace, CAPABLE), "look twice")
    assert all("return a - b" in e.output for e in log if isinstance(e, ToolFinished))


# ------------------------------------------------ 5: one call per reply in the text protocol


async def test_only_the_first_text_call_runs_and_the_rest_are_named(scripted_server, workspace):
    plan = "\n".join(
        [
            "First I read it, then patch it.",
            tagged("read_file", path="calc.py"),
            tagged("apply_patch", patch="(the patch goes here)"),
            tagged("run_command", command="touch ran.txt"),
        ]
    )
    server = scripted_server([Reply(text=plan), Reply(text="ok")])
    _, log = await run_task(
        served_settings(server, workspace, CAPABLE, tool_protocol="text"), "fix add"
    )
    results = [e for e in log if isinstance(e, ToolFinished)]
    assert [r.name for r in results] == ["read_file"]
    assert "Not run: apply_patch, run_command" in results[0].output
    assert not (workspace / "ran.txt").exists()
    assert "Not run: apply_patch" in str(server.requests[1].messages)


async def test_a_model_configured_for_parallel_calls_runs_them_all(scripted_server, workspace):
    both = (
        tagged("read_file", path="calc.py") + "\n" + tagged("run_command", command="touch ran.txt")
    )
    server = scripted_server([Reply(text=both), Reply(text="ok")])
    chosen = served_settings(server, workspace, CAPABLE, tool_protocol="text", parallel_calls=True)
    _, log = await run_task(chosen, "go")
    assert [e.name for e in log if isinstance(e, ToolFinished)] == ["read_file", "run_command"]
    assert (workspace / "ran.txt").exists()


# ------------------------------------------------ 7: usage when the server reports none


async def test_usage_counted_without_the_server_includes_prompt_and_tools(
    scripted_server, workspace
):
    server = scripted_server([Reply(text="It subtracts.")], reports_usage=False)
    events, _ = await run_task(served_settings(server, workspace, CAPABLE), "what does calc.py do?")
    request = server.requests[0]
    assert request.body["stream_options"] == {"include_usage": True}
    counted = next(e for e in events if isinstance(e, AssistantMessage)).usage
    system_prompt = count_text(request.messages[0]["content"])
    assert counted.prompt_tokens >= system_prompt + count_json(request.tools)
    assert counted.prompt_tokens <= 1.2 * (count_json(request.messages) + count_json(request.tools))
    assert counted.completion_tokens == count_text("It subtracts.")


# ------------------------------------------------ 8: a call returned as text in native mode


async def test_a_call_returned_as_text_in_native_mode_runs(scripted_server, workspace):
    server = scripted_server([Reply(text=tagged("edit_file", **FIX)), Reply(text="fixed")])
    events, _ = await run_task(served_settings(server, workspace, CAPABLE), "fix add")
    results = [e for e in events if isinstance(e, ToolFinished)]
    assert [r.name for r in results] == ["edit_file"] and results[0].status == "ok"
    assert (
        model_answer(events[-1].final_message) == "fixed"
        and "return a + b" in (workspace / "calc.py").read_text()
    )
    replayed = [m for m in server.requests[1].messages if m.get("tool_calls")]
    assert replayed[0]["tool_calls"][0]["function"]["name"] == "edit_file"


async def test_bare_json_naming_a_tool_in_native_mode_runs_but_other_json_is_an_answer(
    scripted_server, workspace
):
    server = scripted_server(
        ['{"name": "read_file", "arguments": {"path": "calc.py"}}', '{"name": "Ada", "age": 36}']
    )
    events, _ = await run_task(served_settings(server, workspace, CAPABLE), "who?")
    assert [e.name for e in events if isinstance(e, ToolFinished)] == ["read_file"]
    assert events[-1].final_message == '{"name": "Ada", "age": 36}'


# ------------------------------------------------ a small project, given whole to a small model


async def test_a_small_model_gets_a_small_projects_files_with_its_task(scripted_server, workspace):
    whole = "FILE: calc.py\n```python\ndef add(a, b):\n    return a + b\n```\nFixed."
    server = scripted_server([Reply(text=whole)])
    events, log = await run_task(served_settings(server, workspace), "add() is broken")
    context = [e for e in log if getattr(e, "purpose", None) == "context"]
    assert len(context) == 1 and "FILE: calc.py" in context[0].text
    assert "return a - b" in str(server.requests[0].messages)  # seen before any call
    # the reply's whole file is a write_file call (no read needed: the files came with the task)
    results = [e for e in events if isinstance(e, ToolFinished)]
    assert [(r.name, r.status) for r in results] == [("write_file", "ok")]
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    # the files, checked, end the task as one call would: its words are the answer
    assert model_answer(events[-1].final_message) == "Fixed." and len(server.requests) == 1


async def test_the_call_after_the_files_has_a_system_prompt_without_tools(
    scripted_server, workspace
):
    """Told "you cannot change them without a tool" and offered none, Qwen2.5-Coder-1.5B copied the files
    back unchanged (bench/small_model: none_input, wrong_default, failing_test); told only that it is a
    careful programmer, as in one call, it fixed them. Tools and keel's own prompt come back after an answer
    in words that changes nothing (with the nudge)."""
    (workspace / "AGENTS.md").write_text("Keep functions short.\n")
    words = "add() looks right to me."
    server = scripted_server([Reply(text=words), Reply(text="Nothing needs to change.")])
    await run_task(served_settings(server, workspace), "add() is broken")

    def system(request) -> str:
        return request.messages[0]["content"]

    edit_first, after = server.requests[0], server.requests[1]
    assert not edit_first.tool_names and "tool" not in system(edit_first)
    assert "careful programmer" in system(edit_first)
    assert "Keep functions short." in system(edit_first)  # the project's instructions still hold
    assert after.tool_names and "read_file" in system(after)


async def test_the_reply_format_is_asked_for_on_one_line(scripted_server, workspace):
    """Asked on lines wrapped mid-sentence, the 0.5B replied with the line "for each one, a line `FILE:
    pricing.py` and then the whole file…" instead of the file; asked on one line, it wrote the file."""
    server = scripted_server([Reply(text="Nothing needs to change.")])
    await run_task(served_settings(server, workspace), "add() is broken")
    given = server.requests[0].messages[-1]["content"]
    asked = [line for line in given.splitlines() if "Reply with the complete new content" in line]
    assert len(asked) == 1 and asked[0].endswith("Leave out the files you do not change.")
    assert not [line for line in given.splitlines() if line.startswith("for each one")]


async def test_a_capable_model_is_not_given_the_files_and_a_whole_file_is_an_answer(
    scripted_server, workspace
):
    whole = "FILE: calc.py\n```python\ndef add(a, b):\n    return a + b\n```"
    server = scripted_server([Reply(text=whole)])
    events, _ = await run_task(served_settings(server, workspace, CAPABLE), "add() is broken")
    assert "return a - b" not in str(server.requests[0].messages)
    assert events[-1].final_message == whole
    assert "return a - b" in (workspace / "calc.py").read_text()


async def test_a_project_too_big_to_give_whole_is_not_given(scripted_server, tmp_path, monkeypatch):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    big = {f"m{n}.py": "x = 1\n" * 400 for n in range(8)}  # about 19,000 characters
    repo = git_repo(tmp_path / "big", big)
    server = scripted_server([Reply(text="What should change?")])
    await run_task(served_settings(server, repo), "what is in m1.py?")
    assert "x = 1" not in str(server.requests[0].messages)
