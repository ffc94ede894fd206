"""web_fetch end to end: the scripted model fetches pages from a real HTTP server on 127.0.0.1 through the real
`keel run`, and the page converter and the bounds on their own."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from keel_cli import git_repo, run_streamed

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall
from keel.tools.base import ToolContext
from keel.tools.exec.sandbox_policy import SandboxPolicy
from keel.tools.registry import ToolRegistry
from keel.tools.web_fetch import WebFetchTool
from keel.tools.webfetch.fetching import FetchError, fetch
from keel.tools.webfetch.html_text import html_to_text

PAGE = (
    "<!doctype html><html><head><title>Widget docs</title><style>body{color:red}</style>"
    "<script>alert('x')</script></head><body><nav><a href='/'>Home</a></nav>"
    "<h1>Widgets</h1><p>Call <code>make_widget(size)</code> to build one.</p>"
    "<ul><li>small</li><li>large</li></ul><p>See <a href='/api'>the API</a>.</p>"
    "<pre>w = make_widget(3)\nprint(w)</pre></body></html>"
)
BIG = (
    "<html><body>"
    + "".join(f"<p>paragraph {i} of a long page</p>" for i in range(5000))
    + "</body></html>"
)


class _Site(BaseHTTPRequestHandler):
    """/old redirects twice to /page; /loop redirects forever; /big is a long page; /image is a PNG."""

    def do_GET(self) -> None:
        routes = {"/old": "/older", "/older": "/page"}
        if self.path in routes or self.path.startswith("/loop"):
            target = routes.get(self.path) or f"/loop{len(self.path)}"
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/drip":  # a byte every 0.2 s: each read is quick, the whole is not
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "40")
            self.end_headers()
            try:
                for _ in range(40):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.2)
            except (BrokenPipeError, ConnectionResetError):  # the fetch gave up, as it should
                pass
            return
        kinds = {"/page": (PAGE, "text/html; charset=utf-8"), "/big": (BIG, "text/html")}
        body, kind = kinds.get(self.path, ("\x89PNG\r\n\x1a\n\x00\x00", "image/png"))
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def fetch_then_answer(url: str, **extra: Any) -> list[Reply]:
    call = ScriptedToolCall(name="web_fetch", arguments={"url": url, **extra})
    return [Reply(tool_calls=[call]), Reply(text="Read it.")]


def fetched(result: Any) -> dict[str, Any]:
    finished = [e for e in result.events if e["type"] == "tool.finished"]
    assert [e["name"] for e in finished] == ["web_fetch"], result.stderr
    return finished[0]


def test_the_model_fetches_a_page_through_redirects_as_readable_text(
    scripted_server, site, tmp_path
):
    server = scripted_server(fetch_then_answer(f"{site}/old"))
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_streamed(
        server.url, "--allow-network", "read the docs", cwd=repo, home=tmp_path / "home"
    )
    assert result.returncode == 0, result.stderr
    event = fetched(result)
    assert event["status"] == "ok", event["output"]
    output = event["output"]
    assert f"redirected to {site}/page" in output and 'title "Widget docs"' in output
    assert "Untrusted content from the web" in output
    assert "# Widgets" in output and "`make_widget(size)`" in output
    assert "- small\n- large" in output and "[the API](/api)" in output
    assert "```\nw = make_widget(3)\nprint(w)\n```" in output
    assert "alert" not in output and "color:red" not in output and "Home" not in output
    # the model got the same text as the tool's result
    results = [m for m in server.requests[-1].messages if m["role"] == "tool"]
    assert results and "# Widgets" in results[0]["content"]


def test_without_the_network_the_fetch_is_refused_and_says_how_to_allow_it(
    scripted_server, site, tmp_path
):
    server = scripted_server(fetch_then_answer(f"{site}/page"))
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_streamed(server.url, "read the docs", cwd=repo, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    event = fetched(result)
    assert event["status"] == "error"
    assert "network is not allowed" in event["output"] and "--allow-network" in event["output"]
    assert "Widgets" not in event["output"]


def test_it_needs_approval_as_a_command_does(scripted_server, site, tmp_path):
    server = scripted_server(fetch_then_answer(f"{site}/page"))
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_streamed(
        server.url,
        "--allow-network",
        "--approval",
        "auto-edit",
        "read the docs",
        cwd=repo,
        home=tmp_path / "home",
    )
    event = fetched(result)
    assert event["status"] == "denied" and "needs a person's approval" in event["output"]


def test_a_long_page_is_cut_at_max_chars_and_says_how_to_read_more(scripted_server, site, tmp_path):
    server = scripted_server(fetch_then_answer(f"{site}/big", max_chars=1000))
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = run_streamed(
        server.url, "--allow-network", "read the docs", cwd=repo, home=tmp_path / "home"
    )
    output = fetched(result)["output"]
    assert "paragraph 0 of a long page" in output and "paragraph 4999" not in output
    assert "cut at 1,000 of" in output and "larger max_chars" in output
    body = output.split("\n\n", 1)[1]
    assert len(body) < 1500


async def run_tool(ctx: ToolContext, **arguments: Any) -> Any:
    registry = ToolRegistry([WebFetchTool()])
    tool, args = registry.validate("web_fetch", arguments)
    return await registry.run(tool, args, ctx)


@pytest.fixture
def online(ctx: ToolContext) -> ToolContext:
    ctx.sandbox = SandboxPolicy(network=True)
    return ctx


async def test_redirects_are_bounded(online: ToolContext, site: str) -> None:
    result = await run_tool(online, url=f"{site}/loop")
    assert not result.ok and "redirected more than 5 times" in result.output


async def test_only_http_and_https_urls_and_only_text(online: ToolContext, site: str) -> None:
    local = await run_tool(online, url="file:///etc/passwd")
    assert not local.ok and "only http:// and https://" in local.output
    image = await run_tool(online, url=f"{site}/image")
    assert not image.ok and "image/png, not a page or text" in image.output


def test_html_to_text_keeps_structure_and_drops_markup() -> None:
    title, text = html_to_text(
        "<title> T </title><h2>Sub</h2><ol><li>one</li><li>two <a href='#x'>here</a></li></ol>"
        "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table><p>x &amp; y</p>"
    )
    assert title == "T"
    assert text == "## Sub\n\n1. one\n2. two [here]\n\n| a | b |\n| 1 | 2 |\n\nx & y"


def test_an_untrusted_repository_cannot_turn_the_network_on_for_it(scripted_server, site, tmp_path):
    repo = git_repo(
        tmp_path / "repo", {"a.txt": "a\n", ".keel/config.toml": "[sandbox]\nnetwork = true\n"}
    )
    home = tmp_path / "home"
    server = scripted_server(fetch_then_answer(f"{site}/page") * 2)
    untrusted = run_streamed(server.url, "read the docs", cwd=repo, home=home)
    assert untrusted.returncode == 0, untrusted.stderr
    assert "network is not allowed" in fetched(untrusted)["output"]
    trusted = run_streamed(server.url, "--trust", "read the docs", cwd=repo, home=home)
    assert trusted.returncode == 0, trusted.stderr
    assert "# Widgets" in fetched(trusted)["output"]


async def test_the_bytes_read_are_capped_and_a_silent_server_times_out(site: str) -> None:
    page = await fetch(f"{site}/big", max_bytes=1000)
    assert page.cut and len(page.body) == 1000
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections, never answers
    try:
        with pytest.raises(FetchError, match="did not answer within 0.5 s"):
            await fetch(f"http://127.0.0.1:{silent.getsockname()[1]}/", timeout=0.5)
    finally:
        silent.close()
    with pytest.raises(FetchError, match="did not answer within 1 s"):
        await fetch(f"{site}/drip", timeout=1)


def test_an_acp_editor_sees_web_fetch_as_a_fetch() -> None:
    from keel.agent.acp.tool_calls import tool_kind

    assert tool_kind("web_fetch") == "fetch"
