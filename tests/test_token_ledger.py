"""The context's running token count: the tokenizer counts until the provider has reported a prompt, and
near a limit; far from every limit the size-based tally, scaled by the reports, stands in for it."""

from __future__ import annotations

from dataclasses import replace

from keel.agent.core.context.ledger import TokenLedger
from keel.agent.core.messages import Message, user
from keel.agent.core.model.tokens import count_message, rough_count, rough_count_message
from keel.agent.core.state import SessionState

OUTPUT = "\n".join(f"{n:6}\tline {n} of the file" for n in range(1, 41))


def state_with(*messages: Message, epoch: int = 0) -> SessionState:
    return SessionState(session_id="ledger-test", history=tuple(messages), epoch=epoch)


def test_before_any_report_the_tokenizer_counts():
    ledger = TokenLedger(prefix_tokens=100)
    first = user(OUTPUT)
    assert ledger.estimate(state_with(first), extra=10, far_below=10**9) == 110 + count_message(
        first
    )


def test_after_a_report_a_context_far_from_limits_is_not_tokenized():
    ledger = TokenLedger(prefix_tokens=100)
    first = user(OUTPUT)
    state = state_with(first)
    ledger.estimate(state, far_below=10**9)
    ledger.reconcile(
        2 * (100 + rough_count_message(first))
    )  # the provider counts twice our rough size
    second = user(OUTPUT + " more")
    state = replace(state, history=(first, second))

    estimate = ledger.estimate(state, far_below=10**9)

    assert second.token_count is None  # no tokenizer pass
    assert estimate == int(2 * (100 + rough_count_message(first) + rough_count_message(second)))


def test_near_a_limit_the_tokenizer_decides_with_its_own_scale():
    ledger = TokenLedger(prefix_tokens=100)
    first = user(OUTPUT)
    state = state_with(first)
    exact = ledger.estimate(state)  # far_below=0: nothing is far from a limit
    ledger.reconcile(3 * exact)
    second = user(OUTPUT + " more")
    state = replace(state, history=(first, second))
    rough = 100 + rough_count_message(first) + rough_count_message(second)

    estimate = ledger.estimate(state, far_below=rough)  # the rough size reaches the line

    assert second.token_count == count_message(second)
    assert estimate == 2 * (100 + count_message(first) + count_message(second))  # bounded at 2


def test_a_new_epoch_counts_its_history_again():
    ledger = TokenLedger()
    long, short = user(OUTPUT * 3), user("a summary")
    ledger.estimate(state_with(long))
    assert ledger.estimate(state_with(short, epoch=1)) == count_message(short)


def test_rough_counts_run_high_for_code_prose_and_other_scripts():
    texts = [OUTPUT, "def add(a, b):\n    return a + b\n" * 20, "The quick brown fox. " * 40]
    texts.append("数据在这里被处理和保存。" * 30)
    for text in texts:
        assert rough_count(text) >= count_message(user(text)) - 4, text[:20]
