"""The scripted model server through real litellm: streams, tool calls, usage and errors as keel's client sees
them."""

from __future__ import annotations

import json

import litellm
import pytest
from litellm.exceptions import MidStreamFallbackError
from scripted_requests import EDIT_ARGS, TOOLS, USER

from keel.agent.harness.testing.scripted_server import (
    Reply,
    ScriptedToolCall,
)

litellm.suppress_debug_info = True


def litellm_options(server) -> dict:
    return {
        "model": "openai/any",
        "api_base": server.url,
        "api_key": "sk-test",
        "messages": USER,
        "num_retries": 0,
        "max_retries": 0,
        "timeout": 30,
    }


async def test_litellm_stream_reassembles_text_tool_calls_and_usage(scripted_server):
    calls = [
        ScriptedToolCall(name="edit_file", arguments=EDIT_ARGS),
        ScriptedToolCall(name="read_file", arguments={"path": "calc.py"}),
    ]
    server = scripted_server([Reply(text="Let me fix the sign.", tool_calls=calls)])
    stream = await litellm.acompletion(
        **litellm_options(server),
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    text, names, arguments, usage, finish = "", {}, {}, None, None
    async for chunk in stream:
        usage = getattr(chunk, "usage", None) or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                if call.function.name:
                    names[call.index] = call.function.name
                arguments[call.index] = arguments.get(call.index, "") + (
                    call.function.arguments or ""
                )
    assert text == "Let me fix the sign."
    assert names == {0: "edit_file", 1: "read_file"}
    assert json.loads(arguments[0]) == EDIT_ARGS
    assert json.loads(arguments[1]) == {"path": "calc.py"}
    assert finish == "tool_calls"
    assert usage.prompt_tokens == server.requests[0].prompt_tokens
    assert usage.completion_tokens > 0
    sent = server.requests[0].body
    assert sent["stream"] is True and sent["model"] == "any"
    assert sent["tools"][0]["function"]["name"] == "read_file"


async def test_litellm_non_streaming_tool_call(scripted_server):
    server = scripted_server(
        [Reply(tool_calls=[ScriptedToolCall(name="edit_file", arguments=EDIT_ARGS)])]
    )
    response = await litellm.acompletion(**litellm_options(server), tools=TOOLS)
    call = response.choices[0].message.tool_calls[0]
    assert call.function.name == "edit_file" and json.loads(call.function.arguments) == EDIT_ARGS
    assert response.usage.prompt_tokens == server.requests[0].prompt_tokens


@pytest.mark.parametrize(
    ("reply", "error_class", "message_part"),
    [
        (Reply(error=429), litellm.RateLimitError, "Rate limit"),
        (Reply(error=500), litellm.InternalServerError, "server had an error"),
        (Reply(error=503), litellm.ServiceUnavailableError, "overloaded"),
        (Reply(error=400), litellm.ContextWindowExceededError, "maximum context length"),
        # litellm's OpenAI path reports a connection closed before any response as a 500
        (Reply(drop=True), litellm.InternalServerError, "Connection error"),
    ],
)
async def test_litellm_raises_its_error_classes(scripted_server, reply, error_class, message_part):
    server = scripted_server([reply, "unused"])
    with pytest.raises(error_class) as raised:
        await litellm.acompletion(**litellm_options(server))
    assert message_part in str(raised.value)
    assert len(server.requests) == 1  # no retries behind our back


async def test_litellm_mid_stream_drop_raises_with_the_text_so_far(scripted_server):
    server = scripted_server([Reply(text="abcdefgh" * 4, drop_after_chunks=3)])
    stream = await litellm.acompletion(**litellm_options(server), stream=True)
    received = ""
    with pytest.raises(MidStreamFallbackError) as raised:
        async for chunk in stream:
            received += chunk.choices[0].delta.content or ""
    assert received == "abcdefgh" * 2
    assert isinstance(raised.value.original_exception, litellm.APIConnectionError)
    assert isinstance(raised.value, litellm.ServiceUnavailableError)
