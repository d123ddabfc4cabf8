"""One server child process and the JSON-RPC 2.0 exchange with it.

Messages are newline-delimited JSON on the child's stdin and stdout. A reader
thread matches every response to its request by id, so any number of threads
may call at once; notifications (`progress`) go to callbacks. When the child
ends, every call waiting on it fails with `ServerExitedError` and the tail of
its stderr, instead of waiting forever.
"""

import collections
import itertools
import json
import re
import subprocess
import sys
import threading
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence

from .errors import ProtocolError, ServerExitedError, rewindable_error
from .names import from_wire

ProgressCallback = Callable[[Dict[str, Any]], None]

# The start of every answer the server writes (its key order is fixed): how a reply too deep to parse is matched to its call.
_ANSWER_ID = re.compile(rb'\{"jsonrpc":"2\.0","id":(\d+),')

# The longest line the server reads (the protocol's limit). It answers a longer one with an error it
# cannot match to a request (id null), so the client refuses to send one instead.
MAX_LINE_BYTES = 16 * 1024 * 1024
# How much of the server's stderr an error shows.
_STDERR_TAIL_LINES = 40
# After stdout closes, how long to wait for the exit status and the rest of stderr.
_EXIT_GRACE_SECONDS = 5.0


class _Pending:
    """A request waiting for its response."""

    def __init__(self, method: str, on_progress: Optional[ProgressCallback]) -> None:
        self.method = method
        self.on_progress = on_progress
        self.done = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None
        # An exception raised by a progress callback: re-raised by the call once it is answered.
        self.callback_error: Optional[BaseException] = None


class Connection:
    def __init__(self, command: Sequence[str], on_progress: Optional[ProgressCallback] = None, env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None) -> None:
        self.command = list(command)
        self._on_progress = on_progress
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._stderr_tail: Deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._exited: Optional[ServerExitedError] = None
        self._closing = False
        #: Lines on stdout that were not JSON-RPC messages (a server bug; kept to be reported).
        self.stray_lines: List[str] = []
        try:
            # Its own session: a Ctrl-C meant for the harness must not kill the server in the middle of a
            # rewind. The harness closes it in order; if the harness dies, the server sees stdin end and exits.
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True
            )
        except OSError as error:
            raise ServerExitedError(f"Could not start the rewindable server ({' '.join(self.command)}): {error}") from error
        self._stderr_thread = threading.Thread(target=self._read_stderr, name="rewindable-stderr", daemon=True)
        self._stdout_thread = threading.Thread(target=self._read_stdout, name="rewindable-reader", daemon=True)
        self._stderr_thread.start()
        self._stdout_thread.start()

    @property
    def exited(self) -> Optional[ServerExitedError]:
        """Set once the server has ended: the error every call now raises."""
        return self._exited

    def stderr_tail(self) -> str:
        with self._lock:
            return "".join(self._stderr_tail)

    def call(self, method: str, params: Dict[str, Any], timeout: Optional[float] = None, on_progress: Optional[ProgressCallback] = None) -> Any:
        """Sends one request and waits for its result (as sent: camelCase)."""
        request_id = next(self._ids)
        pending = _Pending(method, on_progress)
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        if on_progress is not None or self._on_progress is not None:
            message["params"] = {**params, "progressToken": request_id}
        # allow_nan=False: NaN and Infinity are not JSON; the server could only answer a parse error with id null.
        line = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        if len(line) > MAX_LINE_BYTES:
            raise ProtocolError(ProtocolError.INVALID_REQUEST, f"The {method} request is {len(line)} bytes as JSON, over the protocol's limit of {MAX_LINE_BYTES} bytes (16 MiB); it was not sent.")
        with self._lock:
            exited = self._exited
            if exited is None:
                self._pending[request_id] = pending
        if exited is not None:
            raise ServerExitedError(exited.args[0], exited.returncode, exited.stderr)
        try:
            with self._write_lock:
                assert self.process.stdin is not None
                self.process.stdin.write(line + b"\n")
                self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            # The reader thread sees the same end on stdout and fails the call with the exit status.
            pass
        if not pending.done.wait(timeout):
            with self._lock:
                self._pending.pop(request_id, None)
            raise TimeoutError(f"The rewindable server did not answer {method} within {timeout} seconds.")
        if pending.error is not None:
            raise pending.error
        if pending.callback_error is not None:
            raise pending.callback_error
        return pending.result

    def wait_for_calls(self) -> None:
        """Returns once no call is waiting for its answer (each ends by its answer, its own timeout, or the server's exit)."""
        while True:
            with self._lock:
                waiting = next(iter(self._pending.values()), None)
            if waiting is None:
                return
            waiting.done.wait(0.2)

    def close(self, timeout: float = 10.0) -> Optional[int]:
        """Closes stdin (the server exits on EOF), waits, then terminates and kills if it must."""
        with self._lock:
            self._closing = True
        try:
            if self.process.stdin is not None and not self.process.stdin.closed:
                with self._write_lock:
                    self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stdout_thread.join(_EXIT_GRACE_SECONDS)
        self._stderr_thread.join(_EXIT_GRACE_SECONDS)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return self.process.returncode

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in iter(self.process.stderr.readline, b""):
            with self._lock:
                self._stderr_tail.append(raw.decode("utf-8", "replace"))

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        try:
            for raw in iter(self.process.stdout.readline, b""):
                self._dispatch(raw)
        finally:
            self._server_ended()

    def _dispatch(self, raw: bytes) -> None:
        try:
            message = json.loads(raw.decode("utf-8"))
        except ValueError:
            self._stray(raw)
            return
        except RecursionError:
            # Nested deeper than Python's parser goes (a transcript message of someone else's, say): the
            # call it answers fails with its own error, and this thread goes on reading.
            self._unreadable(raw)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._stray(raw)
            return
        if "method" in message:
            if message["method"] == "progress":
                self._progress(message.get("params"))
            return
        request_id = message.get("id")
        with self._lock:
            pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            # An answer to a call that timed out, or an error the server could not attribute (id null).
            if "error" in message:
                self._stray(raw)
            return
        if "error" in message:
            pending.error = _error_of(message["error"])
        elif "result" in message:
            pending.result = message["result"]
        else:
            pending.error = ProtocolError(ProtocolError.INVALID_REQUEST, f"The server answered {pending.method} with neither result nor error.", message)
        pending.done.set()

    def _unreadable(self, raw: bytes) -> None:
        answered = _ANSWER_ID.match(raw)
        with self._lock:
            pending = self._pending.pop(int(answered.group(1)), None) if answered else None
        if pending is None:
            self._stray(raw)
            return
        pending.error = ProtocolError(ProtocolError.PARSE_ERROR, f"The answer to {pending.method} is nested too deeply for Python's JSON parser to read.")
        pending.done.set()

    def _progress(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        with self._lock:
            pending = self._pending.get(params.get("progressToken"))  # type: ignore[arg-type]
        progress = from_wire(params)
        for callback in (pending.on_progress if pending else None, self._on_progress):
            if callback is None:
                continue
            try:
                callback(progress)
            except BaseException as error:  # noqa: BLE001 - handed to the caller, never lost on this thread
                if pending is not None and pending.callback_error is None:
                    pending.callback_error = error
                elif pending is None:
                    sys.excepthook(type(error), error, error.__traceback__)

    def _stray(self, raw: bytes) -> None:
        with self._lock:
            if len(self.stray_lines) < 100:
                self.stray_lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def _server_ended(self) -> None:
        try:
            returncode: Optional[int] = self.process.wait(_EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            returncode = None
        self._stderr_thread.join(_EXIT_GRACE_SECONDS)
        how = "is still running but closed its output" if returncode is None else f"exited with code {returncode}"
        with self._lock:
            closing = self._closing
        if closing:
            exited = ServerExitedError("This client was closed, and its server with it: start a new Rewindable().", returncode, self.stderr_tail())
        else:
            exited = ServerExitedError(f"The rewindable server ({' '.join(self.command)}) {how}.", returncode, self.stderr_tail())
        with self._lock:
            self._exited = exited
            pending = list(self._pending.values())
            self._pending.clear()
        for call in pending:
            call.error = ServerExitedError(f"The rewindable server {how} before answering {call.method}.", returncode, exited.stderr)
            call.done.set()


def _error_of(error: Any) -> BaseException:
    """The exception for a JSON-RPC error object: the library's own error by its code, else a ProtocolError."""
    if not isinstance(error, dict):
        return ProtocolError(ProtocolError.INTERNAL_ERROR, f"Malformed error from the server: {error!r}")
    code = error.get("code")
    message = str(error.get("message", ""))
    data = error.get("data")
    library_code = data.get("code") if isinstance(data, dict) else None
    if isinstance(library_code, str) and (code == -32000 or code == ProtocolError.INVALID_PARAMS):
        details = data.get("details") if isinstance(data, dict) else None
        return rewindable_error(library_code, message, from_wire(details) if isinstance(details, dict) else None, code)
    return ProtocolError(code if isinstance(code, int) else ProtocolError.INTERNAL_ERROR, message, data)
