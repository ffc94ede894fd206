"""bench/tokens: the cost of counting the context per step at ~100k tokens, against recounting the whole history."""

from __future__ import annotations

import random
import sys
import time
from dataclasses import replace

from _common import row

from keel.agent.core.context.ledger import TokenLedger
from keel.agent.core.messages import Message
from keel.agent.core.model.tokens import count_message, count_text
from keel.agent.core.protocol import ToolCall
from keel.agent.core.state import SessionState

WORDS = [
    "def",
    "return",
    "self",
    "import",
    "value",
    "result",
    "error",
    "file",
    "path",
    "test",
    "data",
    "index",
    "line",
    "print",
    "class",
]


def text(rng: random.Random, tokens: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(tokens))


def turn(rng: random.Random, step: int) -> list[Message]:
    call = ToolCall(id=f"c{step}", name="read_file", arguments=f'{{"path": "m{step}.py"}}')
    return [
        Message(role="assistant", content=text(rng, 30), tool_calls=[call]),
        Message(
            role="tool",
            content=text(rng, rng.randint(200, 900)),
            tool_call_id=call.id,
            name="read_file",
        ),
    ]


def main() -> None:
    rng = random.Random(7)
    history = [Message(role="user", content="a long task")]
    step = 0
    while sum(count_message(m) for m in history) < 100_000:
        history.extend(turn(rng, step))
        step += 1
    state = SessionState(session_id="bench-000000", max_steps=10**6, history=tuple(history))
    ledger = TokenLedger(prefix_tokens=2_000)
    ledger.estimate(state)  # the history so far is counted once, as it would have been step by step
    steps = 50
    new_turns = [turn(rng, step + i) for i in range(steps)]

    incremental = 0.0
    for messages in new_turns:
        state = replace(state, history=(*state.history, *messages))
        start = time.perf_counter()
        size = ledger.estimate(state)
        incremental += time.perf_counter() - start

    recount = 0.0
    for _ in range(5):
        start = time.perf_counter()
        full = 2_000 + sum(4 + count_text(m.content) for m in state.history)
        recount += time.perf_counter() - start
    recount /= 5
    per_step = incremental / steps
    print(f"token counting per step at {size:,} tokens of context ({len(state.history)} messages)")
    row("full recount of the history", f"{recount * 1000:.2f} ms", "1.00x")
    row(
        "keel's ledger (new messages only)",
        f"{per_step * 1000:.3f} ms",
        f"{per_step / recount:.4f}x   goal ≤ 1 ms: " + ("met" if per_step <= 0.001 else "MISSED"),
    )
    assert abs(full - size) / full < 0.05, (full, size)


if __name__ == "__main__":
    sys.exit(main())
