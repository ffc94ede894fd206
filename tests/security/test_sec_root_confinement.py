"""Root's commands stay confined: no sysctl, device, host name, namespace, capability, UDP or /dev/shm escape.

Each test runs one command through the real run_command tool, under bubblewrap and under
Landlock, as the user the tests run as (root in CI). None of them changes the machine when it
fails: sysctls and disks are only opened for writing (nothing written), the host name is set to
what it already is, the files touched are the test's own.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import uuid
from pathlib import Path

import pytest
from sandbox_support import make_ctx, run_in
from sec_jail_support import as_root, jail

__all__ = ["jail"]  # the fixture, imported for pytest to find

PY = sys.executable


async def run(tmp_path: Path, command: str, **policy: object) -> str:
    ctx = make_ctx(tmp_path, **policy)
    try:
        return await run_in(ctx, command)
    finally:
        await ctx.aclose()


async def test_sysctls_cannot_be_opened_for_writing(jail, tmp_path: Path):
    # opening kernel.core_pattern for appending writes nothing; a root command could then set it
    output = await run(tmp_path, ": >> /proc/sys/kernel/core_pattern && echo OPENED-SYSCTL")
    assert "OPENED-SYSCTL" not in output, output
    assert "Read-only file system" in output or "Permission denied" in output, output


async def test_the_host_name_cannot_be_changed(jail, tmp_path: Path):
    name = socket.gethostname()
    output = await run(
        tmp_path,
        f"hostname {name} && echo SET-HOSTNAME; "
        f"printf '%s\\n' {name} > /proc/sys/kernel/hostname && echo WROTE-HOSTNAME",
    )
    assert "SET-HOSTNAME" not in output and "WROTE-HOSTNAME" not in output, output
    assert socket.gethostname() == name


async def test_no_device_node_can_be_made(jail, tmp_path: Path):
    output = await run(tmp_path, "mknod copy-of-null c 1 3 && echo MADE-DEVICE; mkfifo fifo")
    assert "MADE-DEVICE" not in output, output
    workspace = tmp_path / "ws"
    assert not (workspace / "copy-of-null").exists()
    assert stat.S_ISFIFO((workspace / "fifo").stat().st_mode)  # FIFOs are fine


async def test_no_block_device_can_be_opened_for_writing(jail, tmp_path: Path):
    as_root()
    disks = sorted(entry.path for entry in os.scandir("/dev") if stat.S_ISBLK(entry.stat().st_mode))
    if not disks:
        pytest.skip("this machine shows no block device in /dev")
    opens = "; ".join(f"[ -b {disk} ] && : >> {disk} && echo OPENED-{disk}" for disk in disks[:3])
    output = await run(tmp_path, opens)
    assert "OPENED-" not in output, output


async def test_files_outside_the_workspace_keep_their_owner_mode_and_times(jail, tmp_path: Path):
    as_root()
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs\n")
    os.chown(outside, 12345, 12345)  # another user's file: root needs a capability to change it
    os.chmod(outside, 0o644)
    before = outside.stat()
    seen = f"[ -e {outside} ] &&"  # bubblewrap's /tmp is its own: there the file is missing
    output = await run(
        tmp_path,
        f"{seen} chown 0:0 {outside} && echo CHOWNED; {seen} chmod 777 {outside} && echo CHMODDED; "
        f"{seen} touch -d 2001-02-03 {outside} && echo TOUCHED",
    )
    after = outside.stat()
    assert "CHOWNED" not in output and "CHMODDED" not in output and "TOUCHED" not in output
    assert (after.st_uid, after.st_mode, after.st_mtime) == (
        before.st_uid,
        before.st_mode,
        before.st_mtime,
    )


async def test_shared_memory_files_do_not_persist(jail, tmp_path: Path):
    name = f"keel-test-{uuid.uuid4().hex}"
    try:
        output = await run(tmp_path, f"echo x > /dev/shm/{name}; echo done")
        assert "done" in output
        assert not Path("/dev/shm", name).exists(), output
    finally:
        Path("/dev/shm", name).unlink(missing_ok=True)


async def test_python_multiprocessing_locks_still_work(jail, tmp_path: Path):
    output = await run(
        tmp_path, f"{PY} -c 'import multiprocessing; multiprocessing.Lock(); print(42)'"
    )
    assert "42" in output and "exit code 0" in output, output


async def test_commands_hold_no_capability_and_no_new_privileges(jail, tmp_path: Path):
    output = await run(tmp_path, "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status")
    fields = dict(line.split(":\t") for line in output.splitlines() if ":\t" in line)
    assert {name: int(fields[name], 16) for name in ("CapEff", "CapPrm", "CapBnd")} == {
        "CapEff": 0,
        "CapPrm": 0,
        "CapBnd": 0,
    }, output
    assert fields["NoNewPrivs"].strip() == "1", output


async def test_no_new_user_namespace_can_be_made(jail, tmp_path: Path):
    # in a user namespace of its own a command holds every capability again, for what it owns there
    output = await run(tmp_path, "unshare -U true && echo NEW-USERNS")
    assert "NEW-USERNS" not in output, output


@pytest.mark.parametrize("network", [False, True])
async def test_udp_follows_the_network_setting(jail, tmp_path: Path, network: bool):
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(0.5)
    port = receiver.getsockname()[1]
    send = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"s.sendto(b'hello', ('127.0.0.1', {port})); print('SENT')"
    )
    try:
        output = await run(tmp_path, f'{PY} -c "{send}"', network=network)
        try:
            got = receiver.recv(100)
        except TimeoutError:
            got = b""
    finally:
        receiver.close()
    if network and jail == "landlock":  # bubblewrap's loopback is its own even with the network on
        assert got == b"hello", output
    if not network:
        assert got == b"", output


async def test_workspace_files_belong_to_keel_user_and_stay_writable(jail, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "old.txt").write_text("old\n")
    output = await run(tmp_path, "echo new >> old.txt && echo made > made.txt && echo OK")
    assert "OK" in output, output
    assert (workspace / "old.txt").read_text() == "old\nnew\n"
    assert (workspace / "made.txt").stat().st_uid == os.getuid()
