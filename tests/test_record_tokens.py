"""Token-exact capture (`--record-tokens`): against a server answering in vLLM's shape, each model call's prompt
ids, completion ids and logprobs land in the session log as the server sent them; a server that does not send
them leaves each turn marked `missing`, never guessed."""

from __future__ import annotations

import asyncio
import json
import math
import random
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel, run_streamed
from local_model_support import PROJECT, linked_home, needs_llama, needs_pieces
from test_context_budget import big_repo, is_summary_request

from keel.agent.core.model.client import ModelClient
from keel.agent.core.model.turn_tokens import turn_tokens
from keel.agent.core.protocol import AssistantMessage, ContextSummarized, TurnTokens
from keel.agent.core.store import read_events
from keel.agent.harness.rollouts.call_tokens import read_calls_tokens
from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    Reply,
    ReplyTokens,
    ScriptedServer,
    ScriptedToolCall,
)

NOTHING_SENT = "the server returned no token ids or logprobs"


def tokens_for(step: int, length: int = 0) -> ReplyTokens:
    """Distinct ids and logprobs for a reply (a longer prompt each step, as a conversation grows)."""
    rng = random.Random(step)
    completion = length or rng.randint(3, 40)
    return ReplyTokens(
        prompt_token_ids=[rng.randrange(150_000) for _ in range(50 + 30 * step)],
        completion_token_ids=[rng.randrange(150_000) for _ in range(completion)],
        logprobs=[-round(rng.random() * 5, 6) for _ in range(completion)],
    )


class ReadsThenAnswers:
    """A model that reads files for `reads` steps, then answers; every reply carries tokens when `send`."""

    def __init__(self, reads: int = 3, send: bool = True) -> None:
        self.reads = reads
        self.send = send
        self.sent: list[ReplyTokens] = []

    def __call__(self, request: ChatRequest) -> Reply:
        tokens = tokens_for(request.step) if self.send else None
        if tokens is not None:
            self.sent.append(tokens)
        if request.step >= self.reads:
            return Reply(text="Both files hold one function each.", tokens=tokens)
        call = ScriptedToolCall(name="read_file", arguments={"path": f"f{request.step % 2}.py"})
        return Reply(tool_calls=[call], tokens=tokens)


def logged(home: Path) -> list[AssistantMessage | ContextSummarized]:
    """The session log's model calls, in order."""
    (log,) = (home / "sessions").glob("*.jsonl")
    return [e for e in read_events(log) if isinstance(e, AssistantMessage | ContextSummarized)]


def as_sent(tokens: ReplyTokens, finish_reason: str | None = None) -> TurnTokens:
    return TurnTokens(
        prompt_token_ids=tokens.prompt_token_ids,
        completion_token_ids=tokens.completion_token_ids,
        logprobs=tokens.logprobs,
        finish_reason=finish_reason,
    )


def replied(server: ScriptedServer) -> list[TurnTokens]:
    """What the server sent each call, as a call records it (each prompt whole)."""
    return [
        as_sent(r.reply.tokens, r.reply.effective_finish_reason())
        for r in server.answered
        if r.reply is not None and r.reply.tokens is not None
    ]


def small_repo(path: Path) -> Path:
    return git_repo(
        path, {"f0.py": "def a():\n    return 0\n", "f1.py": "def b():\n    return 1\n"}
    )


def test_a_recorded_run_logs_each_turns_tokens_as_the_server_sent_them(scripted_server, tmp_path):
    model = ReadsThenAnswers(reads=3)
    server = scripted_server(model)
    home = tmp_path / "home"
    result = run_streamed(
        server.url,
        "--record-tokens",
        "what do the files hold?",
        cwd=small_repo(tmp_path / "r"),
        home=home,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    calls = logged(home)
    assert len(calls) == len(model.sent) == 4
    for number, (event, sent) in enumerate(zip(calls, replied(server), strict=True)):
        assert event.tokens == sent, (
            f"turn {number + 1}"
        )  # no prompt starts with the last: all whole
    assert calls[-1].text == "Both files hold one function each." and calls[0].tool_calls
    for request in server.requests:  # every call asked, in vLLM's parameters, and streamed
        assert request.body["return_token_ids"] is True and request.body["logprobs"] is True
        assert request.body["stream"] is True
    printed = [e for e in result.events if e["type"] == "assistant.message"]
    assert printed[1]["tokens"]["completion_token_ids"] == model.sent[1].completion_token_ids


def test_without_the_flag_nothing_is_asked_and_nothing_logged(scripted_server, tmp_path):
    model = ReadsThenAnswers(reads=2)
    server = scripted_server(model)
    home = tmp_path / "home"
    result = run_streamed(
        server.url, "what do the files hold?", cwd=small_repo(tmp_path / "r"), home=home
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert [event.tokens for event in logged(home)] == [None, None, None]
    for request in server.requests:
        assert "return_token_ids" not in request.body and "logprobs" not in request.body
    (log,) = (home / "sessions").glob("*.jsonl")
    assert "token_ids" not in log.read_text()


def test_a_server_that_ignores_the_request_leaves_each_turn_marked_missing(
    scripted_server, tmp_path
):
    server = scripted_server(ReadsThenAnswers(reads=2, send=False))
    home = tmp_path / "home"
    result = run_streamed(
        server.url,
        "--record-tokens",
        "what do the files hold?",
        cwd=small_repo(tmp_path / "r"),
        home=home,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert server.requests[0].body["return_token_ids"] is True
    assert [event.tokens for event in logged(home)] == [
        TurnTokens(missing=NOTHING_SENT, finish_reason="tool_calls"),
        TurnTokens(missing=NOTHING_SENT, finish_reason="tool_calls"),
        TurnTokens(missing=NOTHING_SENT, finish_reason="stop"),
    ]


class SummarizesOnce:
    """Reads files until the context is summarized, then answers; the summary call's reply has tokens too."""

    def __init__(self) -> None:
        self.summary_tokens: ReplyTokens | None = None
        self.sent: list[ReplyTokens] = []

    def __call__(self, request: ChatRequest) -> Reply:
        tokens = tokens_for(request.step, length=7)
        if is_summary_request(request):
            self.summary_tokens = tokens
            return Reply(text="## Goal\nRead the modules.\n## Done\nRead some.", tokens=tokens)
        self.sent.append(tokens)
        if self.summary_tokens is not None:
            return Reply(text="Read enough of them.", tokens=tokens)
        path = f"mod{request.step % 20}.py"
        call = ScriptedToolCall(name="read_file", arguments={"path": path, "limit": 60})
        return Reply(tool_calls=[call], tokens=tokens)


def test_a_summarization_call_logs_its_tokens_on_context_summarized(scripted_server, tmp_path):
    model = SummarizesOnce()
    server = scripted_server(model)
    home = tmp_path / "home"
    result = run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "--context-window",
        "4096",
        "--record-tokens",
        "--output-format",
        "stream-json",
        "read the modules",
        cwd=big_repo(tmp_path / "repo"),
        home=home,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    calls = logged(home)
    (summary,) = [e for e in calls if isinstance(e, ContextSummarized)]
    assert model.summary_tokens is not None
    assert summary.tokens == as_sent(model.summary_tokens, "stop")
    answers = [e for e in calls if isinstance(e, AssistantMessage)]
    assert [e.tokens for e in answers] == [
        as_sent(t, "tool_calls" if e.tool_calls else "stop")
        for e, t in zip(answers, model.sent, strict=True)
    ]
    summarizing = [r for r in server.requests if is_summary_request(ChatRequest(**r.body))]
    assert summarizing and summarizing[0].body["return_token_ids"] is True


def test_a_whole_completion_in_vllm_shape(scripted_server):
    """Not streamed, vLLM puts the prompt's ids at the top level and the choice's beside its message."""
    sent = tokens_for(1, length=5)
    server = scripted_server([Reply(text="hi", tokens=sent), Reply(text="hi", tokens=sent)])

    def post(body: dict[str, object]) -> dict[str, object]:
        request = urllib.request.Request(
            server.url + "/chat/completions",
            json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": "x"}], **body}
            ).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    whole = post({"return_token_ids": True, "logprobs": True})
    assert whole["prompt_token_ids"] == sent.prompt_token_ids
    choice = whole["choices"][0]  # type: ignore[index]
    assert choice["token_ids"] == sent.completion_token_ids
    assert [entry["logprob"] for entry in choice["logprobs"]["content"]] == sent.logprobs
    plain = post({})
    assert "prompt_token_ids" not in plain and plain["choices"][0]["logprobs"] is None  # type: ignore[index]


def call_once(url: str, via_litellm: bool) -> TurnTokens | None:
    async def call() -> TurnTokens | None:
        client = ModelClient(model="openai/m", api_base=url, retries=0, record_tokens=True)
        if via_litellm:
            client._direct = None  # as KEEL_TRANSPORT=litellm would
        try:
            reply = await client.complete([{"role": "user", "content": "hi"}], None, lambda _: None)
        finally:
            await client.aclose()
        return reply.tokens

    return asyncio.run(call())


def test_through_litellm_what_it_drops_is_marked_missing(scripted_server):
    """litellm keeps the prompt's ids and the logprobs but drops the ids of the stream's last chunk: the turn
    says so instead of passing short ids off as the whole."""
    sent = tokens_for(2, length=9)
    server = scripted_server([Reply(text="some answer text", tokens=sent)] * 2)
    assert call_once(server.url, via_litellm=False) == as_sent(sent, "stop")
    through = call_once(server.url, via_litellm=True)
    assert through is not None and through.prompt_token_ids == sent.prompt_token_ids
    assert through.logprobs == sent.logprobs
    assert through.missing.startswith("the server returned 9 logprobs for")
    assert "through litellm" in through.missing
    assert server.requests[1].body["return_token_ids"] is True


def test_what_is_missing_is_named_part_by_part():
    assert turn_tokens(None, None, None).missing == NOTHING_SENT
    assert turn_tokens([1], [2], None).missing == "the server returned no logprobs"
    assert (
        turn_tokens(None, [2], None).missing
        == "the server returned no prompt token ids and no logprobs"
    )
    assert turn_tokens([1], [2, 3], [-0.5]).missing == (
        "the server returned 1 logprobs for 2 completion tokens"
    )
    assert turn_tokens([1], [2], [-0.5], "length", "v3") == TurnTokens(
        prompt_token_ids=[1],
        completion_token_ids=[2],
        logprobs=[-0.5],
        finish_reason="length",
        policy_version="v3",
    )


def probe(model: Path, decode: list[list[int]], score: TurnTokens) -> dict[str, object]:
    """Decoded texts, and llama.cpp's own logprobs of `score`'s completion, from a child process."""
    asked = {
        "model": str(model),
        "decode": decode,
        "score": {"prompt": score.prompt_token_ids, "completion": score.completion_token_ids},
    }
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("token_probe.py"))],
        input=json.dumps(asked),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.timeout(900)
@needs_llama
@needs_pieces
def test_the_embedded_model_records_its_tokens_and_their_logprobs(assembled_default, tmp_path):
    """Each turn's ids decode to what the log holds, and the logprobs are the model's: llama.cpp reading the
    same sequence as the worker did, with every position's logits kept, gives the same values."""
    home = linked_home(assembled_default, tmp_path / "home")
    result = run_keel(
        "run",
        "--record-tokens",
        "--output-format",
        "stream-json",
        "What files are in this directory? Use a tool.",
        cwd=git_repo(tmp_path / "repo", PROJECT),
        home=home,
        timeout=840,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    events = logged(home)
    calls = [e for e in events if isinstance(e, AssistantMessage)]
    assert calls and all(e.tokens is not None for e in calls)
    (log,) = (home / "sessions").glob("*.jsonl")
    whole = {call.index: call for call in read_calls_tokens(log)}  # each prompt whole, as sent
    complete = [
        e.model_copy(
            update={"tokens": e.tokens.model_copy(update={"prompt_token_ids": whole[i].prompt_ids})}
        )
        for i, e in enumerate(events)
        if isinstance(e, AssistantMessage) and e.tokens is not None and not e.tokens.missing
    ]
    assert complete, [e.tokens.missing for e in calls if e.tokens]
    for event in complete:
        tokens = event.tokens
        assert tokens is not None and tokens.prompt_token_ids and tokens.completion_token_ids
        assert tokens.logprobs is not None
        assert len(tokens.logprobs) == len(tokens.completion_token_ids)
        assert all(math.isfinite(p) and p <= 0 for p in tokens.logprobs)
    shortest = min(complete, key=lambda e: len(e.tokens.prompt_token_ids or []) if e.tokens else 0)
    assert shortest.tokens is not None
    found = probe(
        assembled_default,
        [e.tokens.completion_token_ids or [] for e in complete if e.tokens]
        + [e.tokens.prompt_token_ids or [] for e in complete if e.tokens],
        shortest.tokens,
    )
    texts = found["texts"]
    assert isinstance(texts, list)
    replies, prompts = texts[: len(complete)], texts[len(complete) :]
    for event, reply, prompt in zip(complete, replies, prompts, strict=True):
        assert prompt.endswith("<|im_start|>assistant\n")
        if event.tool_calls:
            assert event.tool_calls[0].name in reply
        else:
            assert reply.removesuffix("<|im_end|>") == event.text
    assert reply.endswith("<|im_end|>")  # the end-of-turn token the model sampled is recorded
    theirs = found["logprobs"]
    assert isinstance(theirs, list) and shortest.tokens.logprobs is not None
    assert len(theirs) == len(shortest.tokens.logprobs)
    assert max(abs(a - b) for a, b in zip(theirs, shortest.tokens.logprobs, strict=True)) < 1e-3


def test_a_logged_turn_keeps_its_tokens_exact_while_its_text_is_redacted(tmp_path):
    """Only the text of a line is scanned for secrets; the token ids are written as they came."""
    from keel.agent.core.model.redact import Redactor
    from keel.agent.core.store import SessionLog

    secret = "hunter2-very-secret"
    log = SessionLog(tmp_path / "s.jsonl", Redactor((secret,)))
    sent = as_sent(tokens_for(3))
    logged_event = log.append(AssistantMessage(text=f"the key is {secret}", tokens=sent))
    log.close()
    (line,) = read_events(tmp_path / "s.jsonl")
    assert isinstance(line, AssistantMessage) and secret not in line.text
    assert line.tokens == sent and logged_event.tokens == sent
    assert isinstance(logged_event, AssistantMessage) and secret not in logged_event.text


def test_token_ids_that_are_not_numbers_are_missing_not_logged():
    assert turn_tokens(["a", "b"], [1], [-0.5]) == TurnTokens(
        missing="the server's token ids or logprobs are not numbers"
    )
