"""A long recorded session's log holds each prompt once, not once per call: each call logs only the ids after
those it shares with the call before it, so the log grows with the session's length, not its square."""

from __future__ import annotations

from keel_cli import run_streamed
from test_context_budget import big_repo
from test_record_tokens import logged

from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.agent.harness.testing.scripted_tokens import template_tokens


class ReadsWithTemplateTokens:
    """Reads a file a step for `steps` steps, then answers; every reply carries the ids a chat template gives
    its request and its text, so each prompt holds the one before it."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def __call__(self, request: ChatRequest) -> Reply:
        if request.step >= self.steps:
            reply = Reply(text="Read them all.")
        else:
            path = f"mod{request.step % 20}.py"
            call = ScriptedToolCall(name="read_file", arguments={"path": path, "limit": 30})
            reply = Reply(tool_calls=[call])
        calls = [(call.name, call.arguments_text()) for call in reply.tool_calls]
        body = {"messages": request.messages, "tools": request.tools}
        return reply.model_copy(update={"tokens": template_tokens(body, reply.text, calls)})


def test_a_long_session_logs_each_prompt_once_not_once_per_call(scripted_server, tmp_path):
    """The log holds each call's prompt as the ids after those the call before it had: a long session's
    log grows with its length, not with the square of it."""
    server = scripted_server(ReadsWithTemplateTokens(steps=30))
    home = tmp_path / "home"
    result = run_streamed(
        server.url,
        "--record-tokens",
        "--budget",
        "10000000",
        "read the modules",
        cwd=big_repo(tmp_path / "repo"),
        home=home,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    sent = [r.reply.tokens for r in server.answered if r.reply and r.reply.tokens]
    assert len(sent) == 31
    in_log = [len(e.tokens.prompt_token_ids or ()) for e in logged(home) if e.tokens]
    in_prompts = [len(t.prompt_token_ids) for t in sent]
    assert sum(in_log) < 2 * max(in_prompts) < sum(in_prompts) / 5, (sum(in_log), in_prompts)
