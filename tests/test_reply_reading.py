"""The pure decisions behind how a task ends: which prompts ask for a change, which replies are failed attempts
at a call, which models are small (the loop's end-to-end behaviour is in test_task_ending.py)."""

from __future__ import annotations

import json

import pytest

from keel.agent.core.generic_failures import call_shaped, echo_of_keel
from keel.agent.core.messages import Message, user
from keel.agent.core.profile import is_local, is_small_model, model_profile, parameters_in_billions
from keel.agent.core.reply_reading import attempted_call, call_example, calls_in_prose
from keel.agent.core.state import SessionState
from keel.agent.core.strategies.heuristics import asks_for_change, whole_files
from keel.tools import default_tools
from keel.tools.registry import ToolRegistry

TOOLS = ToolRegistry(default_tools()).names()
SMALL = "openai/qwen2.5-coder-1.5b-instruct"


@pytest.mark.parametrize(
    "prompt",
    [
        "fix the parser",
        "Can you add a --verbose flag?",
        "please rename slug to slugify in both files",
        "add() is broken",
        "test_parse fails",
        "look at main.py and fix the off-by-one",
        "The CLI crashes on empty input",
        "Make the failing test pass",
        "moving_sums drops the last window",
    ],
)
def test_prompts_that_ask_for_a_change(prompt):
    assert asks_for_change(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "why does add() fail?",
        "explain main.py",
        "what does this repo do",
        "thanks!",
        "hello",
        "Summarize README.md, then suggest improvements",
        "Use a tool to list the files in this directory, then tell me what they are.",
        "run the tests",
        "Say hello in one short sentence.",
        "reply with the word ok and nothing else",
    ],
)
def test_prompts_that_ask_for_no_change(prompt):
    assert not asks_for_change(prompt)


@pytest.mark.parametrize(
    "answer",
    [
        "I changed `calc.py` with edit_file; the tests pass now.",
        'The config is:\n```json\n{"name": "keel", "version": 2}\n```',
        "```python\ndef read_file(path):\n    return open(path).read()\n```",
        '{"status": "done"}',
        "",
    ],
)
def test_answers_are_not_attempted_calls(answer):
    assert attempted_call(answer, TOOLS, truncated=False) is None


def test_an_answer_cut_off_in_prose_is_still_an_answer():
    assert attempted_call("The function adds two numb", TOOLS, truncated=True) is None


def test_the_problem_names_the_mistake_and_where_it_is():
    problem = attempted_call('{"name": "read_file", "arguments": {"path": a.py}}', TOOLS, False)
    assert problem is not None and "read_file" in problem and "line 1, column" in problem


def test_a_tool_keyed_object_is_an_attempt():
    problem = attempted_call('{"edit_file": {"path": "a.py", "old_string": x}}', TOOLS, False)
    assert problem is not None and "edit_file" in problem


def test_the_example_call_fills_the_required_arguments():
    example = call_example("edit_file", ToolRegistry(default_tools()).schema("edit_file"))
    assert example.startswith('{"name": "edit_file", "arguments": {"path": "..."')
    assert '"old_string": "..."' in example and '"new_string": "..."' in example


@pytest.mark.parametrize(
    ("model", "billions", "small"),
    [
        ("qwen2.5-coder-1.5b-instruct", 1.5, True),
        ("ollama/llama3.1:8b", 8.0, False),
        ("Qwen3-30B-A3B-Q4_K_M.gguf", 30.0, False),
        ("keel-local/qwen2.5-coder-0.5b-instruct", 0.5, True),
        ("gpt-4o", None, False),
        ("claude-3-5-sonnet-20241022", None, False),
    ],
)
def test_a_model_is_small_by_the_size_its_name_states(model, billions, small):
    assert parameters_in_billions(model) == billions
    assert is_small_model(model) is small


def test_a_low_temperature_only_for_a_small_model_on_this_machine_or_network():
    assert is_local("openai/x", "http://127.0.0.1:8080/v1") and is_local("x", "http://box.local/v1")
    assert is_local("x", "http://192.168.1.9:11434") and not is_local("x", "https://api.x.ai/v1")
    assert model_profile(SMALL, "http://localhost:8080/v1", None, None, None).temperature == 0.2
    assert model_profile(SMALL, "https://api.example.com/v1", None, None, None).temperature is None
    assert (
        model_profile("openai/any", "http://localhost:8080/v1", None, None, None).temperature
        is None
    )


def test_a_whole_call_in_the_middle_of_a_sentence_is_read():
    text = 'To list them I call {"name": "find_files", "arguments": {"pattern": "*"}} now.'
    calls = calls_in_prose(text, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("find_files", '{"pattern": "*"}')]
    assert (
        calls_in_prose('Use {"name": "Ada"} or {"name": "read_file", "arguments": {', TOOLS) == []
    )


@pytest.mark.parametrize(
    "reply",
    [
        "Sure. Let me read calc.py first.",
        "I'll use find_files to list them:",
        "Now I will run the tests.",
    ],
)
def test_a_step_announced_but_not_taken_is_an_attempt(reply):
    problem = attempted_call(reply, TOOLS, truncated=False)
    assert problem is not None and "sent no tool call" in problem


@pytest.mark.parametrize(
    "reply",
    [
        "Fixed add(). Let me know if you need anything else.",
        "I read calc.py and will leave it as it is.",
        "Let me read calc.py. Done: it adds now, and the tests pass.",
    ],
)
def test_a_final_answer_is_not_an_announced_step(reply):
    assert attempted_call(reply, TOOLS, truncated=False) is None


@pytest.mark.parametrize("reply", ["```json\n```", "<tools></tools>", "```"])
def test_an_empty_code_block_is_an_attempt(reply):
    assert "empty code block" in (attempted_call(reply, TOOLS, truncated=False) or "")


def test_whole_files_are_write_calls_only_for_files_of_the_project():
    reply = (
        "FILE: a.py\n```python\nx = 2\n```\n\n**b.py**\n```\ny = 3\n```\n"
        "FILE: elsewhere.py\n```\nz = 1\n```"
    )
    calls = whole_files(reply, {"a.py": 6, "b.py": 6}.get)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("write_file", {"path": "a.py", "content": "x = 2\n"}),
        ("write_file", {"path": "b.py", "content": "y = 3\n"}),
    ]
    assert whole_files(reply, {}.get) == [] and whole_files(reply, None) == []


def test_a_file_named_in_a_sentence_is_given_whole_only_when_the_block_is_about_its_length():
    whole = "Here is the corrected code for `calc.py`:\n\n```python\ndef add(a, b):\n    return a + b\n```"
    calls = whole_files(whole, {"calc.py": 33}.get)
    assert [json.loads(c.arguments)["path"] for c in calls] == ["calc.py"]
    snippet = (
        "To add it to calc.py, you can use the following code:\n```python\ndef sub(a, b): ...\n```"
    )
    assert whole_files(snippet, {"calc.py": 400}.get) == []


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"name": "rename", "arguments": {"old": "a"}}\n```',
        'Now: {"name": "summary", "arguments": "{}"} and that is all.',
        '{"arguments": {"path": "x"}, "name": "open_file"}',
    ],
)
def test_a_call_shaped_object_is_a_call_whatever_its_name(reply):
    assert [call.name for call in call_shaped(reply)] in (["rename"], ["summary"], ["open_file"])


@pytest.mark.parametrize(
    "answer",
    [
        'The config is:\n```json\n{"name": "keel", "version": 2}\n```',
        "The tool is called rename and takes arguments.",
        '{"name": "rename", "arguments": [1, 2]}',
    ],
)
def test_an_object_without_name_and_arguments_is_no_call(answer):
    assert call_shaped(answer) == []


def _after(*messages: Message) -> SessionState:
    return SessionState(
        session_id="s1", task_prompt="fix add", history=(user("fix add"), *messages)
    )


READ = Message(role="tool", content="1  def add(a, b):\n2      return a - b", tool_call_id="c1")
NUDGE = user("No file has changed yet.\nEdit calc.py with edit_file.")


@pytest.mark.parametrize(
    "reply",
    [
        "<status><tokens_used>0</tokens_used></status>",
        "[keel status] Tokens used for this task: 10. Context: 20 of 30 tokens.",
        "<tool_response>\nanything at all\n</tool_response>",
        "No file has changed yet.\nEdit calc.py with edit_file.",
        "No file has changed yet.\n1  def add(a, b):",
        "*** Add File: path/to/EXAMPLE_ONLY_new.py\n+first line",
        "with edit_file.",  # the closing words of keel's last line
    ],
)
def test_a_copy_of_keels_own_text_is_no_answer(reply):
    assert "not an answer" in (echo_of_keel(reply, _after(READ, NUDGE)) or "")


@pytest.mark.parametrize(
    "answer",
    [
        "def add(a, b):",  # quoting the project is an answer
        "1  def add(a, b):\n2      return a - b",
        "The status is fine: <status> tags are not used here.",
        "Edit calc.py with edit_file.",  # a line of keel's without its opening is the model's own
        "ok",
        "The placeholder word is EXAMPLE_ONLY; paths with it are refused.",
    ],
)
def test_an_answer_that_quotes_the_project_is_an_answer(answer):
    assert echo_of_keel(answer, _after(READ, NUDGE)) is None


CORRECTION = user(
    "Nothing was run: your reply gave calc.py back exactly as given.\n"
    'To call a tool, send exactly one JSON object with "name" and "arguments" inside tags, and nothing '
    "after it:\n<tool_call>\n{}\n</tool_call>"
)
FILES = user(
    "The project's files:\n\nFILE: calc.py\n```python\n"
    "# add two numbers the way the old calculator did, one after the other, and return them\n```"
)


def test_a_long_line_of_keels_message_with_an_empty_fence_is_no_answer():
    """The 1.5B answered a correction with the first line of its call example and an opening ```json fence,
    and that ended its task as `completed` with keel's sentence as the answer."""
    echoed = 'To call a tool, send exactly one JSON object with "name" and "arguments" inside tags, and nothing after it:\n```json\n\n'
    assert "not an answer" in (echo_of_keel(echoed, _after(FILES, CORRECTION)) or "")
    # a line of a file keel showed is the project's text: quoting it is an answer, however long
    quoted = (
        "# add two numbers the way the old calculator did, one after the other, and return them"
    )
    assert echo_of_keel(quoted, _after(FILES, CORRECTION)) is None


CHECKS = user(
    "keel checked the files you changed before ending the task, and found problems:\n\n"
    "tests: `pytest -q` failed\n"
    + "".join(f"E   line {n} of the failure\n" for n in range(12))
    + "the function `add` as it is now:\n```python\ndef add(a, b):\n    return a - b\n```\n"
    "Fix these problems. Reply with the new `add`, complete, in a fenced block."
)


def test_keels_message_sent_back_with_a_line_or_two_changed_is_no_answer():
    """The 1.5B sent back keel's message of failed checks whole but for a rule cut short and the last
    line's second sentence, and it went on as the answer; a reply that opens as keel's message and has more
    than a tenth of its lines its own is the model's."""
    lines = CHECKS.content.splitlines()
    echoed = "\n".join([*lines[:3], "E   line 0 of the fail", *lines[4:-1], "Fix these problems."])
    assert "not an answer" in (echo_of_keel(echoed, _after(FILES, CHECKS)) or "")
    mended = "def add(a, b):\n    total = a + b\n    return total"
    answer = "\n".join([*lines[:3], "```python", mended, "```"])
    assert echo_of_keel(answer, _after(FILES, CHECKS)) is None
