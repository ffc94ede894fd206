"""A vLLM-shaped scripted model for the training tests: its prompt ids extend append-only within a conversation,
as a server tokenizing a growing chat would send them, and every reply carries ids and logprobs to compare."""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from keel_cli import git_repo
from test_context_budget import is_summary_request

from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    Reply,
    ReplyTokens,
    ScriptedToolCall,
)

CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}
FIX = "python3 -c 'from calc import add; assert add(2, 3) == 5'"


def fix_task(tmp_path: Path) -> Any:
    """The task every training test runs: fix calc.py's add, judged by FIX."""
    import keel

    return keel.RolloutTask(id="fix", repo=git_repo(tmp_path / "repo", CALC), prompt="fix add", test=FIX)  # fmt: skip


def assert_samples_sent(out: Mapping[str, Any], model: GrowingContext) -> None:
    """A step-wise batch's samples are the calls the model served: ids, logprobs, a loss mask of ones."""
    sent = model.by_completion()
    for prompt, response, mask, logprobs in zip(
        out["prompt_token_ids"], out["response_ids"], out["loss_masks"], out["rollout_logprobs"], strict=True
    ):  # fmt: skip
        tokens = sent[tuple(response)]
        assert prompt == tokens.prompt_token_ids and logprobs == tokens.logprobs
        assert mask == [1] * len(response)


class GrowingContext:
    """Edits calc.py (the first conversation fixes it, the next not, and so on), reads `reads` more times, then
    answers; with `summarize`, reads big modules until keel summarizes, then answers. A conversation's next
    prompt is its last prompt and completion plus fresh ids (the tool result); its first call, a summary
    call and the call after a summary start afresh. One conversation at a time (rollouts run one by one)."""

    def __init__(self, reads: int = 1, summarize: bool = False, seed: int = 0) -> None:
        self.reads, self.summarize = reads, summarize
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.sent: list[ReplyTokens] = []
        self.summaries: list[ReplyTokens] = []  # the summary calls' replies
        self.conversations = 0
        self.steps = 0
        self.context: list[int] = []
        self.fresh_next = True
        self.summarized = False

    def ids(self, count: int) -> list[int]:
        return [self.rng.randrange(150_000) for _ in range(count)]

    def tokens(self, prompt: list[int]) -> ReplyTokens:
        completion = self.ids(self.rng.randint(3, 12))
        logprobs = [-round(self.rng.random() * 5, 6) for _ in completion]
        sent = ReplyTokens(
            prompt_token_ids=prompt, completion_token_ids=completion, logprobs=logprobs
        )
        self.sent.append(sent)
        return sent

    def by_completion(self) -> dict[tuple[int, ...], ReplyTokens]:
        return {tuple(sent.completion_token_ids): sent for sent in self.sent}

    def __call__(self, request: ChatRequest) -> Reply:
        with self.lock:
            return self._reply(request)

    def _reply(self, request: ChatRequest) -> Reply:
        if is_summary_request(request):
            self.fresh_next, self.summarized = True, True
            sent = self.tokens(self.ids(40))
            self.summaries.append(sent)
            return Reply(text="## Goal\nRead the modules.\n## Done\nRead some.", tokens=sent)
        new = not any(m.get("role") == "assistant" for m in request.messages)
        if new and not (self.summarized and self.fresh_next):  # not the call after a summary
            self.conversations += 1
            self.steps, self.fresh_next, self.summarized = 0, True, False
        prompt = self.ids(30) if self.fresh_next else self.context + self.ids(8)
        self.fresh_next = False
        sent = self.tokens(prompt)
        self.context = prompt + sent.completion_token_ids
        self.steps += 1
        if self.summarize:
            if self.summarized:
                return Reply(text="Read enough of them.", tokens=sent)
            path = f"mod{self.steps % 20}.py"
            return Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": path})], tokens=sent)  # fmt: skip
        if self.steps == 1:
            fix = self.conversations % 2 == 1
            edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b" if fix else "a * b"}  # fmt: skip
            return Reply(tool_calls=[ScriptedToolCall(name="edit_file", arguments=edit)], tokens=sent)  # fmt: skip
        if self.steps <= 1 + self.reads:
            call = ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})
            return Reply(tool_calls=[call], tokens=sent)
        return Reply(text="Fixed.", tokens=sent)


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
