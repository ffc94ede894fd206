"""Token-exact rollouts logged incrementally: each call's prompt ids are rebuilt from the session log exactly as
the server sent them, call by call, across self-summaries and masking passes, and the log holds each
prompt only as what it adds to the call before it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from keel_cli import run_keel
from test_context_budget import LongSession, big_repo, is_summary_request

from keel.agent.core.model.prompt_chain import PromptChain
from keel.agent.core.model.turn_tokens import TokenCollector
from keel.agent.core.protocol import (
    AssistantMessage,
    ContextMasked,
    ContextSummarized,
    TurnTokens,
)
from keel.agent.core.store import read_events
from keel.agent.harness.rollouts.atif import log_trajectories
from keel.agent.harness.rollouts.call_tokens import (
    CallTokens,
    PromptRebuilder,
    calls_tokens,
    read_calls_tokens,
)
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply
from keel.agent.harness.testing.scripted_tokens import template_tokens
from keel.agent.harness.testing.scripted_wire import as_reply


class WithTemplateTokens:
    """A scripted model whose every reply carries the ids a chat template gives its request and its text, and
    a policy version header (the number of the call)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, request: ChatRequest) -> Reply:
        reply = as_reply(self.inner(request))
        calls = [(call.name, call.arguments_text()) for call in reply.tool_calls]
        body = {"messages": request.messages, "tools": request.tools}
        tokens = template_tokens(body, reply.text, calls)
        headers = {"X-Policy-Version": f"v{request.step}"}
        return reply.model_copy(update={"tokens": tokens, "headers": headers})


def session_log(home: Path) -> Path:
    (log,) = (home / "sessions").glob("*.jsonl")
    return log


def run_long(server_url: str, repo: Path, home: Path, window: int) -> None:
    result = run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server_url,
        "--context-window",
        str(window),
        "--record-tokens",
        "--budget",
        "10000000",
        "--output-format",
        "stream-json",
        "read every module",
        cwd=repo,
        home=home,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_every_calls_ids_are_rebuilt_as_sent_across_summaries_and_masking(
    scripted_server, tmp_path
):
    server = scripted_server(WithTemplateTokens(LongSession(steps=40)), context_limit=8000)
    home = tmp_path / "home"
    run_long(server.url, big_repo(tmp_path / "repo"), home, window=8000)
    events = read_events(session_log(home))
    assert any(isinstance(e, ContextMasked) for e in events)
    assert any(isinstance(e, ContextSummarized) for e in events)
    calls = read_calls_tokens(session_log(home))
    sent = server.answered
    assert len(calls) == len(sent) > 40
    previous: list[int] | None = None
    for number, (call, request) in enumerate(zip(calls, sent, strict=True)):
        reply = request.reply
        assert reply is not None and reply.tokens is not None
        summary = is_summary_request(ChatRequest(**request.body))
        assert call.index == number
        assert call.role == ("self_summary" if summary else "agent"), number
        assert call.prompt_ids == reply.tokens.prompt_token_ids, f"call {number}"
        assert call.completion_ids == reply.tokens.completion_token_ids
        assert call.logprobs == reply.tokens.logprobs
        assert call.finish_reason == reply.effective_finish_reason()
        assert call.policy_version == f"v{number}"
        extends = previous is not None and call.prompt_ids[: len(previous)] == previous
        assert call.context_reset is not extends, f"call {number}"
        previous = call.prompt_ids + call.completion_ids
    # logged whole: the first call, each summary call and the call after it, and at most the call after each
    # masking pass; every other call only as the ids after those it shares with the call before it
    logged = [e.tokens for e in events if isinstance(e, AssistantMessage | ContextSummarized)]
    whole = [
        number for number, tokens in enumerate(logged) if tokens and tokens.prompt_reuses is None
    ]
    summaries = sum(isinstance(e, ContextSummarized) for e in events)
    masks = sum(isinstance(e, ContextMasked) for e in events)
    assert 1 + 2 * summaries <= len(whole) <= 1 + 2 * summaries + masks, whole
    # the ATIF export carries every call's whole prompt, as sent
    steps = [
        step
        for trajectory in log_trajectories(session_log(home))
        for step in trajectory.steps
        if step.source == "agent" and not step.is_copied_context
    ]
    assert [s.metrics.prompt_token_ids for s in steps if s.metrics] == [
        r.reply.tokens.prompt_token_ids for r in sent if r.reply and r.reply.tokens
    ]
    assert steps[0].metrics and steps[0].metrics.extra == {
        "finish_reason": "tool_calls",
        "policy_version": "v0",
    }


def test_a_rollout_logged_before_prompts_were_cut_reads_the_same():
    """Logs written whole (every prompt in full, no prompt_reuses) rebuild to the same calls."""
    whole = [
        AssistantMessage(text="", tokens=TurnTokens(prompt_token_ids=[1, 2], completion_token_ids=[3], logprobs=[-0.5])),
        AssistantMessage(text="x", tokens=TurnTokens(prompt_token_ids=[1, 2, 3, 4], completion_token_ids=[5], logprobs=[-1.0])),
        AssistantMessage(text="y", tokens=TurnTokens(missing="the server returned no token ids")),
        ContextSummarized(tokens_before=9, tokens_after=2, summary="s", tokens=TurnTokens(prompt_token_ids=[9], completion_token_ids=[8], logprobs=[-0.1], finish_reason="stop")),
    ]  # fmt: skip
    calls = calls_tokens(whole)
    assert [(c.index, c.role, c.prompt_ids, c.context_reset) for c in calls] == [
        (0, "agent", [1, 2], True),
        (1, "agent", [1, 2, 3, 4], False),
        (3, "self_summary", [9], True),
    ]
    assert calls[2] == CallTokens(
        index=3,
        role="self_summary",
        prompt_ids=[9],
        completion_ids=[8],
        logprobs=[-0.1],
        context_reset=True,
        policy_version=None,
        finish_reason="stop",
    )


def logged(chain: PromptChain, sent: TurnTokens, wire: str) -> TurnTokens:
    """`sent` as the session logs it: read by the direct client from JSON (compact, or spaced as Python's
    json writes it), or whole (litellm, the embedded model) and cut by the session."""
    tokens = sent
    if wire != "whole" and sent.prompt_token_ids is not None:
        separators = (",", ":") if wire == "compact" else (", ", ": ")
        collector = TokenCollector(
            completion_ids=sent.completion_token_ids,
            prompt_json=json.dumps(sent.prompt_token_ids, separators=separators).encode(),
            chain=chain,
        )
        tokens = collector.result()
    event = chain.logged(AssistantMessage(text="", tokens=tokens))
    assert isinstance(event, AssistantMessage) and event.tokens is not None
    return event.tokens


def test_a_prompt_that_reuses_a_call_the_log_lost_is_skipped_not_guessed():
    chain = PromptChain()
    first = logged(chain, TurnTokens(prompt_token_ids=[1, 2], completion_token_ids=[3]), "whole")
    second = logged(
        chain, TurnTokens(prompt_token_ids=[1, 2, 3, 4], completion_token_ids=[5]), "whole"
    )
    assert first.prompt_reuses is None and second.prompt_token_ids == [4]
    assert second.prompt_reuses == 3
    events = [AssistantMessage(text="", tokens=second)]  # the first call's line is gone
    assert calls_tokens(events) == []


def test_a_reply_that_was_never_logged_is_not_what_the_next_call_is_cut_against():
    chain = PromptChain()
    logged(chain, TurnTokens(prompt_token_ids=[1, 2, 3], completion_token_ids=[4]), "compact")
    unlogged = TokenCollector(completion_ids=[6], prompt_json=b"[1,2,3,4,5]", chain=chain)
    assert unlogged.result().prompt_reuses == 4  # read, but its event never reaches the log
    third = logged(
        chain,
        TurnTokens(prompt_token_ids=[1, 2, 3, 4, 5, 6, 7], completion_token_ids=[8]),
        "compact",
    )
    assert third.prompt_reuses == 4 and third.prompt_token_ids == [5, 6, 7]


calls_st = st.lists(
    st.tuples(
        st.sampled_from(["extend", "status", "reset", "missing"]),
        st.lists(st.integers(0, 2**40), max_size=6),
        st.lists(st.integers(0, 2**40), max_size=4),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(calls_st, st.sampled_from(["whole", "compact", "spaced"]))
def test_cutting_prompts_then_rebuilding_them_gives_every_prompt_back(script, wire):
    """Whatever the calls (adding to the last, replacing its last id as a status line, starting anew, or
    without a completion), what the session logs rebuilds to what the server sent."""
    chain, rebuilder = PromptChain(), PromptRebuilder()
    last: list[int] | None = None
    previous_prompt: list[int] = []
    for kind, added, completion in script:
        base = {"extend": last or [], "status": previous_prompt[:-1], "reset": []}.get(kind, [])
        if kind == "missing":
            sent = TurnTokens(prompt_token_ids=added, missing="no completion token ids")
        else:
            sent = TurnTokens(prompt_token_ids=base + added, completion_token_ids=completion)
        cut = logged(chain, sent, wire)
        assert rebuilder.whole(cut) == sent.prompt_token_ids
        whole = sent.prompt_token_ids or []
        extends = last is not None and whole[: len(last)] == last
        assert rebuilder.reset_at_last is not extends
        if kind == "extend" and cut.prompt_reuses is not None:
            assert cut.prompt_token_ids == added
        previous_prompt = whole
        last = whole + sent.completion_token_ids if sent.completion_token_ids is not None else None
