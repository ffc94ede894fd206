"""A local model's progress (assembling, loading, reading a long prompt) as each front end shows it."""

from __future__ import annotations

import io
import json

from keel.agent.cli.headless import StreamJsonPrinter, TextPrinter
from keel.agent.core.protocol import AssistantMessage, ModelProgress, parse_event
from keel.agent.core.store import SessionLog, read_events
from keel.tui.transcript import NoticeEntry, SessionStats, Transcript
from keel.tui.widgets.status_bar import status_text

FIRST_STEP = [
    ModelProgress(stage="assembling", message="assembling the embedded model into /m.gguf (once)"),
    ModelProgress(stage="loading", message="loading m.gguf"),
    ModelProgress(stage="ready", message="the embedded model is ready"),
    ModelProgress(stage="prompt", done=0, total=1574),
    ModelProgress(stage="prompt", done=512, total=1574),
]


def test_text_mode_says_each_stage_on_stderr_and_keeps_stdout_for_the_answer():
    out, err = io.StringIO(), io.StringIO()
    printer = TextPrinter(out, err)
    for event in FIRST_STEP:
        printer.handle(event)
    assert err.getvalue().splitlines() == [
        "keel: assembling the embedded model into /m.gguf (once)",
        "keel: loading m.gguf",
        "keel: the embedded model is ready",
        "keel: reading the prompt: 0/1,574 tokens",
        "keel: reading the prompt: 512/1,574 tokens",
    ]
    assert out.getvalue() == ""


def test_stream_json_carries_each_progress_event():
    out, err = io.StringIO(), io.StringIO()
    printer = StreamJsonPrinter(out, err)
    for event in FIRST_STEP:
        printer.handle(event)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["type"] for line in lines] == ["model.progress"] * len(FIRST_STEP)
    assert lines[-1]["stage"] == "prompt" and (lines[-1]["done"], lines[-1]["total"]) == (512, 1574)
    assert parse_event(out.getvalue().splitlines()[-1]) == FIRST_STEP[-1]


def test_progress_is_published_but_not_logged(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl")
    for event in [*FIRST_STEP, AssistantMessage(text="hi")]:
        log.append(event)
    log.close()
    assert [event.type for event in read_events(tmp_path / "s.jsonl")] == ["assistant.message"]


def test_the_ui_status_follows_the_first_step_and_clears_when_the_model_answers():
    transcript = Transcript(SessionStats(model="keel-local/m"))
    seen = []
    for event in FIRST_STEP:
        transcript.apply(event)
        seen.append(transcript.stats.activity)
    assert seen == [
        "assembling the model",
        "loading the model",
        "",
        "reading the prompt 0%",
        "reading the prompt 33%",
    ]
    assert "reading the prompt 33%" in status_text("agent 1", transcript.stats).plain
    notices = [
        (entry.text, entry.level) for entry in transcript.entries if isinstance(entry, NoticeEntry)
    ]
    assert (
        notices
        == [  # "ready" follows "assembling" in the transcript, so the one-time wait visibly ends
            ("assembling the embedded model into /m.gguf (once)", "info"),
            ("the embedded model is ready", "success"),
        ]
    )
    transcript.apply(AssistantMessage(text="done"))
    assert transcript.stats.activity == ""
    assert "reading" not in status_text("agent 1", transcript.stats).plain


def test_a_dead_worker_is_said_once_in_the_transcript():
    from keel.agent.core.protocol import Error, TaskFinished, TokenUsage

    transcript = Transcript(SessionStats(model="keel-local/m"))
    message = "the embedded model's worker process died (SIGSEGV, segmentation fault)"
    transcript.apply(Error(error_class="ModelWorkerDied", message=message, fatal=True))
    transcript.apply(
        TaskFinished(
            status="error",
            final_message="",
            usage=TokenUsage(),
            steps=0,
            reason=f"ModelWorkerDied: {message}",
        )
    )
    said = [entry.text for entry in transcript.entries if isinstance(entry, NoticeEntry)]
    assert sum(message in text for text in said) == 1, said
    assert said[-1].startswith("error · this task: 0 steps") and transcript.stats.status == "error"
