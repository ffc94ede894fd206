"""One ACP session: a keel Session, the task that turns its events into updates, and the prompt waiting."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from acp import Client, RequestError
from acp.schema import (
    AllowedOutcome,
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from keel.agent.acp.updates import (
    PERMISSION_OPTIONS,
    SessionUpdate,
    Translator,
    decision_of,
)
from keel.agent.core.protocol import (
    AnyEvent,
    ApprovalDecision,
    ApprovalRequested,
    Approve,
    Interrupt,
    TaskFinished,
    UserPrompt,
)
from keel.agent.core.session import Session

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
log = logging.getLogger(__name__)


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    """The task keel is given: the text, a linked file by its path, an embedded one with its contents."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{block.uri.removeprefix('file://')}")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            where = resource.uri.removeprefix("file://")
            if isinstance(resource, TextResourceContents):
                parts.append(f'<file path="{where}">\n{resource.text}\n</file>')
            else:
                parts.append(f"@{where}")
    return "\n".join(part for part in parts if part)


class LiveSession:
    """A keel Session behind an ACP session id; its events go to the client as updates, in order."""

    def __init__(self, session: Session, client: Client) -> None:
        self.session = session
        self.client = client
        self.translator = Translator(session.root)
        self._waiting: dict[str, asyncio.Future[TaskFinished]] = {}
        self._pump: asyncio.Task[None] | None = None
        self._asks: set[asyncio.Task[None]] = set()

    @property
    def id(self) -> str:
        return self.session.id

    async def replay(self, events: Sequence[AnyEvent]) -> None:
        """A loaded session's history, as the updates it made (its prompts included)."""
        for event in events:
            await self._send(self.translator.updates(event, replay=True))

    def start(self) -> None:
        self.session.start()
        self._pump = asyncio.create_task(self._forward())

    async def prompt(self, text: str) -> TaskFinished:
        """Run one task and return how it finished, after every update it made was sent."""
        if self._waiting:
            raise RequestError(-32600, "keel is still working on the last prompt; cancel it first")
        op = UserPrompt(text=text)
        finished: asyncio.Future[TaskFinished] = asyncio.get_running_loop().create_future()
        self._waiting[op.id] = finished
        self.session.submit(op)
        try:
            return await finished
        finally:
            self._waiting.pop(op.id, None)

    def cancel(self) -> None:
        self.session.submit(Interrupt())

    async def close(self) -> None:
        await self.session.close()
        for task in (self._pump, *self._asks):
            if task is not None and not task.done():
                task.cancel()
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(RequestError(-32603, "the session was closed"))

    async def _forward(self) -> None:
        async for event in self.session.events():
            await self._send(self.translator.updates(event))
            if isinstance(event, ApprovalRequested):
                task = asyncio.create_task(self._ask(event))
                self._asks.add(task)
                task.add_done_callback(self._asks.discard)
            elif isinstance(event, TaskFinished):
                waiting = self._waiting.get(event.turn_id)
                if waiting is not None and not waiting.done():
                    waiting.set_result(event)

    async def _send(self, updates: list[SessionUpdate]) -> None:
        for update in updates:
            await self.client.session_update(session_id=self.id, update=update)

    async def _ask(self, event: ApprovalRequested) -> None:
        """The client's answer to a call that needs approval becomes keel's Approve op."""
        decision: ApprovalDecision = "deny"
        try:
            answer = await self.client.request_permission(
                session_id=self.id,
                tool_call=self.translator.tool_call(event),
                options=PERMISSION_OPTIONS,
            )
            if isinstance(answer.outcome, AllowedOutcome):
                decision = decision_of(answer.outcome.option_id)
            if decision != "deny":  # said before the call runs, so it comes before its result
                await self._send([Translator.running(event.call_id)])
        except (RequestError, ConnectionError) as exc:
            log.warning("keel acp: the permission request failed (%s); the call is denied", exc)
        self.session.submit(Approve(call_id=event.call_id, decision=decision))
