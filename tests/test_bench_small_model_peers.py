"""The peer modes of bench/small_model.py (aider whole/diff, mini-swe-agent): the argv each peer gets, how
its output and trajectory are read, the shared runner (a fresh repo, a timeout, the check) with a stand-in
peer process, and the summary's pass rates, medians and ratios. No peer needs to be installed here."""

from __future__ import annotations

import itertools
import json
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from keel.agent.core.model.client import ModelClient
from keel.agent.core.model.reply import ModelReply
from keel.agent.core.profile import LOCAL_REPLY_TOKENS
from keel.agent.core.protocol import TokenUsage, ToolCall
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
from _small_model_aider import (
    AIDER,
    aider_command,
    aider_status,
    aider_tokens,
    model_settings,
    token_count,
)
from _small_model_keel import KeelSettings
from _small_model_mini import MINI, mini_command, read_mini, read_trajectory
from _small_model_peers import Invocation, Outcome, install_commands, run_peer
from _small_model_server import (
    GGUF_WINDOW,
    NO_LIMIT,
    EmbeddedServer,
    as_reply,
    header_facts,
    max_tokens_of,
    sampling_of,
    served_name,
)
from _small_model_summary import harness_stats, summary_lines
from _small_model_tasks import load_tasks
from small_model import parse_options
from tiny_gguf import SMALL_PARAMETERS, write_small_gguf

TASK = next(task for task in load_tasks() if task.name == "terse_add")
SETTINGS = KeelSettings("openai/qwen", "http://127.0.0.1:8392/v1", 100_000, 12, 300.0, 0.2)


# ---------------------------------------------------------------- aider


def test_aider_gets_the_model_the_edit_format_the_files_and_one_message():
    settings_file = Path("/scratch/aider-model-settings.yml")
    command = aider_command(Path("/peers/aider"), TASK, SETTINGS, "diff", True, settings_file)
    assert command[0] == "/peers/aider"
    pairs = dict(itertools.pairwise(command))
    assert pairs["--model"] == "openai/qwen"
    assert pairs["--openai-api-base"] == "http://127.0.0.1:8392/v1"
    assert pairs["--edit-format"] == "diff"
    assert pairs["--model-settings-file"] == str(settings_file)
    assert {"--yes-always", "--no-auto-commits", "--no-pretty"} <= set(command)
    assert (
        pairs["--timeout"] == "300.0"
    )  # a call may take the attempt's whole timeout, as keel's may
    files = [command[i + 1] for i, arg in enumerate(command) if arg == "--file"]
    assert sorted(files) == sorted(TASK.files) == ["calc.py", "main.py"]
    assert command[-2:] == ["--message", "add() is broken"]


def test_aider_finds_the_files_itself_when_they_are_not_given():
    command = aider_command(Path("aider"), TASK, SETTINGS, "whole", False, Path("s.yml"))
    assert "--file" not in command and command[command.index("--edit-format") + 1] == "whole"


def test_aider_samples_at_the_benchmarks_temperature_through_its_model_settings():
    # aider has no --temperature; a settings entry for the model's exact name sets it
    assert model_settings(SETTINGS) == '- name: "openai/qwen"\n  use_temperature: 0.2\n'


@pytest.mark.parametrize(
    ("text", "count"), [("950", 950), ("1.2k", 1200), ("12k", 12000), ("1,234", 1234)]
)
def test_aider_token_counts_as_it_prints_them(text, count):
    assert token_count(text) == count


def test_aider_tokens_are_summed_over_its_calls():
    output = (
        "Added calc.py to the chat.\n"
        "Tokens: 1.2k sent, 85 received.\n"
        "Applied edit to calc.py\n"
        "Tokens: 2.4k sent, 1.1k cache write, 300 cache hit, 120 received. Cost: $0.00 message\n"
    )
    assert aider_tokens(output) == (2, 1200 + 85 + 2400 + 120)
    assert aider_tokens("litellm.APIConnectionError: refused\n") == (0, 0)


def test_aiders_status_comes_from_its_exit_code_and_whether_a_call_was_answered():
    assert aider_status("Tokens: 900 sent, 40 received.\n", 0) == "completed"
    assert aider_status("Model not found\n", 0) == "no reply"
    assert aider_status("Traceback ...\n", 1) == "exit 1"


# ---------------------------------------------------------------- mini-swe-agent


def test_mini_runs_unattended_with_keels_step_limit_on_the_same_server(tmp_path):
    trajectory = tmp_path / "t.json"
    command = mini_command(Path("/peers/mini"), TASK, SETTINGS, trajectory)
    assert command[0] == "/peers/mini"
    assert {"--yolo", "--exit-immediately"} <= set(command)
    pairs = dict(itertools.pairwise(command))
    assert pairs["--agent-class"] == "default"  # no interactive prompts at all
    assert pairs["--model"] == "openai/qwen" and pairs["--task"] == "add() is broken"
    assert pairs["--output"] == str(trajectory)
    configs = [command[i + 1] for i, arg in enumerate(command) if arg == "--config"]
    assert configs[0] == "mini.yaml"  # its default config first, the overrides merged over it
    overrides = dict(spec.split("=", 1) for spec in configs[1:])
    assert overrides["agent.step_limit"] == "12" and overrides["agent.cost_limit"] == "0"
    # mini reads each value as JSON
    assert json.loads(overrides["model.model_kwargs.api_base"]) == "http://127.0.0.1:8392/v1"
    assert json.loads(overrides["model.model_kwargs.temperature"]) == 0.2
    assert json.loads(overrides["model.model_kwargs.timeout"]) == 300.0  # not litellm's 600 s
    # keel's own reply limit for a small model it is served, so a reply that never ends stops as keel's would
    assert json.loads(overrides["model.model_kwargs.max_tokens"]) == LOCAL_REPLY_TOKENS


def test_mini_textbased_runs_minis_text_config_read_by_its_text_model_class(tmp_path):
    """The text-based mode: one fenced command per reply, read by mini's text model class; the default
    mode names no model class (mini picks its tool-calling one)."""
    text = mini_command(Path("/peers/mini"), TASK, SETTINGS, tmp_path / "t.json", "mini-textbased")
    configs = [text[i + 1] for i, arg in enumerate(text) if arg == "--config"]
    assert configs[0] == "mini_textbased.yaml"
    assert dict(itertools.pairwise(text))["--model-class"] == "litellm_textbased"
    assert "--model-class" not in mini_command(
        Path("/peers/mini"), TASK, SETTINGS, tmp_path / "t.json"
    )
    assert parse_options(["--modes", "keel,mini-textbased"]).modes == ["keel", "mini-textbased"]


def usage(prompt: int, completion: int, text: str = "") -> dict:
    """A response as mini stores it in a message's extra (litellm's model_dump)."""
    return {
        "response": {
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        },
        "cost": 0.0,
    }


TRAJECTORY = {
    "info": {
        "model_stats": {"instance_cost": 0.0, "api_calls": 3},
        "exit_status": "Submitted",
        "submission": "",
        "mini_version": "2.4.6",
    },
    "messages": [
        {"role": "system", "content": "You are a helpful assistant"},
        {"role": "user", "content": "Please solve this issue: add() is broken"},
        {
            "role": "assistant",
            "content": "Look.",
            "tool_calls": [{"function": {"name": "bash", "arguments": '{"command": "ls"}'}}],
            "extra": usage(1500, 40),
        },
        {"role": "tool", "content": "calc.py", "extra": {"raw_output": "calc.py"}},
        # a reply without a tool call: mini keeps the error, and the reply in its extra
        {"role": "user", "content": "Tool call error", "extra": usage(1600, 30, "I would edit.")},
        {"role": "assistant", "content": "Done.", "extra": usage(1700, 20)},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}},
    ],
    "trajectory_format": "mini-swe-agent-1.1",
}


def test_minis_trajectory_gives_status_calls_and_every_responses_tokens(tmp_path):
    outcome = read_trajectory(TRAJECTORY)
    assert (outcome.status, outcome.calls, outcome.tokens) == ("Submitted", 3, 1540 + 1630 + 1720)
    (tmp_path / "trajectory.json").write_text(json.dumps(TRAJECTORY))
    assert read_mini("", tmp_path) == outcome
    assert "## user\nPlease solve this issue: add() is broken" in outcome.transcript
    assert '## assistant\nLook.\n-> {"command": "ls"}' in outcome.transcript
    assert "You are a helpful assistant" not in outcome.transcript  # mini's own system prompt
    assert (
        "## assistant (no tool call)\nI would edit.\n\n## user\nTool call error"
        in outcome.transcript
    )


def test_a_run_that_saved_no_trajectory_says_so(tmp_path):
    assert read_mini("", tmp_path) == Outcome("no trajectory", 0, 0)
    (tmp_path / "trajectory.json").write_text("{torn")
    assert read_mini("", tmp_path).status == "no trajectory"


def test_each_peer_is_pinned_in_a_venv_of_its_own(tmp_path):
    assert AIDER.venv(tmp_path) != MINI.venv(tmp_path)
    make, install = install_commands(MINI, tmp_path)
    assert make[-3:] == ["-m", "venv", str(tmp_path / "mini-swe-agent-2.4.6")]
    assert install[0] == str(tmp_path / "mini-swe-agent-2.4.6" / "bin" / "python")
    assert install[-1] == "mini-swe-agent==2.4.6"
    assert AIDER.binary(tmp_path) == tmp_path / "aider-chat-0.86.2" / "bin" / "aider"


# ---------------------------------------------------------------- the shared runner, with a stand-in peer

FIX = """
import json, pathlib, sys
pathlib.Path('calc.py').write_text(sys.argv[1])
pathlib.Path(sys.argv[2]).write_text(json.dumps({'tokens': 321}))
print('Tokens: 300 sent, 21 received.')
"""


def stand_in(script: str) -> Invocation:
    """A peer that is a Python one-liner: it gets the reference solution and a scratch file to write."""

    def command(repo: Path, scratch: Path) -> list[str]:
        assert (repo / ".git").is_dir() and not (repo / "check_task.py").exists()
        solution = TASK.solution["calc.py"]
        return [sys.executable, "-c", script, solution, str(scratch / "report.json")]

    def read(output: str, scratch: Path) -> Outcome:
        tokens = json.loads((scratch / "report.json").read_text())["tokens"]
        return Outcome("done", output.count("Tokens:"), tokens)

    return Invocation(command=command, env={}, read=read)


def test_a_peer_runs_in_a_fresh_repo_and_is_checked_like_keel():
    run = run_peer(TASK, stand_in(FIX), timeout=60)
    assert (run.passed, run.status, run.calls, run.tokens, run.returncode) == (
        True,
        "done",
        1,
        321,
        0,
    )
    assert "Tokens: 300 sent" in run.output


def test_a_peer_that_changes_nothing_fails_the_check():
    script = "import json, pathlib, sys; pathlib.Path(sys.argv[2]).write_text('{\"tokens\": 5}')"
    run = run_peer(TASK, stand_in(script), timeout=60)
    assert not run.passed and "failed" in run.check_output


def test_a_peer_past_the_timeout_is_stopped_and_counted_as_a_timeout():
    script = "import json, pathlib, sys, time; pathlib.Path(sys.argv[2]).write_text('{\"tokens\": 0}'); time.sleep(60)"
    run = run_peer(TASK, stand_in(script), timeout=2)
    assert (run.passed, run.status) == (False, "timeout")
    assert run.returncode is not None and run.seconds < 30


# ---------------------------------------------------------------- the summary


@dataclass
class Attempt:
    passed: bool
    tokens: int
    seconds: float


def attempts(*rows: tuple[bool, int, float]) -> list[Attempt]:
    return [Attempt(*row) for row in rows]


RESULTS = {
    "one-shot": attempts((True, 1000, 5.0), (False, 1200, 6.0), (False, 1100, 4.0)),
    "keel": attempts((True, 9000, 50.0), (True, 7000, 40.0), (False, 8000, 70.0)),
    "aider-whole": attempts((True, 3000, 20.0), (False, 2000, 10.0), (False, 4000, 30.0)),
    "aider-diff": attempts((True, 3000, 20.0), (True, 2500, 15.0), (True, 3500, 25.0)),
    "mini-swe-agent": [],  # selected but never ran: no row
}


def test_a_harness_gets_its_pass_rate_and_medians():
    stats = harness_stats("keel", RESULTS["keel"])
    assert (stats.passed, stats.attempts, stats.median_tokens, stats.median_seconds) == (
        2,
        3,
        8000,
        50.0,
    )
    assert stats.rate == pytest.approx(2 / 3)


def test_the_summary_has_a_row_per_harness_and_keels_ratios():
    lines = summary_lines(RESULTS)
    rows = {
        line.split()[0]: line.split()[1:] for line in lines[1:] if not line.startswith("keel /")
    }
    assert rows["keel"] == ["2/3", "67%", "8000", "50.0"]
    assert rows["aider-diff"] == ["3/3", "100%", "3000", "20.0"]
    assert rows["one-shot"] == ["1/3", "33%", "1100", "5.0"]
    assert "mini-swe-agent" not in rows
    assert "keel / best peer (aider-diff): 0.67 (goal >= 1.0)" in lines
    assert "keel / one-shot: 2.00 (goal >= 1.0)" in lines


def test_a_ratio_against_a_harness_that_solved_nothing_is_not_a_number():
    lines = summary_lines(
        {"keel": attempts((True, 1, 1.0)), "mini-swe-agent": attempts((False, 1, 1.0))}
    )
    assert "keel / best peer (mini-swe-agent): n/a (it solved nothing) (goal >= 1.0)" in lines
    assert not any(line.startswith("keel / one-shot") for line in lines)
    assert summary_lines({"one-shot": attempts((True, 1, 1.0))})[-1].startswith("one-shot")


# ---------------------------------------------------------------- the shared server of the embedded model


def test_the_embedded_model_is_served_under_its_catalog_name_which_says_its_size():
    assert served_name("keel-local/qwen2.5-coder-1.5b-instruct") == "qwen2.5-coder-1.5b-instruct"
    assert served_name("keel-local/qwen2.5-coder-0.5b-instruct") == "qwen2.5-coder-0.5b-instruct"
    assert served_name("keel-local/~/models/tiny-3b-q4.gguf") == "tiny-3b-q4"


def test_served_under_a_generic_name_it_says_its_size_as_llama_cpps_server_does(tmp_path):
    gguf = write_small_gguf(tmp_path / "small.gguf")
    assert header_facts(f"keel-local/{gguf}") == (SMALL_PARAMETERS, GGUF_WINDOW)
    generic = parse_options(["--served-as", "local", "--modes", "one-shot,keel"])
    named = parse_options(["--modes", "one-shot,keel"])
    assert (generic.shared_server, generic.served_as, named.shared_server) == (True, "local", False)


def test_the_models_reply_goes_out_with_its_calls_and_real_usage():
    reply = ModelReply(
        text="Reading it.",
        tool_calls=[ToolCall(id="call_7", name="bash", arguments='{"command": "ls"}')],
        usage=TokenUsage(prompt_tokens=700, completion_tokens=30, total_tokens=730),
        finish_reason="tool_calls",
    )
    sent = as_reply(reply)
    assert (sent.text, sent.finish_reason) == ("Reading it.", "tool_calls")
    assert [(c.id, c.name, c.arguments) for c in sent.tool_calls] == [
        ("call_7", "bash", '{"command": "ls"}')
    ]
    assert sent.usage is not None
    assert (sent.usage.prompt_tokens, sent.usage.completion_tokens) == (700, 30)
    assert sent.usage.total_tokens == 730


def test_a_requests_temperature_and_seed_win_over_the_servers_as_with_llama_cpps_server():
    """keel asks an answer again with a temperature and a seed of its own; llama.cpp's server honours them,
    so the bench's server must too (peers send the bench's temperature, the server's own)."""
    asked = ChatRequest.model_validate({"messages": [], "temperature": 0.7, "seed": 2})
    only = ChatRequest.model_validate({"messages": [], "seed": 5})
    assert sampling_of(asked) is not None and sampling_of(asked).fields() == {
        "temperature": 0.7,
        "seed": 2,
    }
    assert sampling_of(only) is not None and sampling_of(only).fields() == {"seed": 5}
    assert sampling_of(ChatRequest.model_validate({"messages": []})) is None


def test_the_reply_limit_is_read_under_either_name():
    assert max_tokens_of(ChatRequest.model_validate({"messages": [], "max_tokens": 512})) == 512
    asked = {"messages": [], "max_completion_tokens": 64}
    assert max_tokens_of(ChatRequest.model_validate(asked)) == 64
    # none asked: the rest of the window, as llama.cpp's server gives (not keel's embedded default)
    assert max_tokens_of(ChatRequest.model_validate({"messages": []})) == NO_LIMIT > 100_000


def ask(url: str, timeout: float, **sampling: float) -> None:
    """One chat request to the bench's server, as a harness sends it."""
    body = {"model": "local", "messages": [{"role": "user", "content": "hi"}], **sampling}
    asked = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(asked, timeout=timeout) as response:
        response.read()


def test_the_server_asks_the_model_with_the_requests_own_temperature_and_seed(scripted_server):
    """As llama.cpp's server: a request's own temperature and seed win, and one that names no seed gets a
    new one (llama.cpp draws one per request): drawn from the attempt's number and the request's, so that
    the repeats of a task differ (with one seed for all they were one attempt three times) and a run
    replays."""
    upstream = scripted_server(lambda request: Reply(text="One."))
    client = ModelClient(model="openai/upstream", api_base=upstream.url)
    with EmbeddedServer("keel-local/qwen2.5-coder-1.5b-instruct", 0.2, client=client) as served:
        ask(served.url, 60)
        ask(served.url, 60, temperature=0.7, seed=2)
        ask(served.url, 60)
        served.begin_attempt(2)
        ask(served.url, 60)
    sent = [(r.body.get("temperature"), r.body.get("seed")) for r in upstream.requests]
    assert sent == [(None, 100_001), (0.7, 2), (None, 100_003), (None, 200_001)]


def test_a_reply_whose_client_is_gone_is_stopped_before_the_next_attempt(scripted_server):
    """An attempt stopped at its timeout leaves its reply being made; the next attempt's settle stops it
    (the model call is cancelled) instead of waiting it out, which on two cores is minutes of a 1.5B's."""
    upstream = scripted_server(lambda request: Reply(text="Thinking", stall_after_chunks=1))
    client = ModelClient(model="openai/upstream", api_base=upstream.url, stall_timeout=3600.0)
    served = EmbeddedServer("keel-local/qwen2.5-coder-1.5b-instruct", 0.2, client=client)
    with served:
        with pytest.raises((TimeoutError, urllib.error.URLError)):  # the attempt's timeout
            ask(served.url, 1)
        assert served.making is not None  # its reply is still being made

        settled = threading.Thread(target=served.begin_attempt, args=(2,), daemon=True)
        settled.start()
        settled.join(timeout=60)  # waited out, the stalled reply would hold it for 30 minutes

        assert not settled.is_alive() and served.making is None
        assert served.tokens_served() == 0
