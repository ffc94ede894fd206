"""A reply stream that stops sending without ending: the try ends after `stall_timeout` seconds with nothing
received (not after the whole request_timeout) and is retried as a provider fault, on both transports. A reply
that keeps coming is never cut off for its length; one that does not begin within request_timeout is."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from keel_cli import git_repo, run_streamed

from keel.agent.core.model.stall import StreamStalled, unstalled
from keel.agent.harness.testing.scripted_server import Reply

TRANSPORTS = [
    pytest.param({}, id="direct"),
    pytest.param({"KEEL_TRANSPORT": "litellm"}, id="litellm", marks=pytest.mark.slow),
]


def configure(home: Path, retries: int, request: float = 3600, stall: float = 1) -> None:
    """A short stall timeout and quick retries; by default the whole request may take far longer than the
    test."""
    config = home / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"retries = {retries}\nretry_base_delay = 0.01\n"
        f"request_timeout = {request}\nstall_timeout = {stall}\n"
    )


@pytest.mark.parametrize("env", TRANSPORTS)
def test_a_stalled_stream_is_given_up_and_retried(scripted_server, tmp_path, env):
    home = tmp_path / "home"
    configure(home, retries=2)
    stalled = Reply(text="Here is the start of an answer that never", stall_after_chunks=2)
    server = scripted_server([stalled, "The whole answer."])
    repo = git_repo(tmp_path / "repo", {"README.md": "stalls\n"})
    result = run_streamed(server.url, "say hi", cwd=repo, home=home, timeout=120, **env)

    assert result.returncode == 0, result.stderr
    assert result.events[-1]["status"] == "completed"
    assert result.events[-1]["final_message"] == "The whole answer."
    retries = [e for e in result.events if e["type"] == "model.retry"]
    assert [e["error_class"] for e in retries] == ["StreamStalled"]
    assert "stalled: nothing arrived for 1 s (stall_timeout)" in retries[0]["message"]
    assert len(server.requests) == 2


@pytest.mark.parametrize("env", TRANSPORTS)
def test_a_stream_that_always_stalls_fails_with_a_clear_error(scripted_server, tmp_path, env):
    home = tmp_path / "home"
    configure(home, retries=1)
    server = scripted_server([Reply(text="never finished", stall_after_chunks=0)] * 2)
    repo = git_repo(tmp_path / "repo", {"README.md": "stalls\n"})
    result = run_streamed(server.url, "say hi", cwd=repo, home=home, timeout=120, **env)

    assert result.returncode == 1, result.stderr
    [error] = [e for e in result.events if e["type"] == "error"]
    assert error["fatal"] and "stalled: nothing arrived for 1 s" in error["message"]
    assert "gave up after 1 retry" in error["message"]
    assert result.events[-1]["status"] == "error"
    assert len(server.requests) == 2


@pytest.mark.parametrize("env", TRANSPORTS)
def test_a_reply_that_keeps_coming_is_not_cut_off_for_its_length(scripted_server, tmp_path, env):
    """request_timeout bounds the wait for a reply to begin and between its events, not the reply's length:
    the 1.5B on two cores, given a medium project's files, took over ten minutes for one reply, and keel cut
    it off at 600 s and sent the same request again (bench/small_model --set medium: ledger_comment)."""
    home = tmp_path / "home"
    configure(home, retries=1, request=1, stall=5)
    text = "A reply that takes more than two seconds to arrive in full."
    server = scripted_server([Reply(text=text, chunk_delay=0.3), "A second answer."])
    repo = git_repo(tmp_path / "repo", {"README.md": "slow\n"})
    result = run_streamed(server.url, "say hi", cwd=repo, home=home, timeout=120, **env)

    assert result.returncode == 0, result.stderr
    assert not [e for e in result.events if e["type"] == "model.retry"]
    assert result.events[-1]["final_message"] == text and len(server.requests) == 1


def test_a_reply_that_does_not_begin_within_the_request_timeout_is_retried(
    scripted_server, tmp_path
):
    home = tmp_path / "home"
    configure(home, retries=1, request=1, stall=5)
    server = scripted_server([Reply(text="too late", delay=3), "On time."])
    repo = git_repo(tmp_path / "repo", {"README.md": "late\n"})
    result = run_streamed(server.url, "say hi", cwd=repo, home=home, timeout=120)

    assert result.returncode == 0, result.stderr
    [retry] = [e for e in result.events if e["type"] == "model.retry"]
    assert retry["error_class"] == "Timeout" and "for 1 s (request_timeout)" in retry["message"]
    assert result.events[-1]["final_message"] == "On time."


async def _paced(gaps: list[float]):
    """Pieces arriving after the given gaps, in seconds."""
    for number, gap in enumerate(gaps):
        await asyncio.sleep(gap)
        yield number


async def test_time_the_consumer_spends_on_a_piece_is_not_a_stall():
    """The stall clock runs only while waiting for the next piece: a slow consumer never trips it."""
    received = []
    async for piece in unstalled(_paced([0.0, 0.05, 0.05]), 0.2, "here"):
        await asyncio.sleep(0.3)  # longer than the stall timeout, between pieces
        received.append(piece)
    assert received == [0, 1, 2]


async def test_a_wait_longer_than_the_timeout_is_a_stall_after_quick_pieces():
    received = []
    with pytest.raises(StreamStalled, match="nothing arrived for 0.2 s"):
        async for piece in unstalled(_paced([0.0, 0.05, 0.05, 5.0]), 0.2, "here"):
            received.append(piece)
    assert received == [0, 1, 2]
    assert asyncio.current_task().cancelling() == 0  # the guard's own cancel is taken back


async def test_a_stop_from_outside_while_waiting_stays_a_cancel():
    async def consume() -> None:
        async for _ in unstalled(_paced([5.0]), 0.2, "here"):
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
