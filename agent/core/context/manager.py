"""Decides what the model sees on each call: stable prefix, summaries, history, status line; compacts when full."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keel.agent.core.config import ContextSettings
from keel.agent.core.context.budget import budget_note, is_status_line, status_line
from keel.agent.core.context.ledger import TokenLedger
from keel.agent.core.context.masking import mask_boundary
from keel.agent.core.context.summarizer import Summarizer
from keel.agent.core.errors import ContextWindowExceeded
from keel.agent.core.fold import after_masking, after_summary
from keel.agent.core.masked_outputs import mask_history
from keel.agent.core.messages import Message, system, to_wire, user
from keel.agent.core.model.tokens import count_json, count_shared_text, count_text
from keel.agent.core.protocol import (
    AnyEvent,
    BudgetUpdated,
    ContextMasked,
    ContextSummarized,
    TokenUsage,
    UserMessage,
)
from keel.agent.core.state import SessionState
from keel.agent.core.system_prompt import SystemPrompt
from keel.prompts import render

STATUS_RESERVE = 120  # tokens kept free for the status line appended to every request
MASK_SHARE_OF_TRIGGER = 0.75
KEEP_UNMASKED_SHARE = 0.2  # of the window: recent tool outputs that masking leaves whole
# under this share of masking's threshold a rough count is close enough (keel.agent.core.context.ledger)
ROUGH_SHARE_OF_MASKING = 0.7


class ContextManager:
    """Builds requests and keeps them under the window: masking first, then self-summarization. It changes
    the state only by emitting events (context.masked, context.summarized, and with append-only prompts the
    status lines kept as user.message)."""

    def __init__(
        self,
        system_prompt: SystemPrompt,
        window: int,
        settings: ContextSettings,
        summarizer: Summarizer,
        emit: Callable[[AnyEvent], None],
        current: Callable[[], SessionState],
    ) -> None:
        """`emit` hands an event to the session, which applies it; `current` is the state as it is now."""
        self.system_prompt = system_prompt
        self.current = current
        self.window = window
        self.settings = settings
        self.summarizer = summarizer
        self.emit = emit
        self.ledger = TokenLedger()
        self._prefix_key: tuple[str, int, int] | None = None
        self._prefix_messages: list[Message] = []
        self.images = True  # the model takes images (the session says which)
        # the last request sent the whole history (the ledger learns only from such a request)
        self._whole_request = True

    @property
    def trigger(self) -> int:
        """Context size at which the session summarizes itself."""
        if self.settings.summarize_at_tokens:
            return min(self.settings.summarize_at_tokens, int(self.window * 0.9))
        return int(self.window * self.settings.summarize_at)

    def _prefix(self, state: SessionState) -> list[Message]:
        """System prompt and summary block; the same messages from call to call until the next summary
        (or a new user prompt the summary block quotes), so their wire form is built and counted once."""
        key = (
            state.tool_protocol,
            len(state.summaries),
            len(state.user_prompts) if state.summaries else 0,
        )
        if key != self._prefix_key:
            messages = [system(self.system_prompt.text(state.tool_protocol))]
            if state.summaries:
                messages.append(user(self._summary_block(state)))
            tools = self.tool_schemas(state.tool_protocol) or []
            self.ledger.prefix_tokens = count_shared_text(messages[0].content) + count_json(tools)
            self.ledger.prefix_tokens += sum(count_text(m.content) for m in messages[1:])
            self._prefix_key, self._prefix_messages = key, messages
        return self._prefix_messages

    def tool_schemas(self, protocol: str) -> list[dict[str, Any]] | None:
        """What goes in a request's `tools`: the offered schemas in the native protocol, none in the text one."""
        return self.system_prompt.tool_schemas() if protocol == "native" else None

    def _summary_block(self, state: SessionState) -> str:
        return summary_block(state, self.window)

    def context_tokens(self, state: SessionState) -> int:
        """The next request's estimated size: exact where it is near masking's threshold or beyond."""
        self._prefix(state)
        far_below = int(self.trigger * MASK_SHARE_OF_TRIGGER * ROUGH_SHARE_OF_MASKING)
        return self.ledger.estimate(state, STATUS_RESERVE, far_below)

    def build_request(
        self,
        state: SessionState,
        system_template: str | None = None,
        history: list[Message] | None = None,
    ) -> list[dict[str, Any]]:
        """The next request in wire format, with the status line as its last message; `system_template`
        gives this call another system prompt and `history` fewer messages than the whole history (a
        strategy's choice for one kind of call: that call has no status line)."""
        messages = [*self._prefix(state), *(state.history if history is None else history)]
        if system_template is not None:
            messages[0] = system(self.system_prompt.text(state.tool_protocol, system_template))
        self._whole_request = history is None
        if not self._whole_request:
            return to_wire(messages, state.tool_protocol, self.images)
        if self.settings.append_only:  # fit() put the status line in the history
            self.context_tokens(state)  # the ledger learns from this request's reported size
        elif (status := self._status(state)) is not None:
            messages.append(user(status))
        return to_wire(messages, state.tool_protocol, self.images)

    def _status(self, state: SessionState) -> str | None:
        """The status line the next request ends with, None when it has none: a small model answers a bare
        status line by echoing it, so it gets the line only when it carries a note (converge, wrap up)."""
        context = self.context_tokens(state)
        note = budget_note(state.task_tokens, state.budget, context)
        if not note and not self.system_prompt.style.bare_status_line:
            return None
        return status_line(state.task_tokens, state.budget, context, self.window, note)

    def _keep_status(self) -> None:
        """Append-only prompts: the next call's status line goes into the history as a message of keel's,
        where the calls after it find it unchanged (one already last, from a call tried again, is kept)."""
        state = self.current()
        history = state.history
        if history and history[-1].role == "user" and is_status_line(history[-1].content):
            return
        if (status := self._status(state)) is not None:
            self.emit(UserMessage(text=status, origin="keel", purpose="status"))

    def after_model_call(self, usage: TokenUsage) -> None:
        """Learn from the reply's prompt tokens (when the request was the whole context the ledger estimated)
        and report the budget (the reply is already applied)."""
        if self._whole_request:
            self.ledger.reconcile(usage.prompt_tokens)
        state = self.current()
        self.emit(
            BudgetUpdated(
                used=state.task_tokens,
                budget=state.budget,
                context_tokens=usage.prompt_tokens,
                context_window=self.window,
            )
        )

    async def fit(self) -> None:
        """Before a call: mask old outputs past a first threshold, summarize past the trigger; with
        append-only prompts, keep the call's status line in the history."""
        state = self.current()
        before = self.context_tokens(state)
        if before >= self.trigger * MASK_SHARE_OF_TRIGGER:
            upto = mask_boundary(
                state.history,
                self.settings.keep_tool_outputs,
                int(self.window * KEEP_UNMASKED_SHARE),
            )
            if upto > state.masked_upto:
                _, masked = mask_history(state.history, state.masked_upto, upto)
                after = self.context_tokens(after_masking(state, upto))
                self.emit(
                    ContextMasked(
                        masked_upto=upto, masked=masked, tokens_before=before, tokens_after=after
                    )
                )
                before = after
        if before >= self.trigger:
            await self.compact(reason="threshold")
        if self.settings.append_only:
            self._keep_status()

    async def compact(self, reason: str) -> None:
        """Summarize now; after an overflow, each retry keeps less of the recent history."""
        state = self.current()
        before = self.context_tokens(state)
        for shrink in range(3):
            try:
                summary = await self.summarizer.summarize(
                    state, shrink=shrink, requested=reason == "requested"
                )
            except ContextWindowExceeded:
                if shrink == 2:
                    raise
                continue
            break
        after = after_summary(state, summary.text, summary.kept_messages)
        event = ContextSummarized(
            tokens_before=before,
            tokens_after=self.context_tokens(after),
            summary=summary.text,
            kept_messages=summary.kept_messages,
            reason=reason,
            usage=summary.usage,
            cost=summary.cost,
            tokens=summary.tokens,
        )
        self.emit(event)


def summary_block(state: SessionState, window: int) -> str:
    """The message that stands for the summarized history: the task, the user's words, the newest summaries
    that fit in 15% of the window (the export renders it too, to start a continuation as the model saw it)."""
    limit, chain = int(window * 0.15), list[str]()
    for summary in reversed(state.summaries):
        limit -= count_text(summary)
        if chain and limit < 0:
            break
        chain.insert(0, summary)
    prompts = [p for p in state.user_prompts if p != state.task_prompt][-10:]
    return render(
        "summary_block",
        task=state.task_prompt,
        user_messages=prompts,
        summaries=chain,
        items=state.todo,  # the model's checklist, restated so that a long task keeps its plan
    )
