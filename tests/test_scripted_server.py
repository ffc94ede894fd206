"""The scripted model server: raw HTTP shapes with httpx, and the real litellm path against it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import litellm
import pytest
from scripted_requests import EDIT_ARGS, TOOLS, USER

from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    Reply,
    ScriptedToolCall,
    UsageOverride,
)
from keel.agent.harness.testing.scripted_wire import estimate_prompt_tokens

litellm.suppress_debug_info = True


def post(server, **body) -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json={"model": "m", **body}, timeout=10)


def stream_events(server, **body) -> list[dict | str]:
    """The decoded `data:` payloads of a streamed request ([DONE] stays a string)."""
    events: list[dict | str] = []
    with httpx.stream(
        "POST", f"{server.url}/chat/completions", json={"model": "m", "stream": True, **body}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                payload = line.removeprefix("data: ")
                events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


# ---------------------------------------------------------------- raw HTTP


def test_plain_reply_has_openai_shape_and_estimated_usage(scripted_server):
    server = scripted_server(["The fix is in calc.py."])
    response = post(server, messages=USER, tools=TOOLS)
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["model"] == "m"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "The fix is in calc.py."}
    assert choice["finish_reason"] == "stop"
    expected_prompt = estimate_prompt_tokens({"messages": USER, "tools": TOOLS})
    assert expected_prompt > estimate_prompt_tokens({"messages": USER}) > 0
    assert body["usage"]["prompt_tokens"] == expected_prompt
    assert body["usage"]["completion_tokens"] == len("The fix is in calc.py.") // 4 + 1
    assert body["usage"]["total_tokens"] == expected_prompt + body["usage"]["completion_tokens"]


def test_replies_are_consumed_in_order_then_the_fallback(scripted_server):
    server = scripted_server(["one", Reply(text="two")])
    server.add_replies([{"text": "three"}])
    texts = [post(server, messages=USER).json()["choices"][0]["message"]["content"] for _ in "1234"]
    assert texts == ["one", "two", "three", "done"]
    custom = scripted_server([], fallback=Reply(error=500))
    assert post(custom, messages=USER).status_code == 500


def test_non_streaming_tool_calls_keep_raw_string_arguments(scripted_server):
    calls = [
        ScriptedToolCall(name="edit_file", arguments=EDIT_ARGS),
        ScriptedToolCall(name="read_file", arguments='{"path": "calc.py"'),
    ]
    server = scripted_server([Reply(tool_calls=calls)])
    body = post(server, messages=USER).json()
    message = body["choices"][0]["message"]
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert message["content"] is None
    assert [call["function"]["name"] for call in message["tool_calls"]] == [
        "edit_file",
        "read_file",
    ]
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == EDIT_ARGS
    assert message["tool_calls"][1]["function"]["arguments"] == '{"path": "calc.py"'
    assert len({call["id"] for call in message["tool_calls"]}) == 2


def test_streamed_text_comes_in_several_chunks_with_usage_last(scripted_server):
    text = "I will read calc.py first, then fix the subtraction."
    server = scripted_server([text, text])
    events = stream_events(server, messages=USER, stream_options={"include_usage": True})
    assert events[-1] == "[DONE]"
    usage_chunk = events[-2]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["total_tokens"] > 0
    chunks = events[:-2]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    pieces = [c["choices"][0]["delta"].get("content") or "" for c in chunks]
    assert "".join(pieces) == text
    assert sum(1 for piece in pieces if piece) >= 5
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["usage"] is None for c in chunks)

    without_usage = stream_events(server, messages=USER)
    assert all("usage" not in event for event in without_usage[:-1])
    assert without_usage[-2]["choices"][0]["finish_reason"] == "stop"


def test_streamed_tool_call_arguments_come_in_many_pieces(scripted_server):
    calls = [
        ScriptedToolCall(name="edit_file", arguments=EDIT_ARGS),
        ScriptedToolCall(name="read_file", arguments={"path": "calc.py"}, id="call_custom"),
    ]
    server = scripted_server([Reply(text="Editing.", tool_calls=calls)])
    events = stream_events(server, messages=USER)
    deltas = [e["choices"][0]["delta"] for e in events[:-1] if e["choices"]]
    call_deltas = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    by_index: dict[int, list[dict]] = {0: [], 1: []}
    for delta in call_deltas:
        by_index[delta["index"]].append(delta)
    for index, call in enumerate(calls):
        first, *rest = by_index[index]
        assert first["type"] == "function" and first["function"]["name"] == call.name
        assert first["function"]["arguments"]  # the opening chunk already carries a piece
        assert all(set(piece) == {"index", "function"} for piece in rest)
        assert all(set(piece["function"]) == {"arguments"} for piece in rest)
        arguments = "".join(d["function"]["arguments"] for d in [first, *rest])
        assert json.loads(arguments) == call.arguments
    assert len(by_index[0]) > 10
    assert by_index[1][0]["id"] == "call_custom"
    assert by_index[0][0]["id"] != by_index[1][0]["id"]
    assert events[-2]["choices"][0]["finish_reason"] == "tool_calls"


def test_usage_override_replaces_only_the_given_figures(scripted_server):
    override = UsageOverride(prompt_tokens=1000, cached_tokens=800)
    server = scripted_server([Reply(text="ok", usage=override)])
    usage = post(server, messages=USER).json()["usage"]
    assert usage["prompt_tokens"] == 1000
    assert usage["completion_tokens"] == 1
    assert usage["total_tokens"] == 1001
    assert usage["prompt_tokens_details"] == {"cached_tokens": 800}


def test_scripted_errors_have_openai_bodies(scripted_server):
    server = scripted_server([Reply(error=429, retry_after=2), Reply(error=503), Reply(error=400)])
    limited = post(server, messages=USER)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert post(server, messages=USER).json()["error"]["type"] == "server_error"
    too_long = post(server, messages=USER)
    assert too_long.status_code == 400
    error = too_long.json()["error"]
    assert error["code"] == "context_length_exceeded" and error["param"] == "messages"
    assert error["message"].startswith("This model's maximum context length is 32768 tokens. ")
    assert "However, your messages resulted in 32769 tokens." in error["message"]


def test_context_limit_rejects_big_prompts_without_consuming_the_script(scripted_server):
    server = scripted_server(["first", "second"], context_limit=50)
    big = [{"role": "user", "content": "x" * 400}]
    rejected = post(server, messages=big)
    assert rejected.status_code == 400
    message = rejected.json()["error"]["message"]
    assert message.startswith("This model's maximum context length is 50 tokens. However, your ")
    assert "messages resulted in 100 tokens." in message
    assert post(server, messages=USER).json()["choices"][0]["message"]["content"] == "first"
    assert [r.fault for r in server.requests] == ["context_length_exceeded", None]
    assert server.replies_left == 1


def test_fail_rate_is_seeded_and_faults_never_consume_replies(scripted_server):
    def run(seed: int) -> tuple[list[str | None], list[str]]:
        server = scripted_server(["a", "b", "c"], fail_rate=0.5, seed=seed, fallback="end")
        texts: list[str] = []
        with httpx.Client(base_url=server.url, timeout=10) as client:
            for _ in range(30):
                try:
                    response = client.post("/chat/completions", json={"messages": USER})
                except httpx.HTTPError:
                    continue
                if response.status_code == 200:
                    texts.append(response.json()["choices"][0]["message"]["content"])
        return [r.fault for r in server.requests], texts

    faults, texts = run(seed=7)
    assert texts[:3] == ["a", "b", "c"] and set(texts[3:]) == {"end"}
    assert {"429", "500", "drop"} <= set(faults)
    assert run(seed=7)[0] == faults
    assert run(seed=8)[0] != faults


def test_injected_faults_come_first_and_a_retry_gets_the_same_reply(scripted_server):
    server = scripted_server(["answer"])
    server.inject_faults("503", "drop")
    assert post(server, messages=USER).status_code == 503
    with pytest.raises(httpx.RemoteProtocolError):
        post(server, messages=USER)
    assert post(server, messages=USER).json()["choices"][0]["message"]["content"] == "answer"
    assert [(r.answered, r.fault) for r in server.requests] == [
        (False, "503"),
        (False, "drop"),
        (True, None),
    ]


def test_unknown_fault_kinds_are_refused(scripted_server):
    server = scripted_server()
    with pytest.raises(ValueError, match="unknown fault kind 'timeout'"):
        server.inject_faults("timeout")
    with pytest.raises(ValueError, match="unknown fault kind '200'"):
        scripted_server(fault_kinds=["429", "200"])


def test_drops_before_and_in_the_middle_of_a_stream(scripted_server):
    server = scripted_server(
        [Reply(drop=True), Reply(text="a long streamed answer", drop_after_chunks=3)]
    )
    with pytest.raises(httpx.RemoteProtocolError):
        post(server, messages=USER)
    received: list[str] = []
    request = {"method": "POST", "url": f"{server.url}/chat/completions", "json": {"stream": True}}
    with pytest.raises(httpx.RemoteProtocolError), httpx.stream(**request) as stream:
        received.extend(stream.iter_lines())
    data_lines = [line for line in received if line.startswith("data: ")]
    assert len(data_lines) == 3
    assert all(r.answered for r in server.requests)


def test_delay_holds_the_response_back(scripted_server):
    server = scripted_server([Reply(text="late", delay=3)])
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/chat/completions", json={"messages": USER}, timeout=0.2)


def test_responder_sees_the_request_and_its_step(scripted_server):
    seen: list[tuple[int, str, int]] = []

    def responder(request: ChatRequest) -> Reply | str:
        seen.append((request.step, request.last_text("user"), len(request.tools or [])))
        if request.step < 2:
            return Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "x"})])
        return f"finished after {request.step} steps"

    server = scripted_server(responder)
    for _ in range(3):
        body = post(server, messages=USER, tools=TOOLS).json()
    assert body["choices"][0]["message"]["content"] == "finished after 2 steps"
    assert seen == [(step, USER[0]["content"], 1) for step in range(3)]
    assert server.requests[0].tool_names == ["read_file"]
    assert server.requests[0].messages == USER


def test_a_raising_responder_answers_500_and_is_kept(scripted_server):
    server = scripted_server(lambda request: 1 / 0)
    response = post(server, messages=USER)
    assert response.status_code == 500 and "ZeroDivisionError" in response.text
    assert isinstance(server.responder_errors.pop(), ZeroDivisionError)


def test_models_route_and_unknown_routes(scripted_server):
    server = scripted_server(model_name="tiny")
    assert httpx.get(f"{server.url}/models").json()["data"][0]["id"] == "tiny"
    assert httpx.post(f"{server.url}/embeddings", json={}).status_code == 404
    bare = httpx.post(f"http://127.0.0.1:{server.port}/chat/completions", json={"messages": USER})
    assert bare.json()["choices"][0]["message"]["content"] == "done"


def test_runs_by_hand_from_a_json_script(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["hello", {"tool_calls": [{"name": "read_file"}]}]))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "keel.agent.harness.testing.scripted_server",
            str(script),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        first = httpx.post(f"{url}/chat/completions", json={"messages": USER}, timeout=10).json()
        second = httpx.post(f"{url}/chat/completions", json={"messages": USER}, timeout=10).json()
        assert first["choices"][0]["message"]["content"] == "hello"
        assert second["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == "{}"
    finally:
        process.send_signal(subprocess.signal.SIGINT)
        assert process.wait(timeout=10) == 0
    assert "#2" in process.stderr.read()
