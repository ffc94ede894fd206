"""The per-message cache of request work: each message is worked on once, and every request gets its
own messages' results in order, whatever changed since the last one."""

from __future__ import annotations

from keel.agent.core.model.request_cache import LastRequestCache


def counting_cache() -> tuple[LastRequestCache[str], list[str]]:
    made: list[str] = []

    def make(message: dict) -> str:
        made.append(message["content"])
        return message["content"].upper()

    return LastRequestCache(make), made


def test_a_request_that_extends_the_last_one_works_only_on_its_new_messages() -> None:
    cache, made = counting_cache()
    first = [{"content": "a"}, {"content": "b"}]
    assert cache.map(first) == ["A", "B"]
    assert cache.map([*first, {"content": "c"}]) == ["A", "B", "C"]
    assert made == ["a", "b", "c"]


def test_a_replaced_message_is_worked_out_again_and_the_ones_after_it_are_kept() -> None:
    cache, made = counting_cache()
    head, middle, tail = {"content": "a"}, {"content": "b"}, {"content": "c"}
    cache.map([head, middle, tail])
    masked = {"content": "b (masked)"}
    assert cache.map([head, masked, tail]) == ["A", "B (MASKED)", "C"]
    assert cache.map([{"content": "summary"}, tail]) == ["SUMMARY", "C"]
    assert made == ["a", "b", "c", "b (masked)", "summary"]


def test_an_equal_but_new_message_is_not_taken_for_the_old_one() -> None:
    cache, made = counting_cache()
    cache.map([{"content": "a"}])
    assert cache.map([{"content": "a"}, {"content": "a"}]) == ["A", "A"]
    assert made == ["a", "a", "a"]


def test_only_the_last_request_is_remembered() -> None:
    cache, made = counting_cache()
    old = {"content": "old"}
    cache.map([old])
    cache.map([{"content": "new"}])
    cache.map([old])
    assert made == ["old", "new", "old"]
