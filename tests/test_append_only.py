"""Append-only prompts (`[context] append_only`, `keel.rollouts(append_only=True)`): each call's status line stays
in the history, so every request holds the last one and its reply unchanged, and a rollout's calls join into one
training sequence; without it each request ends with a fresh status line and every call is a sequence of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training_support import ChatTokens, fix_task, ids_of

import keel
from keel.agent.core.context.budget import is_status_line
from keel.agent.core.protocol import TaskFinished
from keel.agent.core.store import read_events


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
    scripted_server, tmp_path, home
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
    scripted_server, tmp_path, home
):
    rollout, model = await run(scripted_server, tmp_path, append_only=False)
    assert model.extended == [False, False, False, False]
    for messages in model.requests:
        statuses = [m for m in messages if is_status_line(str(m.get("content")))]
        assert statuses == [messages[-1]]  # only the request's own, last
    assert [sequence.calls for sequence in rollout.sequences()] == [[0], [1], [2], [3]]


async def test_status_lines_kept_in_the_history_are_no_steps(scripted_server, tmp_path, home):
    kept, _ = await run(scripted_server, tmp_path / "kept", append_only=True)
    fresh, _ = await run(scripted_server, tmp_path / "fresh", append_only=False)
    steps = [
        [e.steps for e in read_events(r.session_log) if isinstance(e, TaskFinished)]
        for r in (kept, fresh)
    ]
    assert steps == [[3], [3]]  # the three reads: four status lines kept would make seven
