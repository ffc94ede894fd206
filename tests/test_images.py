"""Images end to end: `keel run --image`, read_file of a PNG and resume, through the real CLI and the scripted
server (which records each request), for a model that takes images and for one that does not."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

from atif import Trajectory
from keel_cli import git_repo, run_keel, run_streamed

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall
from keel.tools.images.image_file import MAX_IMAGE_BYTES

VISION = "openai/gpt-4o"  # litellm's model map: supports_vision
TEXT_ONLY = "openai/gpt-3.5-turbo"


def png(width: int = 2, height: int = 1) -> bytes:
    """A real (tiny) PNG file."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def image_parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part
        for message in messages
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]


def data_url(raw: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(raw).decode()


def run(server: Any, repo: Path, home: Path, model: str, *args: str) -> Any:
    return run_streamed(server.url, "--model", model, *args, cwd=repo, home=home)


def test_an_image_flag_reaches_a_vision_model_as_an_image_url_part(scripted_server, tmp_path):
    server = scripted_server([Reply(text="A red pixel.")])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    shot = tmp_path / "shot.png"
    shot.write_bytes(png())
    result = run(server, repo, tmp_path / "home", VISION, "--image", str(shot), "what is this?")
    assert result.returncode == 0, result.stderr

    user = next(m for m in server.requests[0].messages if m["role"] == "user")
    assert user["content"][0] == {"type": "text", "text": "what is this?"}
    assert image_parts([user]) == [{"type": "image_url", "image_url": {"url": data_url(png())}}]
    [event] = [e for e in result.events if e["type"] == "image.attached"]
    assert event["media_type"] == "image/png" and event["size"] == len(png()) and not event["note"]
    assert "data" not in event  # stream-json leaves the bytes to the session log


def test_a_text_only_model_gets_a_note_instead(scripted_server, tmp_path):
    server = scripted_server([Reply(text="I cannot see it.")])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    shot = repo / "shot.png"
    shot.write_bytes(png())
    result = run(server, repo, tmp_path / "home", TEXT_ONLY, "--image", "shot.png", "what is this?")
    assert result.returncode == 0, result.stderr
    messages = server.requests[0].messages
    assert image_parts(messages) == []
    user = next(m for m in messages if m["role"] == "user")
    assert user["content"].startswith("what is this?")
    assert "The image shot.png was not sent: this model does not take images" in user["content"]


def test_a_missing_or_oversize_image_is_a_usage_error(scripted_server, tmp_path):
    server = scripted_server([Reply(text="never asked")])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    missing = run(server, repo, home, VISION, "--image", "nope.png", "look")
    assert missing.returncode == 2 and "nope.png does not exist" in missing.stderr
    big = tmp_path / "big.png"
    big.write_bytes(png() + b"\x00" * MAX_IMAGE_BYTES)
    over = run(server, repo, home, VISION, "--image", str(big), "look")
    assert over.returncode == 2 and "over the 3.0 MB an image may be" in over.stderr
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    wrong = run(server, repo, home, VISION, "--image", str(text), "look")
    assert wrong.returncode == 2 and "is not a PNG, JPEG, GIF or WebP image" in wrong.stderr
    assert server.requests == []


def read_png_then_answer() -> list[Reply]:
    call = ScriptedToolCall(name="read_file", arguments={"path": "diagram.png"})
    return [Reply(tool_calls=[call]), Reply(text="It is a diagram.")]


def test_read_file_of_a_png_gives_a_vision_model_the_image(scripted_server, tmp_path):
    server = scripted_server(read_png_then_answer())
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (repo / "diagram.png").write_bytes(png(3, 2))
    result = run(server, repo, tmp_path / "home", VISION, "describe diagram.png")
    assert result.returncode == 0, result.stderr
    finished = [e for e in result.events if e["type"] == "tool.finished"]
    assert finished[0]["status"] == "ok" and "diagram.png is an image" in finished[0]["output"]

    messages = server.requests[1].messages
    roles = [m["role"] for m in messages]
    tool_at = roles.index("tool")
    # the image follows the tool result, in a user message of its own
    assert roles[tool_at + 1] == "user"
    after = messages[tool_at + 1]
    assert image_parts([after]) == [
        {"type": "image_url", "image_url": {"url": data_url(png(3, 2))}}
    ]
    assert "read_file read from diagram.png" in after["content"][0]["text"]


def test_read_file_of_a_png_tells_a_text_only_model_it_cannot_see_it(scripted_server, tmp_path):
    server = scripted_server(read_png_then_answer())
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (repo / "diagram.png").write_bytes(png())
    result = run(server, repo, tmp_path / "home", TEXT_ONLY, "describe diagram.png")
    assert result.returncode == 0, result.stderr
    [finished] = [e for e in result.events if e["type"] == "tool.finished"]
    assert finished["status"] == "error"
    assert "this model does not take images" in finished["output"]
    assert image_parts(server.requests[1].messages) == []
    assert not [e for e in result.events if e["type"] == "image.attached"]


def test_a_resumed_session_sends_the_same_images_again(scripted_server, tmp_path):
    server = scripted_server([Reply(text="A red pixel."), Reply(text="Still red.")])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    shot = tmp_path / "shot.png"
    shot.write_bytes(png())
    first = run(server, repo, home, VISION, "--image", str(shot), "what is this?")
    assert first.returncode == 0, first.stderr
    shot.unlink()  # the log holds the image: the file is not needed again
    session = first.events[0]["session_id"]
    again = run(server, repo, home, VISION, "--resume", session, "and now?")
    assert again.returncode == 0, again.stderr
    before, after = server.requests[0].messages, server.requests[1].messages
    assert image_parts(after) == image_parts(before) != []
    logged = (home / "sessions" / f"{session}.jsonl").read_text().splitlines()
    images = [json.loads(line) for line in logged if '"image.attached"' in line]
    assert images[0]["data"] == base64.b64encode(png()).decode()


def test_the_atif_export_carries_the_images_as_content_parts(scripted_server, tmp_path):
    server = scripted_server(read_png_then_answer())
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    (repo / "diagram.png").write_bytes(png(3, 2))
    (repo / "shot.png").write_bytes(png())
    result = run(server, repo, home, VISION, "--image", "shot.png", "compare with diagram.png")
    assert result.returncode == 0, result.stderr
    session = result.events[0]["session_id"]
    exported = run_keel("export", session, "--format", "atif", cwd=repo, home=home)
    assert exported.returncode == 0, exported.stderr
    trajectory = Trajectory.model_validate_json(exported.stdout.splitlines()[0])

    prompt = trajectory.steps[0]
    assert isinstance(prompt.message, list)
    assert [part.type for part in prompt.message] == ["text", "image"]
    assert prompt.message[0].text == "compare with diagram.png"
    assert prompt.message[1].source.path == data_url(png())
    observed = next(s for s in trajectory.steps if s.observation)
    assert observed.observation is not None
    [result_] = observed.observation.results
    assert isinstance(result_.content, list)
    assert "diagram.png is an image" in result_.content[0].text
    assert result_.content[1].source.path == data_url(png(3, 2))


def test_a_secret_in_the_text_beside_an_image_is_redacted_on_the_wire():
    from keel.agent.core.model.redact import MASK, Redactor, _redact_message

    secret = "cnry7x0123456789abcdef01234567"
    image = {"type": "image_url", "image_url": {"url": data_url(png())}}
    message = {"role": "user", "content": [{"type": "text", "text": f"token {secret}"}, image]}
    clean = _redact_message(message, Redactor((secret,)).redact)
    assert clean["content"] == [{"type": "text", "text": f"token {MASK}"}, image]


def test_a_session_resumed_with_a_text_only_model_leaves_its_images_out(scripted_server, tmp_path):
    server = scripted_server([Reply(text="A red pixel."), Reply(text="No image here.")])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    (repo / "shot.png").write_bytes(png())
    first = run(server, repo, home, VISION, "--image", "shot.png", "what is this?")
    assert first.returncode == 0, first.stderr
    session = first.events[0]["session_id"]
    again = run(server, repo, home, TEXT_ONLY, "--resume", session, "and now?")
    assert again.returncode == 0, again.stderr
    after = server.requests[1].messages
    assert image_parts(after) == []
    prompt = next(m for m in after if m["role"] == "user")
    assert prompt["content"].startswith("what is this?")
    assert "An image sent with this message earlier is left out" in prompt["content"]
