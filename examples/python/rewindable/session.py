"""`Session`: one session opened on the server, with the library's methods in snake_case."""

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from .connection import ProgressCallback
from .errors import ServerExitedError
from .names import from_wire, to_wire

if TYPE_CHECKING:
    from .client import Rewindable


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


#: "Not given" where None means something (`parent_uuid=None` starts a new conversation root).
UNSET: Any = _Unset()


class Capture:
    """A capture scope around a command the caller runs (`with session.capture(label) as scope:`).

    Entering it starts a scan (`scanBegin`); leaving it, even by an exception,
    ends it (`scanEnd`) and records what changed: `changes` then holds
    `created`, `modified`, `deleted`, `over_cap` and `unreadable` (absolute paths).
    """

    def __init__(self, session: "Session", label: Optional[str]) -> None:
        self._session = session
        self.label = label
        self.scan_id: Optional[str] = None
        self.changes: Optional[Dict[str, Any]] = None

    def __enter__(self) -> "Capture":
        self.scan_id = self._session._call("scanBegin", {"label": self.label})["scanId"]
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        scan_id, self.scan_id = self.scan_id, None
        if scan_id is None:
            return
        try:
            self.changes = from_wire(self._session._call("scanEnd", {"scan_id": scan_id}))
        except Exception:
            if exc is None:
                raise
            # The command's own exception says more; this one stays chained to it.


class Session:
    """A session: checkpoints, tracked edits, rewinds and the conversation.

    Results are dicts with snake_case keys (`can_rewind`, `files_changed`,
    `insertions`, `deletions`, `skipped_links`, ...); paths are absolute.
    """

    def __init__(self, client: "Rewindable", handle: str, session_id: str, root: str) -> None:
        self._client = client
        #: The server's name for this session on this connection.
        self.handle = handle
        self.session_id = session_id
        #: The project root, as the server resolved it (real path).
        self.root = root
        self.closed = False

    def _call(self, method: str, options: Dict[str, Any], on_progress: Optional[ProgressCallback] = None) -> Any:
        return self._client.call(method, {"handle": self.handle, **to_wire(options)}, on_progress=on_progress)

    def checkpoint(self, user_message_id: Optional[str] = None) -> str:
        """Records the tracked files as they are when a user message arrives; returns the checkpoint id
        (the message's UUID; a new one when omitted)."""
        return self._call("checkpoint", {"user_message_id": user_message_id})["checkpointId"]

    def track_edit(self, path: str) -> None:
        """Backs up `path` (relative to the project root, or absolute) before a tool changes it."""
        self._call("trackEdit", {"path": path})

    def record_write(self, path: str, tool: Optional[str] = None, tool_call_id: Optional[str] = None) -> None:
        """Records what a tool just wrote to a tracked file, so a rewind tells its writes from anyone else's."""
        self._call("recordWrite", {"path": path, "tool": tool, "tool_call_id": tool_call_id})

    def capture(self, label: Optional[str] = None) -> Capture:
        """A capture scope: what changes on disk inside the `with` block is recorded like a tool's writes."""
        return Capture(self, label)

    def rewind_files(
        self,
        user_message_id: str,
        dry_run: bool = False,
        paths: Optional[Sequence[str]] = None,
        hunks: Optional[Sequence[str]] = None,
        on_conflict: Optional[str] = None,
        skip_conflicts: Optional[bool] = None,
        on_progress: Optional[ProgressCallback] = None,
    ) -> Dict[str, Any]:
        """Puts every tracked file (or `paths`, or `hunks`) back as it was at the checkpoint.
        A dry run answers `can_rewind: False` with `error` when it cannot happen; a real run raises."""
        options = {"user_message_id": user_message_id, "dry_run": dry_run, "paths": _list(paths), "hunks": _list(hunks), "on_conflict": on_conflict, "skip_conflicts": skip_conflicts}
        return from_wire(self._call("rewindFiles", options, on_progress))

    def revert_turn(
        self,
        user_message_id: str,
        dry_run: bool = False,
        paths: Optional[Sequence[str]] = None,
        on_conflict: Optional[str] = None,
        on_progress: Optional[ProgressCallback] = None,
    ) -> Dict[str, Any]:
        """Undoes only what the turn started by `user_message_id` changed, keeping later edits."""
        options = {"user_message_id": user_message_id, "dry_run": dry_run, "paths": _list(paths), "on_conflict": on_conflict}
        return from_wire(self._call("revertTurn", options, on_progress))

    def diff_files(
        self,
        user_message_id: str,
        paths: Optional[Sequence[str]] = None,
        context: Optional[int] = None,
        max_patch_bytes: Optional[int] = None,
        timeout_ms: Optional[int] = None,
        max_edit_length: Optional[int] = None,
        binary: Optional[bool] = None,
        skip_conflicts: Optional[bool] = None,
        on_progress: Optional[ProgressCallback] = None,
    ) -> List[Dict[str, Any]]:
        """Per-file unified diffs from the files now to the checkpoint; `on_progress` is called as each
        tracked file is examined."""
        options = {
            "user_message_id": user_message_id,
            "paths": _list(paths),
            "context": context,
            "max_patch_bytes": max_patch_bytes,
            "timeout_ms": timeout_ms,
            "max_edit_length": max_edit_length,
            "binary": binary,
            "skip_conflicts": skip_conflicts,
        }
        return from_wire(self._call("diffFiles", options, on_progress))

    def list_checkpoints(self) -> List[Dict[str, Any]]:
        """The session's checkpoints, oldest first (`id`, `created_at`, `reason`, `files`, `prompt`)."""
        return from_wire(self._call("listCheckpoints", {}))

    def record_user_message(self, message: Any, uuid: Optional[str] = None, parent_uuid: Any = UNSET) -> Dict[str, Any]:
        """Records a user message and takes its checkpoint (id = the message's UUID) in one step.
        `message` is any JSON value, stored and returned as is."""
        params: Dict[str, Any] = {"message": message}
        params.update(to_wire({"uuid": uuid}))
        if parent_uuid is not UNSET:
            params["parentUuid"] = parent_uuid
        return from_wire(self._client.call("recordUserMessage", {"handle": self.handle, **params}))

    def record_message(self, type: str, message: Any, uuid: Optional[str] = None, parent_uuid: Any = UNSET) -> Dict[str, Any]:
        """Records a message of any type (`assistant`, `tool`, ...); `parent_uuid=None` starts a new root,
        leaving it out follows the active leaf."""
        params: Dict[str, Any] = {"type": type, "message": message}
        params.update(to_wire({"uuid": uuid}))
        if parent_uuid is not UNSET:
            params["parentUuid"] = parent_uuid
        return from_wire(self._client.call("recordMessage", {"handle": self.handle, **params}))

    def get_transcript(self, leaf_uuid: Optional[str] = None) -> List[Dict[str, Any]]:
        """The messages from the root to `leaf_uuid` (default: the active leaf)."""
        return from_wire(self._call("getTranscript", {"leaf_uuid": leaf_uuid}))

    def list_branches(self) -> List[Dict[str, Any]]:
        return from_wire(self._call("listBranches", {}))

    def rewind(
        self,
        user_message_id: str,
        scope: Optional[str] = None,
        dry_run: bool = False,
        skip_conflicts: Optional[bool] = None,
        on_conflict: Optional[str] = None,
        paths: Optional[Sequence[str]] = None,
        on_progress: Optional[ProgressCallback] = None,
    ) -> Dict[str, Any]:
        """Rewinds the files, the conversation, or both (`scope`, default both)."""
        options = {"user_message_id": user_message_id, "scope": scope, "dry_run": dry_run, "skip_conflicts": skip_conflicts, "on_conflict": on_conflict, "paths": _list(paths)}
        return from_wire(self._call("rewind", options, on_progress))

    def close(self) -> None:
        """Closes the session on the server (releases its lock). Closing twice, or after the server
        ended (which released everything), does nothing."""
        if self.closed:
            return
        self.closed = True
        try:
            self._call("close", {})
        except ServerExitedError:
            pass

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        try:
            self.close()
        except Exception:
            if exc is None:
                raise
            # The exception that ended the block says more (often the same dead server).


def _list(values: Optional[Sequence[str]]) -> Optional[List[str]]:
    if values is None:
        return None
    if isinstance(values, str):
        raise TypeError("expected a list of strings, not one string")
    return list(values)
