"""The failures any model may show (issue 29, point 2), through the real `keel run` against the scripted
server, for a capable model under the full profile and for a small one: a call to a tool that does not exist
is a call, a copy of keel's own text is not an answer, a tool description's example refuses to run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from keel_cli import KeelResult, git_repo, run_keel
from small_model_support import CALC, CAPABLE, FIX, SMALL, call, model_answer

from keel.agent.harness.testing.scripted_server import Reply, ReplyLike, ScriptedServer
from keel.agent.harness.testing.scripted_wire import ChatRequest, content_text
from keel.tools.apply_patch import ApplyPatchTool

MODELS = pytest.mark.parametrize("model", [CAPABLE, SMALL], ids=["capable", "small"])
DONE = "Fixed: add() adds now."
DESCRIPTION = ApplyPatchTool.description
EXAMPLE_PATCH = DESCRIPTION[
    DESCRIPTION.index("*** Begin Patch") : DESCRIPTION.index("*** End Patch")
]
EXAMPLE_PATCH += "*** End Patch\n"
ADDED_FILE = EXAMPLE_PATCH[EXAMPLE_PATCH.index("*** Add File") : EXAMPLE_PATCH.index("*** Delete")]


def run(
    server: ScriptedServer, model: str, repo: Path, prompt: str = "add() is broken"
) -> KeelResult:
    """One task through `keel run`, its events as stream-json."""
    result = run_keel(
        "run",
        "--model",
        model,
        "--api-base",
        server.url,
        "--output-format",
        "stream-json",
        prompt,
        cwd=repo,
        home=repo.parent / "home",
    )
    assert result.returncode in (0, 1), result.stderr[-3000:]
    return result


def finished(result: KeelResult) -> dict[str, Any]:
    return result.events[-1]


def corrections(result: KeelResult) -> list[str]:
    return [
        e["text"]
        for e in result.events
        if e["type"] == "user.message" and e.get("purpose") == "correction"
    ]


def tool_results(result: KeelResult) -> list[dict[str, Any]]:
    return [e for e in result.events if e["type"] == "tool.finished"]


def changed(repo: Path) -> list[str]:
    """git's short status of the repository, a line per changed or new file."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return status.stdout.splitlines()


def unchanged(repo: Path) -> bool:
    return changed(repo) == []


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo", CALC)


def rename_call(name: str = "rename") -> dict[str, Any]:
    return {"name": name, "arguments": {"old": "add", "new": "plus"}}


# ------------------------------------------------ a call-shaped reply is a call, whatever its name


@MODELS
@pytest.mark.parametrize(
    "shape",
    [
        lambda c: f"```json\n{json.dumps(c)}\n```",
        lambda c: json.dumps(c, indent=2),
        lambda c: f"I will rename it: {json.dumps(c)}",
    ],
    ids=["fenced", "bare", "in-prose"],
)
def test_a_call_to_a_tool_that_does_not_exist_gets_the_tools_not_the_end(
    scripted_server, repo, model, shape
):
    server = scripted_server([Reply(text=shape(rename_call())), call("edit_file", **FIX), DONE])
    result = run(server, model, repo)
    assert finished(result)["status"] == "completed", finished(result)
    assert model_answer(finished(result)["final_message"]) == DONE
    first = tool_results(result)[0]
    assert first["name"] == "rename" and not first["ok"]
    assert "no tool named 'rename'" in first["output"] and "edit_file" in first["output"]
    seen = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert "read_file" in seen[-1]["content"]  # the model read the list of tools
    assert "return a + b" in (repo / "calc.py").read_text()


@MODELS
def test_calls_to_tools_that_do_not_exist_end_the_task_honestly(scripted_server, repo, model):
    names = ["rename", "summary", "add_textutil_slugify", "refactor", "done", "finish", "x"]
    replies: list[ReplyLike] = [f"```json\n{json.dumps(rename_call(n))}\n```" for n in names]
    server = scripted_server(replies)
    result = run(server, model, repo)
    assert finished(result)["status"] == "error", finished(result)
    assert "do not exist" in finished(result)["reason"]
    assert len(server.requests) == 4  # three lists of tools, then the task stops
    assert unchanged(repo)


# ------------------------------------------------ a copy of keel's own text is not an answer

ECHOES = {
    "status-tags": "<status><tokens_used>0</tokens_used><budget>none</budget></status>",
    "status-line": "[keel status] Tokens used for this task: 1,024. Context: 2,048 of 16,384 tokens.",
    "tool-response": "<tool_response>\n1  def add(a, b):\n2      return a - b\n</tool_response>",
    "example-as-text": EXAMPLE_PATCH,
}


@MODELS
@pytest.mark.parametrize("echo", ECHOES.values(), ids=ECHOES.keys())
def test_a_reply_that_only_repeats_keel_is_corrected_not_taken_as_the_answer(
    scripted_server, repo, model, echo
):
    server = scripted_server(
        [call("read_file", path="calc.py"), Reply(text=echo), call("edit_file", **FIX), DONE]
    )
    result = run(server, model, repo)
    assert finished(result)["status"] == "completed", finished(result)
    assert model_answer(finished(result)["final_message"]) == DONE
    said = corrections(result)
    assert len(said) == 1 and "not an answer" in said[0], said
    told = [m["content"] for m in server.requests[2].messages if m["role"] == "user"]
    assert any("not an answer" in text for text in told)  # the model read the correction
    assert "return a + b" in (repo / "calc.py").read_text()


@MODELS
def test_echoes_in_a_row_end_the_task_honestly(scripted_server, repo, model):
    server = scripted_server([Reply(text=ECHOES["status-tags"])] * 8)
    result = run(server, model, repo)
    assert finished(result)["status"] == "error", finished(result)
    assert "not an answer" in finished(result)["reason"]
    assert len(server.requests) == 4 and unchanged(repo)


def test_the_last_words_of_keels_nudge_are_not_an_answer(scripted_server, repo):
    """The 0.5B, nudged ("… If nothing needs to change, say why."), replied "why." and the task ended
    `completed` with that as its answer."""
    server = scripted_server([DONE, Reply(text="why."), call("edit_file", **FIX), DONE])
    result = run(server, SMALL, repo)
    said = corrections(result)
    assert len(said) == 1 and "last words" in said[0], said
    assert model_answer(finished(result)["final_message"]) == DONE
    assert "return a + b" in (repo / "calc.py").read_text()


@MODELS
def test_a_correction_s_sentence_and_an_empty_fence_are_not_an_answer(scripted_server, repo, model):
    """The 1.5B, corrected, answered with the correction's sentence about how to call a tool and an opening
    ```json fence, and the task ended `completed` with that sentence as its answer. (A small model's answer
    to the project's files is corrected in their form, whole files: here it answers them in words, is nudged
    and then calls a tool.)"""
    broken = '<tool_call>\n{"name": "edit_file", "arguments": {"path": calc.py}}\n</tool_call>'
    sentence = (
        'To call a tool, send exactly one JSON object with "name" and "arguments" inside tags, and '
        "nothing after it:\n```json\n\n"
    )
    words: list[ReplyLike] = ["add() looks right to me."] if model == SMALL else []
    script: list[ReplyLike] = [*words, broken, sentence, call("edit_file", **FIX), DONE]
    result = run(scripted_server(script), model, repo)
    said = corrections(result)
    assert len(said) == 2 and "not an answer" in said[1], said
    assert model_answer(finished(result)["final_message"]) == DONE
    assert "return a + b" in (repo / "calc.py").read_text()


# ------------------------------------------------ a tool description's example fails loudly

EXAMPLES = {
    "whole-patch": ("apply_patch", {"patch": EXAMPLE_PATCH}),
    "added-file": ("apply_patch", {"patch": f"*** Begin Patch\n{ADDED_FILE}*** End Patch\n"}),
    "write-file": ("write_file", {"path": "path/to/EXAMPLE_ONLY.py", "content": "x = 1\n"}),
    "correction": ("write_file", {"path": "...", "content": "..."}),  # a correction's example call
}


@MODELS
@pytest.mark.parametrize("example", EXAMPLES.values(), ids=EXAMPLES.keys())
def test_a_copied_example_changes_nothing_and_says_so(scripted_server, repo, model, example):
    name, arguments = example
    server = scripted_server([call(name, **arguments), call("edit_file", **FIX), DONE])
    result = run(server, model, repo)
    first = tool_results(result)[0]
    assert not first["ok"], first
    offered = not (model == SMALL and name == "apply_patch")  # a small model has no apply_patch
    says = "placeholder from an example" if offered else "no tool named"
    assert says in first["output"], first["output"]
    assert (
        finished(result)["status"] == "completed"
        and model_answer(finished(result)["final_message"]) == DONE
    )
    assert changed(repo) == [" M calc.py"]  # only by the edit that followed


def test_a_small_models_echo_of_the_project_files_writes_nothing(scripted_server, tmp_path):
    """The 0.5B echoed keel's "The project's files as they are now…" message: its `FILE:` blocks are keel's,
    not writes (one overwrote app.py with util.py's text)."""
    files = {**CALC, "util.py": "def slug(text):\n    return text.lower()\n"}
    repo = git_repo(tmp_path / "repo", files)
    replies = iter([call("edit_file", **FIX), Reply(text=DONE)])
    asked: list[ChatRequest] = []

    def responder(request: ChatRequest) -> ReplyLike:
        asked.append(request)
        given = [m for m in request.messages if "The project's files" in content_text(m["content"])]
        if len(asked) == 1 and given:  # the first request: echo keel's message
            return Reply(text=content_text(given[0]["content"]))
        return next(replies)

    server = scripted_server(responder)
    result = run(server, SMALL, repo)
    assert (
        finished(result)["status"] == "completed"
        and model_answer(finished(result)["final_message"]) == DONE
    )
    said = corrections(result)
    assert len(said) == 1 and "not an answer" in said[0], said
    assert [e["name"] for e in tool_results(result)] == ["edit_file"]
    assert (repo / "util.py").read_text() == files["util.py"]
