"""What a 0.5B model writes when it calls tools, and how keel reads it: pure functions, no model needed."""

from __future__ import annotations

import json

import pytest

from keel.agent.core.model.local.compact_tools import (
    call_schema,
    compact_tool_schemas,
    first_sentence,
)
from keel.agent.core.model.local.engine import template_messages
from keel.agent.core.model.local.reply_split import ReplySplitter, unwrap_nested_call
from keel.agent.core.text_protocol import ParsedCall, parse_tool_calls
from keel.tools import default_tools
from keel.tools.registry import ToolRegistry

TOOL_NAMES = {"read_file", "find_files", "search"}


def split(*pieces: str) -> tuple[str, ReplySplitter]:
    """Feed pieces as a stream would; returns what was shown while streaming, and the splitter."""
    splitter = ReplySplitter()
    shown = "".join(splitter.feed(piece) for piece in pieces)
    return shown, splitter


# ------------------------------------------------------------------ shapes the model writes


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "find_files", "arguments": {"pattern": "*"}}',
        '```json\n{"name": "find_files", "arguments": {"pattern": "*"}}\n```',
        '{"name": "find_files", "arguments": {"pattern": "*"}',  # the last brace forgotten
        '<tool_call>\n{"name": "find_files", "arguments": {"pattern": "*"}}\n</tool_call>',
        '<tool_call>\n{"name": "find_files", "arguments": {"pattern": "*"}}',  # no closing tag
        '{"name": "find_files", "arguments": "{\\"pattern\\": \\"*\\"}"}',  # arguments as a string
        '{\n  "name": "find_files",\n  "arguments": {\n    "pattern": "*"\n  }\n}',
    ],
)
def test_each_shape_reads_as_the_same_call(reply):
    calls = parse_tool_calls(reply)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("find_files", {"pattern": "*"})]


def test_a_made_up_tool_name_is_read_as_written_so_the_registry_can_refuse_it():
    calls = parse_tool_calls('{"name": "list_files", "arguments": {"path": "."}}')
    assert calls[0].name == "list_files"


def test_a_call_wrapped_in_a_made_up_label_is_the_inner_call():
    outer = ParsedCall(
        name="list_files",
        arguments=json.dumps({"name": "find_files", "arguments": {"pattern": "*"}}),
    )
    inner = unwrap_nested_call(outer, TOOL_NAMES)
    assert (inner.name, json.loads(inner.arguments)) == ("find_files", {"pattern": "*"})


def test_an_unknown_name_without_a_known_inner_call_stays_unknown():
    call = ParsedCall(name="list_files", arguments='{"path": "."}')
    assert unwrap_nested_call(call, TOOL_NAMES) == call
    known = ParsedCall(name="search", arguments='{"name": "read_file", "arguments": {}}')
    assert unwrap_nested_call(known, TOOL_NAMES) == known


# ------------------------------------------------------------------ streaming: prose out, calls held


def test_prose_is_shown_as_it_streams():
    shown, splitter = split("The files ", "are a.py ", "and b.py.")
    assert shown == "The files are a.py and b.py."
    assert splitter.finish().calls == [] and splitter.finish().content == ""


def test_a_bare_call_is_held_back_and_read_at_the_end():
    shown, splitter = split('{"na', 'me": "search", "arguments": ', '{"pattern": "x"}}')
    assert shown == ""
    assert splitter.opens_call() and splitter.holds_complete_call()
    reply = splitter.finish()
    assert [c.name for c in reply.calls] == ["search"] and reply.content == ""


def test_prose_before_a_call_on_its_own_line_is_shown_and_the_call_held():
    shown, splitter = split(
        "Let me look.\n", '{"name": "find_files", ', '"arguments": {"pattern": "*"}}'
    )
    assert shown == "Let me look.\n"
    assert [c.name for c in splitter.finish().calls] == ["find_files"]


def test_a_tag_split_across_pieces_is_not_shown():
    shown, splitter = split(
        "<tool", "_call>\n", '{"name": "search", "arguments": {"pattern": "a"}}'
    )
    assert shown == ""
    assert splitter.opener == "<tool_call>" and splitter.opens_call()


def test_a_brace_inside_a_sentence_is_prose():
    shown, splitter = split("Use a dict like {a: 1} here.")
    assert shown == "Use a dict like {a: 1} here."
    assert splitter.opener is None


def test_a_code_block_streams_once_its_first_line_shows_it_is_not_json():
    shown, splitter = split("Here:\n", "```py", "thon\n", "print(1)\n", "```")
    assert shown == "Here:\n```python\nprint(1)\n"
    assert (
        splitter.opener == "```" and not splitter.opens_call()
    )  # the closing fence, held to the end
    reply = splitter.finish()
    assert reply.calls == [] and reply.content == "```"
    shown, splitter = split("```python\nprint(1)\n```\nThat prints 1.")
    assert shown == "```python\nprint(1)\n```\nThat prints 1." and splitter.finish().content == ""


def test_a_fence_around_a_json_object_opens_a_call():
    _, splitter = split("```json\n", "{")
    assert splitter.opens_call()


def test_a_call_is_complete_only_when_its_object_closes_outside_strings():
    _, splitter = split('{"name": "search", "arguments": {"pattern": "a}"')
    assert not splitter.holds_complete_call()
    splitter.feed("}")
    assert not splitter.holds_complete_call()  # the outer object is still open
    splitter.feed("}")
    assert splitter.holds_complete_call()


def test_json_that_is_not_a_call_comes_back_as_text():
    _, splitter = split('{"weekday": "Monday"}')
    reply = splitter.finish()
    assert reply.calls == [] and reply.content == '{"weekday": "Monday"}'


# ------------------------------------------------------------------ the model's second look


def history(name: str, arguments: str) -> list[dict]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return [
        {"role": "user", "content": "what files?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    ]


def test_history_is_shaped_for_the_chat_template():
    shaped = template_messages(history("find_files", '{"pattern": "*"}'))
    assert shaped[1]["content"] == ""
    assert shaped[1]["tool_calls"][0]["function"]["arguments"] == {"pattern": "*"}
    broken = template_messages(history("find_files", '{"pattern": '))
    assert broken[1]["tool_calls"][0]["function"]["arguments"] == '{"pattern": '


# ------------------------------------------------------------------ compact schemas and the call grammar


def test_first_sentence_keeps_one_sentence_without_examples():
    assert first_sentence("Read a file. Lines are numbered.") == "Read a file."
    assert first_sentence("Glob for paths, e.g. '*.py' or 'src/**'. More.") == "Glob for paths."
    assert (
        first_sentence("Look here (1-based): the rest\nsecond line")
        == "Look here (1-based): the rest"
    )


def test_compact_schemas_keep_every_tool_and_argument_but_say_less():
    full = ToolRegistry(default_tools()).schemas()
    compact = compact_tool_schemas(full)
    assert [t["function"]["name"] for t in compact] == [t["function"]["name"] for t in full]
    for before, after in zip(full, compact):
        assert list(after["function"]["parameters"].get("properties", {})) == list(
            before["function"]["parameters"].get("properties", {})
        )
        assert after["function"]["parameters"].get("required") == before["function"][
            "parameters"
        ].get("required")
    text = json.dumps(compact)
    assert len(text) < 0.7 * len(json.dumps(full))
    assert '"title"' not in text and "e.g." not in text and '"null"' not in text


def test_call_schema_names_each_tool_first_and_its_arguments():
    tools = compact_tool_schemas(ToolRegistry(default_tools()).schemas())
    schema = json.loads(call_schema(tools))
    names = [option["properties"]["name"]["const"] for option in schema["anyOf"]]
    assert names == [t["function"]["name"] for t in tools]
    assert all(list(option["properties"]) == ["name", "arguments"] for option in schema["anyOf"])
