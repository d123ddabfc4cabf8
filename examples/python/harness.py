"""A two-turn agent harness in Python, on rewindable's stdio server.

Each turn starts with a user message (a checkpoint), then the "agent" writes
files through its own tools (track_edit before, record_write after) and runs a
shell command inside a capture scope. Then the harness previews a rewind to the
first message, rewinds, and undoes the rewind, checking the files on disk at
every step. It exits 1 on any mismatch.

    python3 examples/python/harness.py [--project DIR] [--store DIR] [--step]

Without --project it works in a new temporary directory. --step prints
`STEP <name>` and waits for a line on stdin at each checkpointed state
(`turns-done`, `rewound`, `undone`), so another process can look at the disk.
"""

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rewindable import Rewindable  # noqa: E402

Snapshot = Dict[str, Tuple[bytes, int]]

SEED = {
    "a.txt": b"alpha\n",
    "b.txt": b"bravo\n",
    "c.txt": b"charlie\x00\xff\xfe binary\n",
    "src/app.py": b'print("hello")\n',
}
SHELL_COMMAND = "rm a.txt; echo new > b.txt; mv c.txt d.txt"


class Mismatch(Exception):
    pass


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        raise Mismatch(what if got is None else f"{what}; got {got!r}")


def snapshot(root: str) -> Snapshot:
    """Every regular file under root: relative path -> (bytes, permission bits)."""
    files: Snapshot = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    files[os.path.relpath(path, root)] = (handle.read(), stat.S_IMODE(info.st_mode))
    return files


def differences(expected: Snapshot, actual: Snapshot) -> List[str]:
    lines = []
    for path in sorted(set(expected) | set(actual)):
        if path not in actual:
            lines.append(f"{path}: missing")
        elif path not in expected:
            lines.append(f"{path}: should not exist")
        elif expected[path] != actual[path]:
            lines.append(f"{path}: {actual[path]!r} instead of {expected[path]!r}")
    return lines


def expect_files(root: str, expected: Snapshot, state: str) -> None:
    found = differences(expected, snapshot(root))
    expect(not found, f"files are not {state}: " + "; ".join(found))
    print(f"  on disk: {len(expected)} files, byte for byte {state}")


def step(enabled: bool, name: str) -> None:
    if enabled:
        print(f"STEP {name}", flush=True)
        sys.stdin.readline()


def write(root: str, relative: str, content: bytes) -> None:
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content)


def tool_write(session: Any, relative: str, content: bytes, call_id: str) -> None:
    """What a harness's Write tool does: back up, write, record the write."""
    session.track_edit(relative)
    write(session.root, relative, content)
    session.record_write(relative, tool="Write", tool_call_id=call_id)
    print(f"  Write {relative} ({len(content)} bytes, {call_id})")


def run(project: str, store: str, stepping: bool) -> None:
    for relative, content in SEED.items():
        if not os.path.exists(os.path.join(project, relative)):
            write(project, relative, content)
    originals = snapshot(project)
    print(f"project {project}: {len(originals)} files")

    progress: List[Dict[str, Any]] = []
    with Rewindable() as client, client.open(project, store=store, capture={"max_file_bytes": 1 << 20}) as session:
        root = session.root
        print(f"server {client.server_version}, session {session.session_id}")

        def absolute(relative: str) -> str:
            return os.path.join(root, relative)

        # Turn 1: the user asks; the agent writes a file, edits another and runs a shell command.
        first = str(uuid.uuid4())
        expect(session.checkpoint(first) == first, "checkpoint() returns the message id")
        print(f"turn 1: checkpoint {first}")
        tool_write(session, "notes.md", b"# Notes\n- first draft\n", "call-1")
        tool_write(session, "src/app.py", SEED["src/app.py"] + b'print("turn 1")\n', "call-2")
        with session.capture(SHELL_COMMAND) as scope:
            subprocess.run(["sh", "-c", SHELL_COMMAND], cwd=root, check=True)
        changes = scope.changes or {}
        print(f"  sh -c {SHELL_COMMAND!r}: created {changes.get('created')}, modified {changes.get('modified')}, deleted {changes.get('deleted')}")
        expect(changes.get("created") == [absolute("d.txt")], "the capture reports d.txt created", changes)
        expect(changes.get("modified") == [absolute("b.txt")], "the capture reports b.txt modified", changes)
        expect(sorted(changes.get("deleted", [])) == [absolute("a.txt"), absolute("c.txt")], "the capture reports a.txt and c.txt deleted", changes)

        # Turn 2: the user message is recorded with the conversation (its checkpoint comes with it).
        user = session.record_user_message({"role": "user", "content": "Now polish the notes"})
        second = user["uuid"]
        print(f"turn 2: user message {second}")
        tool_write(session, "notes.md", b"# Notes\n- final draft\n- polished\n", "call-3")
        tool_write(session, "b.txt", b"newer\n", "call-4")
        reply = {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "stopReason": "end_turn"}
        session.record_message("assistant", reply)
        turn_state = snapshot(project)
        step(stepping, "turns-done")

        checkpoints = session.list_checkpoints()
        expect([entry["id"] for entry in checkpoints] == [first, second], "list_checkpoints() lists both turns", checkpoints)
        transcript = session.get_transcript()
        expect(transcript[-1]["message"] == reply, "the transcript keeps the payload's own keys (stopReason)", transcript[-1])
        print(f"checkpoints: {len(checkpoints)}; transcript: {len(transcript)} messages, payload intact")

        # Everything the first turn and the second did, as a rewind to the first message sees it.
        expected_changes = sorted(absolute(name) for name in ["a.txt", "b.txt", "c.txt", "d.txt", "notes.md", "src/app.py"])
        diffs = session.diff_files(first, on_progress=progress.append)
        expect(sorted(diff["path"] for diff in diffs) == expected_changes, "diff_files() lists every changed file", [diff["path"] for diff in diffs])
        expect(len(progress) > 0 and all("done" in entry and "total" in entry for entry in progress), "diff_files() reports progress", progress)
        print(f"diff_files: {len(diffs)} files, {len(progress)} progress notifications")

        preview = session.rewind_files(first, dry_run=True)
        print(f"dry run: can_rewind={preview['can_rewind']} files_changed={len(preview['files_changed'])} +{preview['insertions']} -{preview['deletions']} skipped_links={preview['skipped_links']}")
        expect(preview["can_rewind"] is True, "the dry run can rewind", preview)
        expect(sorted(preview["files_changed"]) == expected_changes, "the dry run lists every changed file", preview["files_changed"])
        expect_files(project, turn_state, "unchanged by the dry run")

        result = session.rewind_files(first)
        undo = result.get("undo_checkpoint_id")
        print(f"rewind: {len(result['files_changed'])} files changed, undo point {undo}")
        expect(sorted(result["files_changed"]) == expected_changes, "the rewind changes what the dry run said", result["files_changed"])
        expect_files(project, originals, "as before turn 1")
        step(stepping, "rewound")

        expect(isinstance(undo, str), "a real rewind returns its undo point", result)
        undone = session.rewind_files(undo)
        print(f"undo: {len(undone['files_changed'])} files changed")
        expect_files(project, turn_state, "as after turn 2")
        step(stepping, "undone")
    print("ok")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", help="project directory (default: a new temporary one)")
    parser.add_argument("--store", help="store directory (default: a new temporary one)")
    parser.add_argument("--step", action="store_true", help="pause at each state: print STEP <name>, wait for a line on stdin")
    arguments = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}")
    temporary = tempfile.mkdtemp(prefix="rewindable-harness-")
    try:
        project = arguments.project or os.path.join(temporary, "project")
        store = arguments.store or os.path.join(temporary, "store")
        os.makedirs(project, exist_ok=True)
        run(project, store, arguments.step)
        return 0
    except Mismatch as mismatch:
        print(f"MISMATCH: {mismatch}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
