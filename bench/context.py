"""bench/context: a 200-step scripted session replayed through keel; prompt tokens against the full history."""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
from pathlib import Path

from _common import row

from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    Reply,
    ScriptedServer,
    ScriptedToolCall,
)
from keel.agent.harness.testing.scripted_wire import estimate_prompt_tokens

STEPS = 200
WINDOW = 32_768
SUMMARY_MARK = "You are summarizing your own work"


class Workload:
    """Reads and commands with realistic, varied output sizes; summarizes when asked."""

    def __init__(self) -> None:
        self.rng = random.Random(11)
        self.step = 0
        self.summaries = 0

    def __call__(self, request: ChatRequest) -> Reply:
        if SUMMARY_MARK in str(request.messages[0].get("content")):
            self.summaries += 1
            return Reply(
                text=f"## Goal\nRefactor.\n## Done\n{self.step} steps so far.\n## Next step\nContinue."
            )
        if self.step >= STEPS:
            return Reply(text="Finished the refactor.")
        self.step += 1
        kind = self.rng.random()
        if kind < 0.5:
            size = self.rng.choice([20, 60, 150, 400])
            call = ScriptedToolCall(
                name="read_file", arguments={"path": f"src/m{self.step % 40}.py", "limit": size}
            )
        elif kind < 0.8:
            call = ScriptedToolCall(name="search", arguments={"pattern": f"f{self.step % 9}_"})
        else:
            lines = self.rng.choice([5, 50, 300])
            call = ScriptedToolCall(
                name="run_command", arguments={"command": f"seq {self.step} {self.step + lines}"}
            )
        return Reply(text=f"Step {self.step}.", tool_calls=[call])


def make_repo(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    for i in range(40):
        body = "".join(
            f"def f{j}_{i}(value):\n    return value + {j}  # step {j}\n" for j in range(200)
        )
        (root / "src" / f"m{i}.py").write_text(body)


def prefix_stable(previous: list[dict], current: list[dict]) -> bool:
    """The previous request, less its trailing status line, is a prefix of the current one."""
    head = previous[:-1]
    return current[: len(head)] == head


async def run(server: ScriptedServer, workspace: Path) -> list:
    from keel.agent.core.protocol import TaskFinished, UserPrompt
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings

    settings = SessionSettings(
        cwd=workspace,
        model="openai/any",
        api_base=server.url,
        context_window=WINDOW,
        max_steps=10_000,
        budget=10**9,
    )
    events = []
    async with Session(settings) as session:
        session.submit(UserPrompt(text="Refactor the src package step by step."))
        async for event in session.events():
            events.append(event)
            if isinstance(event, TaskFinished):
                break
    return events


def naive_tokens(requests: list, events: list) -> int:
    """What the same calls would cost if each sent the whole, never-compacted history."""
    from keel.agent.core.protocol import AssistantMessage, ToolFinished

    first = requests[0].body
    history = list(first["messages"][:-1])  # system prompt and task, without the status line
    total = 0
    for event in events:
        if isinstance(event, AssistantMessage):
            body = {"messages": [*history, first["messages"][-1]], "tools": first.get("tools")}
            total += estimate_prompt_tokens(body)
            history.append(
                {
                    "role": "assistant",
                    "content": event.text,
                    "tool_calls": [c.model_dump() for c in event.tool_calls],
                }
            )
        elif isinstance(event, ToolFinished):
            history.append({"role": "tool", "content": event.output})
    return total


def compaction_turns(events: list) -> set[int]:
    """Indexes of the turns whose request came right after a masking pass or a summary."""
    turns, marked = 0, set()
    for event in events:
        if event.type == "assistant.message":
            turns += 1
        elif event.type in ("context.masked", "context.summarized"):
            marked.add(turns)
    return marked


def main() -> None:
    os.environ["KEEL_HOME"] = tempfile.mkdtemp()
    workspace = Path(tempfile.mkdtemp())
    make_repo(workspace)
    workload = Workload()
    with ScriptedServer(script=workload, context_limit=WINDOW) as server:
        events = asyncio.run(run(server, workspace))
        requests = list(server.requests)
    turns = [r for r in requests if SUMMARY_MARK not in str(r.messages[0].get("content"))]
    sent = sum(r.prompt_tokens for r in requests)
    naive = naive_tokens(turns, events)
    compaction_after = compaction_turns(events)
    masked = sum(1 for e in events if e.type == "context.masked")
    stable = [prefix_stable(turns[i - 1].messages, turns[i].messages) for i in range(1, len(turns))]
    outside = [s for i, s in enumerate(stable, start=1) if i not in compaction_after]
    overflow = [r for r in requests if r.fault]
    print(f"context over a {workload.step}-step session, {WINDOW:,}-token window")
    row("prompt tokens if every call sent the full history", f"{naive:,}", "1.00x")
    row(
        "prompt tokens keel sent (summaries included)",
        f"{sent:,}",
        f"{sent / naive:.2f}x   goal ≤ 0.40x: " + ("met" if sent / naive <= 0.40 else "MISSED"),
    )
    row("summaries written", f"{workload.summaries}")
    row("masking passes", f"{masked}")
    row(
        "requests over the window",
        f"{len(overflow)}",
        "goal 0: " + ("met" if not overflow else "MISSED"),
    )
    row("largest request", f"{max(r.prompt_tokens for r in requests):,}")
    share = sum(outside) / max(1, len(outside))
    row(
        "turns whose prefix equals the previous turn's",
        f"{sum(stable)}/{len(stable)}",
        f"{sum(stable) / max(1, len(stable)):.1%} of all turns",
    )
    row(
        "  ... outside compaction (masking, summary) turns",
        f"{sum(outside)}/{len(outside)}",
        f"{share:.1%}   goal ≥ 95%: " + ("met" if share >= 0.95 else "MISSED"),
    )


if __name__ == "__main__":
    sys.exit(main())
