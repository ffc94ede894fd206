"""One MCP server for one session: started, listed, called, stopped, all through the `mcp` SDK's client.

The SDK's transports are anyio context managers that must be entered and left by the same task, so
each server lives in a task of its own (`_serve`); the session only waits for it to be ready, calls it,
and cancels it. A stdio server is its own process group: the SDK closes its stdin, then SIGTERMs and
SIGKILLs the group, so nothing it started outlives the session. If keel itself is killed, the server
reads end-of-file on its stdin, which ends every well-behaved stdio server.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shlex
import shutil
import signal
import tempfile
from contextlib import AsyncExitStack, suppress
from enum import Enum
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types
from pydantic import BaseModel, ConfigDict

from keel.tools.exec.sandbox_policy import SandboxPolicy
from keel.tools.mcp.config import McpServerConfig

STDERR_TAIL = 600  # characters of a failed server's stderr quoted in its notice


class ServerState(str, Enum):
    STARTING = "starting"
    STARTED = "started"
    FAILED = "failed"
    DISABLED = "disabled"
    STOPPED = "stopped"


class RemoteTool(BaseModel):
    """A tool as its server lists it; `input_schema` is the server's JSON schema of its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    input_schema: dict[str, Any]


class McpCallFailed(Exception):
    """A call that did not reach a result: the server is gone, timed out, or answered with a protocol error."""


class McpConnection:
    """One configured server and the state of its connection."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        cwd: Path,
        log_dir: Path,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.cwd = cwd
        self.sandbox = sandbox or SandboxPolicy()
        self.stderr_path = log_dir / f"mcp-{name}.stderr"
        self.state = ServerState.STARTING if config.enabled else ServerState.DISABLED
        self.problem = ""  # why it failed, for a person
        self.tools: list[RemoteTool] = []
        self._session: Any = None  # mcp.ClientSession once started
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None

    def start(self) -> None:
        """Begin connecting in the server's own task; `wait_started` waits for the outcome."""
        if self.state is ServerState.STARTING and self._task is None:
            self._task = asyncio.create_task(self._serve(), name=f"mcp-{self.name}")

    async def wait_started(self) -> None:
        """Until the server is listed or has failed; past startup_timeout_sec it has failed."""
        if self._task is None:
            return
        timeout = self.config.startup_timeout_sec
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            self._fail(
                f"did not answer within startup_timeout_sec = {timeout:g}{self._stderr_note()}"
            )
            await self.stop()

    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call one of the server's tools by its own name; McpCallFailed when no result came back."""
        from mcp.shared.exceptions import MCPError

        if self.state is not ServerState.STARTED or self._session is None:
            raise McpCallFailed(f"the MCP server {self.name!r} is not running ({self.describe()})")
        timeout = self.config.tool_timeout_sec
        try:
            result: mcp_types.CallToolResult = await self._session.call_tool(
                tool, arguments, read_timeout_seconds=timeout
            )
        except MCPError as exc:
            message = exc.error.message
            if "timed out" in message.lower() or exc.error.code == 408:
                message = f"no answer within tool_timeout_sec = {timeout:g} ({message})"
            raise McpCallFailed(f"the MCP server {self.name!r} answered: {message}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            raise McpCallFailed(
                f"the MCP server {self.name!r} has gone away{self._stderr_note()}"
            ) from None
        return result

    async def stop(self) -> None:
        """End the connection and, for a stdio server, its process (group); waits until it is gone."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._scope is not None:
            self._scope.cancel()
        else:
            task.cancel()
        await asyncio.wait([task])
        if self.config.command is not None:
            end_holders(self.stderr_path)
        if self.state is ServerState.STARTED:
            self.state = ServerState.STOPPED
        self._session = None

    def describe(self) -> str:
        """The state in a few words, with why for a failure."""
        if self.state is ServerState.FAILED:
            return f"failed: {self.problem}"
        return str(self.state.value)

    def where(self) -> str:
        """The command or address, for `keel mcp list`."""
        if self.config.command is not None:
            return " ".join([self.config.command, *self.config.args])
        return str(self.config.url)

    async def _serve(self) -> None:
        """Connect, list the tools, then hold the connection open until cancelled."""
        with anyio.CancelScope() as scope:
            self._scope = scope
            try:
                async with AsyncExitStack() as stack:
                    await self._connect(stack)
                    self.state = ServerState.STARTED
                    self._ready.set()
                    await anyio.sleep_forever()
            except Exception as exc:  # noqa: BLE001 - any failure of a server is its notice, not keel's crash
                self._fail(_explain(exc) + self._stderr_note())
            finally:
                if self.state is ServerState.STARTING:
                    self._fail("stopped before it started")

    async def _connect(self, stack: AsyncExitStack) -> None:
        from mcp import ClientSession

        if self.config.command is not None:
            read, write = await stack.enter_async_context(await self._stdio(stack))
        else:
            read, write = await stack.enter_async_context(await self._http(stack))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools = [
            RemoteTool(
                name=tool.name, description=tool.description or "", input_schema=tool.input_schema
            )
            for tool in listed
            if self.config.offers(tool.name)
        ]
        self._session = session

    async def _stdio(self, stack: AsyncExitStack) -> Any:
        """The server's process, started as run_command starts a command: in the sandbox, with an
        environment without keel's secrets (plus the server's own `env`)."""
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from keel.tools.exec.sandbox import plan_command

        self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        errlog: TextIO = stack.enter_context(self.stderr_path.open("w", encoding="utf-8"))
        assert self.config.command is not None
        # relative: to the workspace
        cwd = self.cwd / self.config.cwd if self.config.cwd else self.cwd
        program = [os.path.expanduser(self.config.command), *self.config.args]
        _check_program(program[0], cwd)
        plan = await plan_command(
            self.sandbox,
            self.cwd,
            [self.stderr_path.parent, *_hidden_server_files(program)],
            f"cd {shlex.quote(str(cwd))} && exec {shlex.join(program)}",
            leftover_note=f"[the MCP server {self.name!r} left processes running; they were stopped]",
            temp_dir=lambda: self._temp_dir(stack),
        )
        if plan.warning:
            errlog.write(f"keel: {plan.warning}\n")
        params = StdioServerParameters(
            command=plan.argv[0],
            args=plan.argv[1:],
            env={**plan.env, **self.config.env},
            cwd=cwd if cwd.is_dir() else self.cwd,
        )
        return stdio_client(params, errlog=errlog)

    def _temp_dir(self, stack: AsyncExitStack) -> Path:
        """A private temp folder for a Landlock-confined server, removed when its connection ends."""
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"keel-mcp-{self.name}-"))
        return Path(folder)

    async def _http(self, stack: AsyncExitStack) -> Any:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = dict(self.config.http_headers)
        if variable := self.config.bearer_token_env_var:
            token = os.environ.get(variable)
            if not token:
                raise RuntimeError(f"bearer_token_env_var names {variable}, which is not set")
            headers["Authorization"] = f"Bearer {token}"
        client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        assert self.config.url is not None
        return streamable_http_client(self.config.url, http_client=client)

    def _fail(self, problem: str) -> None:
        if self.state in (ServerState.STARTING, ServerState.STARTED):
            self.state, self.problem = ServerState.FAILED, problem
        self._session = None
        self._ready.set()

    def _stderr_note(self) -> str:
        """The end of a stdio server's stderr, which usually says why it stopped."""
        try:
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""
        if not text:
            return ""
        tail = text[-STDERR_TAIL:]
        return (
            f"; its stderr ends: {tail}"
            if len(tail) == len(text)
            else f"; its stderr ends: …{tail}"
        )


def _hidden_server_files(program: list[str]) -> list[Path]:
    """The folders of the server's own files (its program and path arguments) that bubblewrap's
    private /tmp would hide: shown to it read-only, as the rest of the host is."""
    folders: list[Path] = []
    for word in program:
        if not os.path.isabs(word) or not os.path.exists(word):
            continue
        real = Path(os.path.realpath(word))
        folder = real if real.is_dir() else real.parent
        if folder.is_relative_to("/tmp") and folder != Path("/tmp") and folder not in folders:
            folders.append(folder)
    return folders


def _check_program(command: str, cwd: Path) -> None:
    """FileNotFoundError (said as "no such program") before the sandbox's shell would only say so on stderr."""
    found = (cwd / command).exists() if os.sep in command else shutil.which(command) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


def end_holders(log: Path) -> None:
    """Kill what a stdio server left behind: the SDK ends the server's process group only when the server
    does not exit by itself, and a child it started may live on in a group of its own. Every process the
    server started holds its stderr log (this connection's own file) open, unless it closed it."""
    targets = {str(log), f"{log} (deleted)"}  # the log may be gone with the scratch folder
    if not os.path.isdir("/proc"):
        return
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = os.scandir(f"/proc/{entry.name}/fd")
            holds = any(os.readlink(fd.path) in targets for fd in fds)
        except OSError:  # gone, or not ours to look at
            continue
        if holds:
            with suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


def _explain(exc: BaseException) -> str:
    """One line for what went wrong, through the exception groups anyio wraps failures in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"cannot start {exc.filename!r}: no such program (check command and PATH)"
    if isinstance(exc, PermissionError) and exc.filename:
        return f"cannot start {exc.filename!r}: permission denied"
    text = str(exc).strip() or type(exc).__name__
    return text if ":" in text or " " in text else f"{type(exc).__name__}: {text}"
