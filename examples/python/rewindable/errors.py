"""The errors the client raises.

`RewindableError` is what the library throws, carried over the wire: a stable
string `code` (the TypeScript `RewindableErrorCode`), the library's message and
its `details` (keys in snake_case). Each code has its own subclass, written out
from src/errors.ts, so `except SessionLockedError` and `except RewindableError`
both work. `ProtocolError` is a JSON-RPC failure that is not the library's
(a malformed request, an unknown method), `ServerExitedError` a server that is
gone.
"""

from typing import Any, Dict, Optional, Type


class RewindableError(Exception):
    """A failure reported by the rewindable library. Match on `code`, show `message`."""

    #: The RewindableErrorCode this class stands for (None on the base class).
    error_code: Optional[str] = None

    def __init__(self, code: str, message: str, details: Optional[Dict[str, Any]] = None, rpc_code: int = -32000) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        #: The JSON-RPC error code it arrived with (-32000, or -32602 for invalid parameters).
        self.rpc_code = rpc_code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvalidOptionsError(RewindableError):
    """An option is missing or malformed (also: an unknown session handle)."""

    error_code = "INVALID_OPTIONS"


class CwdNotFoundError(RewindableError):
    """The project directory (`cwd`) does not exist or is not a directory."""

    error_code = "CWD_NOT_FOUND"


class NotEnabledError(RewindableError):
    """Rewinding was switched off."""

    error_code = "NOT_ENABLED"


class InvalidIdError(RewindableError):
    """A message or checkpoint id is not a UUID."""

    error_code = "INVALID_ID"


class CheckpointNotFoundError(RewindableError):
    """No checkpoint of this session has that id."""

    error_code = "CHECKPOINT_NOT_FOUND"


class CheckpointInOtherSessionError(RewindableError):
    """The id is a checkpoint of another session of the same project."""

    error_code = "CHECKPOINT_IN_OTHER_SESSION"


class CheckpointIdReusedError(RewindableError):
    """`checkpoint(id)` was given the id of a checkpoint that is not the latest."""

    error_code = "CHECKPOINT_ID_REUSED"


class NoCheckpointError(RewindableError):
    """`track_edit()` (or a capture) came before the first `checkpoint()`."""

    error_code = "NO_CHECKPOINT"


class MessageNotFoundError(RewindableError):
    """No message of the session's transcript has that UUID."""

    error_code = "MESSAGE_NOT_FOUND"


class MessageConflictError(RewindableError):
    """A message was recorded again with the same UUID but different content or parent."""

    error_code = "MESSAGE_CONFLICT"


class InvalidMessageError(RewindableError):
    """A message handed to the session is malformed (not JSON, missing type ...)."""

    error_code = "INVALID_MESSAGE"


class InvalidPathError(RewindableError):
    """A path is empty, not a string, or contains a NUL byte."""

    error_code = "INVALID_PATH"


class HunkNotFoundError(RewindableError):
    """A hunk id given to a rewind names no hunk of the rewind's patch as the files are now."""

    error_code = "HUNK_NOT_FOUND"


class PathOutsideProjectError(RewindableError):
    """A path lies outside the project root and the extra roots."""

    error_code = "PATH_OUTSIDE_PROJECT"


class PathInStoreError(RewindableError):
    """A path lies inside the store directory."""

    error_code = "PATH_IN_STORE"


class PathIsLinkError(RewindableError):
    """A path is a symbolic link, or a link now lies on its parent path."""

    error_code = "PATH_IS_LINK"


class NotARegularFileError(RewindableError):
    """A path names a directory, FIFO, socket or device."""

    error_code = "NOT_A_REGULAR_FILE"


class FileTooLargeError(RewindableError):
    """A file is larger than the configured backup size cap."""

    error_code = "FILE_TOO_LARGE"


class SessionNotFoundError(RewindableError):
    """`session={'resume': ...}` (or `'continue'`) named a session that does not exist."""

    error_code = "SESSION_NOT_FOUND"


class SessionExistsError(RewindableError):
    """`session={'id': ...}` named a session that already exists."""

    error_code = "SESSION_EXISTS"


class SessionLockedError(RewindableError):
    """Another live process holds the session."""

    error_code = "SESSION_LOCKED"


class ProjectMismatchError(RewindableError):
    """The session log belongs to another project directory."""

    error_code = "PROJECT_MISMATCH"


class LogCorruptError(RewindableError):
    """The session log is damaged before its last line."""

    error_code = "LOG_CORRUPT"


class MirrorFlushTimeoutError(RewindableError):
    """A mirror's remote store did not catch up in time; everything is safe locally."""

    error_code = "MIRROR_FLUSH_TIMEOUT"


class SessionDivergedError(RewindableError):
    """A session's local and remote copies differ; the mirror stopped copying it."""

    error_code = "SESSION_DIVERGED"


class FileIoError(RewindableError):
    """Reading or writing a project file failed (an I/O error, permissions); nothing was recorded."""

    error_code = "FILE_IO"


class StoreIoError(RewindableError):
    """Reading or writing the store failed (disk full, permissions, I/O error)."""

    error_code = "STORE_IO"


class CaptureFailedError(RewindableError):
    """Scanning the capture scope failed (an unreadable directory ...)."""

    error_code = "CAPTURE_FAILED"


class RewindFailedError(RewindableError):
    """A real rewind could not be completed; files were rolled back."""

    error_code = "REWIND_FAILED"


class ReadOnlyError(RewindableError):
    """A write was attempted through a session opened read-only."""

    error_code = "READ_ONLY"


class ClosedError(RewindableError):
    """The session was used after `close()`."""

    error_code = "CLOSED"


class InvalidToolInputError(RewindableError):
    """A tool's input does not match its schema."""

    error_code = "INVALID_TOOL_INPUT"


class ToolFailedError(RewindableError):
    """A tool could not do what it was asked (string not found, cell missing ...)."""

    error_code = "TOOL_FAILED"


#: Every RewindableErrorCode of src/errors.ts, with its class.
ERROR_CLASSES: Dict[str, Type[RewindableError]] = {
    cls.error_code: cls
    for cls in (
        InvalidOptionsError,
        CwdNotFoundError,
        NotEnabledError,
        InvalidIdError,
        CheckpointNotFoundError,
        CheckpointInOtherSessionError,
        CheckpointIdReusedError,
        NoCheckpointError,
        MessageNotFoundError,
        MessageConflictError,
        InvalidMessageError,
        InvalidPathError,
        HunkNotFoundError,
        PathOutsideProjectError,
        PathInStoreError,
        PathIsLinkError,
        NotARegularFileError,
        FileTooLargeError,
        SessionNotFoundError,
        SessionExistsError,
        SessionLockedError,
        ProjectMismatchError,
        LogCorruptError,
        MirrorFlushTimeoutError,
        SessionDivergedError,
        FileIoError,
        StoreIoError,
        CaptureFailedError,
        RewindFailedError,
        ReadOnlyError,
        ClosedError,
        InvalidToolInputError,
        ToolFailedError,
    )
    if cls.error_code is not None
}


def rewindable_error(code: str, message: str, details: Optional[Dict[str, Any]] = None, rpc_code: int = -32000) -> RewindableError:
    """The error for a library code: its own subclass, or the base class for a code this client does not know yet."""
    cls = ERROR_CLASSES.get(code, RewindableError)
    return cls(code, message, details, rpc_code)


class ProtocolError(Exception):
    """A JSON-RPC error that is not the library's: parse error (-32700), invalid request (-32600),
    method not found (-32601), invalid params (-32602), internal error (-32603), or a reply the
    client cannot read."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"JSON-RPC error {self.code}: {self.message}"


class ServerExitedError(Exception):
    """The server process ended (or could not be started) before answering."""

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        #: The last lines the server wrote to stderr.
        self.stderr = stderr

    def __str__(self) -> str:
        text = super().__str__()
        if self.stderr.strip():
            text += "\nserver stderr (tail):\n" + self.stderr.rstrip()
        return text
