"""The terminal is left as it was found however the UI ends: a crash in native code, a signal, SIGKILL.

Python cannot run code in a SIGSEGV handler and nothing runs after SIGKILL, so the restoring is
done by another process: `run_guarded` forks before Textual is imported (about 2 ms, and a few
more of copy-on-write in the child), the child runs the UI, and the parent saves the tty's
settings, waits, and resets the terminal when the child did not. The parent passes signals sent to it on to the UI, follows it when it stops for job
control, and exits with its code (128+N for a death by signal N). The child ends the UI cleanly
on SIGTERM, SIGHUP or SIGINT, and when the parent dies (its end of a pipe closes).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from keel.agent.core.errors import ExitCode

DISABLE = "KEEL_NO_TERMINAL_GUARD"  # set (non-empty) to run the UI in this process, unguarded
UI_NAME = "keel-ui"  # the child's name in ps and top
_orphaned = threading.Event()  # set in the child when the guarding parent died
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)  # the UI closes cleanly on these
# passed on to the UI whoever sent them; the keyboard's only when a process sent them
ALWAYS_FORWARDED = (signal.SIGTERM, signal.SIGHUP)
FORWARDED = (*ALWAYS_FORWARDED, signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP)

RESET = (
    "\x18"  # CAN: abandons an escape sequence the UI died in the middle of
    "\x1b[?2026l"  # end a synchronized update
    "\x1b[<u"  # pop the kitty keyboard mode Textual pushed
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l"  # mouse modes
    "\x1b[?1004l"  # focus events
    "\x1b[?2004l"  # bracketed paste
    "\x1b[?2048l"  # in-band resize reports
    "\x1b[?7h"  # line wrap
    "\x1b[0m"  # attributes
    "\x1b[?1049l"  # leave the alternate screen (the cursor goes back to where it was)
    "\x1b[?25h"  # show the cursor
)


def run_guarded(run: Callable[[], int]) -> int:
    """`run()` in a forked child while this process guards the terminal; in process without a tty.

    Both processes return from here: the child with run()'s result, the parent with the child's.
    """
    if (
        os.environ.get(DISABLE)
        or not hasattr(signal, "sigwaitinfo")
        or not (os.isatty(0) and os.isatty(2))  # Textual reads stdin and draws on stderr
    ):
        return run()
    import termios

    saved = termios.tcgetattr(0)
    watched = {signal.SIGCHLD, *FORWARDED}
    # blocked before the fork, so none is lost before the parent waits for them
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    lifeline, held = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return run()
    if pid == 0:
        os.close(held)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _become_ui(lifeline)
        return run()
    os.close(lifeline)
    status = _supervise(pid, watched)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return _after(status, saved)


def _become_ui(lifeline: int) -> None:
    """Name the child, and stop it cleanly (as on SIGHUP) when the parent goes away."""
    with suppress(OSError), open("/proc/self/comm", "w") as comm:
        comm.write(UI_NAME)

    def watch() -> None:
        while os.read(lifeline, 1):
            continue  # the pipe only ever closes; what is read means nothing
        _orphaned.set()  # the pipe closed: the parent is gone
        os.kill(os.getpid(), signal.SIGHUP)

    threading.Thread(target=watch, name="keel-lifeline", daemon=True).start()


def _supervise(pid: int, watched: set[signal.Signals]) -> int:
    """Wait for the UI to end (its wait status); meanwhile forward signals and follow its stops."""
    while True:
        info = signal.sigwaitinfo(watched)
        if info.si_signo != signal.SIGCHLD:
            if _forward(info, pid):
                os.kill(pid, info.si_signo)
            continue
        while True:
            done, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
            if done == 0:
                break
            if not os.WIFSTOPPED(status):
                return status
            # stopped for job control (Ctrl-Z): stop too, so the shell sees it and takes the
            # terminal back; `fg` continues the whole process group, the UI with us
            os.kill(os.getpid(), signal.SIGSTOP)
            if _stopped(pid):  # only this process was continued (kill -CONT)
                os.kill(pid, signal.SIGCONT)


def _forward(info: signal.struct_siginfo, pid: int) -> bool:
    """SIGTERM and SIGHUP always (a hangup signals only the session leader, which may be this
    process); the keyboard's (SIGINT, SIGQUIT, SIGTSTP) when a process sent them: the terminal
    sends them to the UI as well."""
    if info.si_signo in ALWAYS_FORWARDED:
        return True
    return info.si_code <= 0 and info.si_pid != pid


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "T"
    except (OSError, IndexError):
        return False


def _after(status: int, saved: list[Any]) -> int:
    """Reset the terminal when the UI could not, say why it ended; the exit code to pass on."""
    import termios

    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        _restore(saved)
        report(f"the UI died ({signal_name(number)}); the terminal was restored")
        return ExitCode.of_signal(number)
    code = os.WEXITSTATUS(status)
    try:
        changed = termios.tcgetattr(0) != saved
    except termios.error:
        changed = False
    if changed:
        _restore(saved)
        report(f"the UI exited ({code}) without restoring the terminal; it was restored")
    return code


def _restore(saved: list[Any]) -> None:
    import termios

    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # in the background too
    try:
        with suppress(OSError, termios.error):
            os.write(2, RESET.encode())
            termios.tcsetattr(0, termios.TCSAFLUSH, saved)  # and drop the mouse reports not read
    finally:
        signal.signal(signal.SIGTTOU, previous)


def stop_reason(signum: int) -> str:
    """Why a stop signal ended the UI, for report()."""
    if _orphaned.is_set():
        return "the keel process guarding the UI died, so the UI closed"
    return f"stopped by {signal_name(signum)}"


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal
        return f"signal {number}"


def report(what: str) -> None:
    """One line on stderr: how keel ended, where the session logs are, how to go on."""
    from keel.agent.core.config_files import keel_home

    line = (
        f"keel: {what}; session logs are in {keel_home() / 'sessions'}; resume with `keel resume`\n"
    )
    with suppress(OSError):  # the terminal hung up
        os.write(2, line.encode())


def stop_on_signals(stop: Callable[[int], None]) -> Callable[[], None]:
    """Call `stop(signum)` on the running loop on SIGTERM, SIGHUP or SIGINT; returns what undoes it.

    Only the main thread can set signal handlers (a test may run the app elsewhere): then nothing.
    """
    import asyncio

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)

    def undo() -> None:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)

    return undo


def exit_if_stuck(code: int, seconds: float = 5.0) -> None:
    """A clean stop that hangs (a tool that will not end) becomes an exit; the parent resets the terminal."""
    timer = threading.Timer(seconds, os._exit, (code,))
    timer.daemon = True
    timer.start()
