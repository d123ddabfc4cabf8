"""Python client for rewindable: file checkpoints and rewinds for AI agents, through
`rewindable serve --stdio` (JSON-RPC 2.0, one JSON message per line). Standard library only.

    from rewindable import Rewindable, RewindableError

    with Rewindable() as client, client.open('/abs/project') as session:
        session.checkpoint(user_message_id)       # a user message arrived
        session.track_edit('src/app.py')          # before a tool writes it
        ...
        preview = session.rewind_files(user_message_id, dry_run=True)
        session.rewind_files(user_message_id)
"""

from .client import PROTOCOL_VERSION, Rewindable, default_command
from .errors import (
    ERROR_CLASSES,
    CaptureFailedError,
    CheckpointIdReusedError,
    CheckpointInOtherSessionError,
    CheckpointNotFoundError,
    ClosedError,
    CwdNotFoundError,
    FileIoError,
    FileTooLargeError,
    HunkNotFoundError,
    InvalidIdError,
    InvalidMessageError,
    InvalidOptionsError,
    InvalidPathError,
    InvalidToolInputError,
    LogCorruptError,
    MessageConflictError,
    MessageNotFoundError,
    MirrorFlushTimeoutError,
    NoCheckpointError,
    NotARegularFileError,
    NotEnabledError,
    PathInStoreError,
    PathIsLinkError,
    PathOutsideProjectError,
    ProjectMismatchError,
    ProtocolError,
    ReadOnlyError,
    RewindableError,
    RewindFailedError,
    ServerExitedError,
    SessionDivergedError,
    SessionExistsError,
    SessionLockedError,
    SessionNotFoundError,
    StoreIoError,
    ToolFailedError,
)
from .session import UNSET, Capture, Session

__all__ = [
    "PROTOCOL_VERSION",
    "Rewindable",
    "Session",
    "Capture",
    "UNSET",
    "default_command",
    "ERROR_CLASSES",
    "RewindableError",
    "ProtocolError",
    "ServerExitedError",
    "CaptureFailedError",
    "CheckpointIdReusedError",
    "CheckpointInOtherSessionError",
    "CheckpointNotFoundError",
    "ClosedError",
    "CwdNotFoundError",
    "FileIoError",
    "FileTooLargeError",
    "HunkNotFoundError",
    "InvalidIdError",
    "InvalidMessageError",
    "InvalidOptionsError",
    "InvalidPathError",
    "InvalidToolInputError",
    "LogCorruptError",
    "MessageConflictError",
    "MessageNotFoundError",
    "MirrorFlushTimeoutError",
    "NoCheckpointError",
    "NotARegularFileError",
    "NotEnabledError",
    "PathInStoreError",
    "PathIsLinkError",
    "PathOutsideProjectError",
    "ProjectMismatchError",
    "ReadOnlyError",
    "RewindFailedError",
    "SessionDivergedError",
    "SessionExistsError",
    "SessionLockedError",
    "SessionNotFoundError",
    "StoreIoError",
    "ToolFailedError",
]
