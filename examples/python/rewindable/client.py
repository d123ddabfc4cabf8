"""`Rewindable`: the rewindable server as a child process, and the sessions opened through it."""

import os
import shlex
import shutil
from typing import Any, Dict, List, Optional, Sequence, Union

from .connection import Connection, ProgressCallback
from .errors import ProtocolError, ServerExitedError
from .names import from_wire, to_wire
from .session import Session

PROTOCOL_VERSION = 1

SessionChoice = Union[str, Dict[str, Any], None]


def default_command() -> List[str]:
    """`REWINDABLE_SERVER` (a shell-quoted command line) if set; else the checkout's own build
    (`node <repo>/dist/cli.js serve --stdio`, found from this file); else `npx rewindable serve --stdio`."""
    configured = os.environ.get("REWINDABLE_SERVER")
    if configured:
        return shlex.split(configured)
    repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    cli = os.path.join(repository, "dist", "cli.js")
    if os.path.isfile(cli):
        return [shutil.which("node") or "node", cli, "serve", "--stdio"]
    return [shutil.which("npx") or "npx", "rewindable", "serve", "--stdio"]


class Rewindable:
    """A connection to a rewindable server it starts (`rewindable serve --stdio`).

    Use it as a context manager; `close()` asks the server to shut down, waits,
    and terminates it if it must. Calls may come from any thread.

    `on_progress` receives every progress notification (a dict with
    `progress_token`, `done`, `total`, `path`); calls that take their own
    `on_progress` get theirs too. `timeout` (seconds, default none) bounds every
    call; a server that dies fails the waiting calls with `ServerExitedError`
    whatever the timeout. `start_timeout` (seconds) bounds the server's start-up
    (its answer to `initialize`) even when `timeout` is none: a command that
    starts something else, which never answers, fails with `TimeoutError`.

    >>> with Rewindable() as client, client.open('/abs/project') as session:
    ...     session.checkpoint(user_message_id)
    """

    def __init__(
        self,
        command: Optional[Sequence[str]] = None,
        *,
        on_progress: Optional[ProgressCallback] = None,
        timeout: Optional[float] = None,
        env: Optional[Dict[str, str]] = None,
        client_name: str = "rewindable-python",
        start_timeout: float = 60.0,
    ) -> None:
        self.timeout = timeout
        self._connection = Connection(list(command) if command is not None else default_command(), on_progress=on_progress, env=env)
        try:
            info = self._connection.call("initialize", {"client": client_name}, timeout=start_timeout if timeout is None else min(timeout, start_timeout))
            if not isinstance(info, dict) or info.get("protocolVersion") != PROTOCOL_VERSION:
                raise ProtocolError(ProtocolError.INVALID_REQUEST, f"The server speaks protocol {info.get('protocolVersion') if isinstance(info, dict) else info!r}; this client speaks {PROTOCOL_VERSION}.")
        except BaseException:
            self._connection.close(timeout=2.0)
            raise
        #: The server's version (the npm package's).
        self.server_version: str = info.get("serverVersion", "")
        #: The methods the server offers.
        self.methods: List[str] = list(info.get("methods", []))
        self._closed = False

    @property
    def pid(self) -> int:
        """The server process's id."""
        return self._connection.process.pid

    @property
    def stray_lines(self) -> List[str]:
        """Lines the server wrote to stdout that were not protocol messages (should stay empty)."""
        return list(self._connection.stray_lines)

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None, on_progress: Optional[ProgressCallback] = None) -> Any:
        """One raw request: params and result with their wire (camelCase) names."""
        return self._connection.call(method, params or {}, timeout=self.timeout if timeout is None else timeout, on_progress=on_progress)

    def list_sessions(self, cwd: str, store: Optional[str] = None) -> List[Dict[str, Any]]:
        """The project's sessions, newest activity first, as `rewindable sessions` lists them."""
        return from_wire(self.call("listSessions", to_wire({"cwd": cwd, "store": store})))

    def open(
        self,
        cwd: str,
        store: Optional[str] = None,
        session: SessionChoice = None,
        durability: Optional[str] = None,
        capture: Union[bool, Dict[str, Any], None] = None,
    ) -> Session:
        """Opens a session of the project at `cwd`.

        `session`: None (a new session), `{'id': uuid}` (a new one with that id),
        `{'resume': uuid, 'read_only': bool}` or `'continue'` (the latest).
        `capture`: True or `{'include': [...], 'exclude': [...], 'gitignore': bool,
        'max_file_bytes': int}` to scan for changes made outside the tracked tools.
        """
        params: Dict[str, Any] = to_wire({"cwd": cwd, "store": store, "durability": durability})
        if session is not None:
            params["session"] = to_wire(session) if isinstance(session, dict) else session
        if capture is not None:
            params["capture"] = to_wire(capture) if isinstance(capture, dict) else capture
        opened = self.call("open", params)
        return Session(self, opened["handle"], opened["sessionId"], opened["root"])

    def close(self, timeout: float = 10.0) -> Optional[int]:
        """Lets the calls in progress finish (a rewind is never cut short: each call is bounded by its own
        timeout), then asks the server to shut down (it closes every session), waits for it, and terminates
        it past `timeout`. Returns its exit code."""
        if self._closed:
            return self._connection.process.returncode
        self._closed = True
        self._connection.wait_for_calls()
        if self._connection.exited is None:
            try:
                self._connection.call("shutdown", {}, timeout=timeout)
            except (ServerExitedError, TimeoutError, ProtocolError):
                pass  # Closing stdin and, past the timeout, terminating still ends it.
        return self._connection.close(timeout)

    def __enter__(self) -> "Rewindable":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
