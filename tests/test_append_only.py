"""Append-only prompts (`[context] append_only`, `keel.rollouts(append_only=True)`): each call's status line stays
in the history, so every request holds the last one and its reply unchanged, and a rollout's calls join into one
training sequence; without it each request ends with a fresh status line and every call is a sequence of its own."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from training_support import fix_task

import keel
from keel.agent.core.context.budget import is_status_line
from keel.agent.core.protocol import TaskFinished
from keel.agent.core.store import read_events
from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    Reply,
    ReplyTokens,
    ScriptedToolCall,
)


def ids_of(messages: list[dict[str, Any]]) -> list[int]:
    """A stand-in tokenizer: the same messages give the same ids, five per message."""
    ids: list[int] = []
    for message in messages:
        digest = hashlib.sha256(json.dumps(message, sort_keys=True).encode()).digest()
        ids += [int.from_bytes(digest[n : n + 3], "big") for n in range(0, 15, 3)]
    return ids


class ChatTokens:
    """A vLLM-shaped model whose prompt ids follow the messages it is sent, as a server applying a chat template
    gives them: a request holding the last request's messages and then the reply is the last prompt and
    completion plus the ids of what it adds; any other request is tokenized afresh. Reads calc.py `reads`
    times, then answers."""

    def __init__(self, reads: int) -> None:
        self.reads = reads
        self.lock = threading.Lock()
        self.requests: list[list[dict[str, Any]]] = []
        self.extended: list[bool] = []
        self.context: list[int] = []
        self.calls = 0

    def __call__(self, request: ChatRequest) -> Reply:
        with self.lock:
            messages = request.messages
            last = self.requests[-1] if self.requests else None
            extends = (
                last is not None
                and messages[: len(last)] == last
                and len(messages) > len(last)
                and messages[len(last)].get("role") == "assistant"
            )
            if extends and last is not None:
                prompt = self.context + ids_of(messages[len(last) + 1 :])
            else:
                prompt = ids_of(messages)
            self.requests.append(messages)
            self.extended.append(extends)
            self.calls += 1
            completion = [1000 + self.calls, 2000 + self.calls]
            tokens = ReplyTokens(
                prompt_token_ids=prompt, completion_token_ids=completion, logprobs=[-0.5, -0.25]
            )
            self.context = prompt + completion
            if self.calls <= self.reads:
                call = ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})
                return Reply(tool_calls=[call], tokens=tokens)
            return Reply(text="It subtracts.", tokens=tokens)


async def run(scripted_server, tmp_path: Path, append_only: bool) -> tuple[Any, ChatTokens]:
    model = ChatTokens(reads=3)
    server = scripted_server(model)
    rollout = await keel.rollout(
        fix_task(tmp_path),
        model="openai/any",
        api_base=server.url,
        out=tmp_path / "out",
        append_only=append_only,
    )
    assert rollout.status == "completed", rollout.reason
    return rollout, model


async def test_with_append_only_prompts_each_request_extends_the_last_and_one_sequence_is_the_rollout(
    scripted_server, tmp_path
):
    rollout, model = await run(scripted_server, tmp_path, append_only=True)
    assert model.extended == [False, True, True, True]
    statuses = [
        [m["content"] for m in messages if is_status_line(str(m.get("content")))]
        for messages in model.requests
    ]
    assert [len(found) for found in statuses] == [
        1,
        2,
        3,
        4,
    ]  # each call's line, kept as it was sent
    assert all(messages[-1]["role"] == "user" for messages in model.requests)
    (sequence,) = rollout.sequences()
    assert sequence.calls == [0, 1, 2, 3]
    assert sequence.prompt_ids == ids_of(model.requests[0])
    assert (
        sequence.prompt_ids + sequence.response_ids == model.context
    )  # the last prompt and its reply
    sampled = [
        t for t, bit in zip(sequence.response_ids, sequence.response_mask, strict=True) if bit
    ]
    assert sampled == [token for n in range(1, 5) for token in (1000 + n, 2000 + n)]


async def test_without_it_each_request_ends_with_a_fresh_status_line_and_each_call_is_a_sequence(
    scripted_server, tmp_path
):
    rollout, model = await run(scripted_server, tmp_path, append_only=False)
    assert model.extended == [False, False, False, False]
    for messages in model.requests:
        statuses = [m for m in messages if is_status_line(str(m.get("content")))]
        assert statuses == [messages[-1]]  # only the request's own, last
    assert [sequence.calls for sequence in rollout.sequences()] == [[0], [1], [2], [3]]


async def test_status_lines_kept_in_the_history_are_no_steps(scripted_server, tmp_path):
    kept, _ = await run(scripted_server, tmp_path / "kept", append_only=True)
    fresh, _ = await run(scripted_server, tmp_path / "fresh", append_only=False)
    steps = [
        [e.steps for e in read_events(r.session_log) if isinstance(e, TaskFinished)]
        for r in (kept, fresh)
    ]
    assert steps == [[3], [3]]  # the three reads: four status lines kept would make seven
