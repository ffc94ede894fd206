"""Commands as process groups: start one with its output piped into a capture, find its members, end them all.

Each command is the leader of a new session (so it has no controlling terminal and its children
share its process group); /proc tells which processes are left and whether any is stuck waiting
for terminal input that will never come.
"""

from __future__ import annotations

import asyncio
import os
import platform
import signal
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from keel.tools.exec.output_capture import OutputCapture

READ_CHUNK = 64 * 1024
_TTY_MAJORS = {4, 5} | set(range(136, 144))

# Linux syscall numbers, by machine: calls that read one fd, and calls that wait on several.
_READ_CALLS = {"x86_64": {0, 17, 19, 295, 327}, "aarch64": {63, 65, 67, 69, 286}}
_SELECT_CALLS = {"x86_64": {23, 270}, "aarch64": {72}}
_POLL_CALLS = {"x86_64": {7, 271, 232, 281, 441}, "aarch64": {73, 22, 441}}


@dataclass
class ProcessInfo:
    pid: int
    state: str
    ppid: int
    pgrp: int
    session: int


def process_info(pid: int) -> ProcessInfo | None:
    """What /proc says about one process, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return ProcessInfo(
        pid=pid, state=fields[0], ppid=int(fields[1]), pgrp=int(fields[2]), session=int(fields[3])
    )


def group_members(pgid: int) -> list[ProcessInfo]:
    """The live processes (zombies excluded) of a command's group or session, and their descendants.

    Descendants count even when they started a session of their own (as pty.fork does), as long
    as their parent is still alive to link them to the group.
    """
    processes = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (info := process_info(int(entry.name))):
            processes[info.pid] = info
    members = {p.pid for p in processes.values() if pgid in (p.pgrp, p.session)}
    grew = True
    while grew:
        children = {p.pid for p in processes.values() if p.ppid in members} - members
        members |= children
        grew = bool(children)
    return [processes[pid] for pid in members if processes[pid].state not in "ZX"]


def signal_group(pgid: int, signum: int) -> None:
    """Signal every process of the group, and any that moved to another group of the same session."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
    for member in group_members(pgid):
        if member.pgrp != pgid:
            try:
                os.kill(member.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass


def describe_exit(returncode: int | None) -> str:
    """An exit status as words: `exit code 2`, or the signal that killed the process."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


async def end_group(pgid: int, grace: float) -> None:
    """SIGTERM the group, give it `grace` seconds, then SIGKILL whatever is left."""
    signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while group_members(pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    deadline = time.monotonic() + 2.0
    while group_members(pgid) and time.monotonic() < deadline:
        signal_group(pgid, signal.SIGKILL)
        await asyncio.sleep(0.05)


def _is_terminal_or_pipe(pid: int, fd: int, pipe_inode: int) -> bool:
    try:
        st = os.stat(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return False
    if stat.S_ISCHR(st.st_mode):
        return os.major(st.st_rdev) in _TTY_MAJORS
    return stat.S_ISFIFO(st.st_mode) and st.st_ino == pipe_inode


def _waits_on_terminal(pid: int, pipe_inode: int) -> bool:
    """True when the process is blocked reading a terminal, or its own output pipe taken for one (vi does)."""
    machine = platform.machine()
    try:
        parts = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    if len(parts) < 2 or not parts[0].lstrip("-").isdigit():
        return False
    number, first_arg = int(parts[0]), int(parts[1], 16)
    if number in _READ_CALLS.get(machine, ()):
        return _is_terminal_or_pipe(pid, first_arg, pipe_inode)
    if number in _SELECT_CALLS.get(machine, ()) and first_arg <= 3:
        return _is_terminal_or_pipe(pid, 0, pipe_inode)
    if number in _POLL_CALLS.get(machine, ()):
        return _is_terminal_or_pipe(pid, 0, pipe_inode)
    return False


def waiting_for_input(pgid: int, pipe_inode: int) -> bool:
    """Every process of the group is asleep and one of them is waiting for terminal input."""
    members = group_members(pgid)
    if not members or any(m.state != "S" for m in members):
        return False
    return any(_waits_on_terminal(m.pid, pipe_inode) for m in members)


class PipeReader:
    """Moves everything written to a pipe into a capture, from the event loop, without buffering it."""

    def __init__(self, fd: int, capture: OutputCapture) -> None:
        self.fd = fd
        self.capture = capture
        self.inode = os.fstat(fd).st_ino
        self._loop = asyncio.get_running_loop()
        self.finished: asyncio.Future[None] = self._loop.create_future()
        os.set_blocking(fd, False)
        self._loop.add_reader(fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            data = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.capture.feed(data)
        else:
            self.close()

    def close(self) -> None:
        """Stop reading (at end of file, or when giving up on writers that will not close)."""
        if self.finished.done():
            return
        self._loop.remove_reader(self.fd)
        os.close(self.fd)
        self.capture.close()
        self.finished.set_result(None)


@dataclass
class RunningCommand:
    """One started command: its process (the group leader), and the reader filling its capture."""

    process: asyncio.subprocess.Process
    reader: PipeReader
    started_at: float = field(default_factory=time.monotonic)
    returncode: int | None = None

    @property
    def pgid(self) -> int:
        return self.process.pid

    @property
    def capture(self) -> OutputCapture:
        return self.reader.capture

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    async def drain(self, linger: float) -> bool:
        """Wait up to `linger` s for the output to end; False when something still holds the pipe open."""
        try:
            await asyncio.wait_for(asyncio.shield(self.reader.finished), linger)
        except TimeoutError:
            return False
        return True

    async def stop(self, grace: float) -> None:
        """End the whole group, reap the leader, and finish reading what it wrote."""
        await end_group(self.pgid, grace)
        try:
            self.returncode = await asyncio.wait_for(self.process.wait(), 2.0)
        except TimeoutError:
            pass
        if not await self.drain(0.5):
            self.reader.close()


async def start_command(
    argv: list[str], *, cwd: Path, env: dict[str, str], log_path: Path
) -> RunningCommand:
    """Start argv in a new session with stdin at /dev/null and stdout+stderr merged into one pipe."""
    capture = OutputCapture(log_path)
    read_fd, write_fd = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        capture.close()
        raise
    finally:
        os.close(write_fd)
    return RunningCommand(process=process, reader=PipeReader(read_fd, capture))
