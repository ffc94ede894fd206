"""The embedded model as a transport of keel's model layer: each reply is asked of its worker process.

`keel-local/...` models come here instead of through litellm: nothing in this path imports litellm, and the
worker's replies already carry real tool calls (read under a grammar of the offered tools).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from keel.agent.core.model.local.endpoint import embedded_worker
from keel.agent.core.model.local.spec import describe_embedded
from keel.agent.core.model.local.worker_client import progress_event
from keel.agent.core.model.local.worker_protocol import Progress, SamplingSpec
from keel.agent.core.model.reply import ModelReply, ReplyAssembler
from keel.agent.core.model.sampling import CallSampling
from keel.agent.core.protocol import ModelProgress, TokenUsage


def sampling_spec(
    extra: dict[str, Any],
    max_tokens: int | None,
    asked: CallSampling | None,
    prose_only: bool,
    record_tokens: bool,
) -> SamplingSpec:
    """What the worker is asked for: the call's own temperature and seed over the settings' (`extra`);
    prose only when no tools were offered at all (keel asked for the answer)."""
    chosen = extra | (asked.fields() if asked else {})
    return SamplingSpec(
        max_tokens=max_tokens or extra.get("max_tokens"),
        temperature=chosen.get("temperature"),
        seed=chosen.get("seed"),
        prose_only=prose_only,
        record_tokens=record_tokens,
    )


class EmbeddedClient:
    """Streams replies from the worker of the embedded model `model` names; its progress goes to `on_progress`
    as events."""

    def __init__(
        self,
        model: str,
        context_window: int | None,
        extra: dict[str, Any],
        on_progress: Callable[[ModelProgress], None],
        record_tokens: bool = False,
    ) -> None:
        self.endpoint = describe_embedded(context_window, model)
        self.extra = extra
        self.on_progress = on_progress
        self.record_tokens = record_tokens

    async def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None,
        on_delta: Callable[[str], None],
        price: Callable[[TokenUsage], float | None],
        asked: CallSampling | None = None,
    ) -> ModelReply:
        assembler = ReplyAssembler()
        sampling = sampling_spec(self.extra, max_tokens, asked, tools == [], self.record_tokens)
        done = await embedded_worker(self.endpoint).generate(
            messages,
            tools or None,
            sampling,
            lambda text: on_delta(assembler.add_text(text)),
            self._progress,
        )
        for index, call in enumerate(done.calls):
            assembler.add_tool_piece(
                index, f"call_{uuid.uuid4().hex[:12]}", call.name, call.arguments
            )
        assembler.finish_reason = done.finish_reason
        assembler.usage = TokenUsage(
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
            total_tokens=done.prompt_tokens + done.completion_tokens,
        )
        reply = assembler.reply(messages, tools, price)
        if done.tokens is not None:  # the finish reason, as a server's call records it
            reply.tokens = done.tokens.model_copy(update={"finish_reason": done.finish_reason})
        return reply

    def _progress(self, message: Progress) -> None:
        self.on_progress(progress_event(message))

    async def aclose(self) -> None:
        """Nothing to close: the worker serves the whole process."""
