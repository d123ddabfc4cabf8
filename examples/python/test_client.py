"""Tests of the Python client, against the real server (`node dist/cli.js serve --stdio`).

    python3 -W error -m unittest examples/python/test_client.py

The server must be built (`npm run build`). Every test runs under a watchdog:
a test that hangs dumps its threads' stacks and ends the process with an error.
"""

import faulthandler
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import rewindable  # noqa: E402
from rewindable import (  # noqa: E402
    ERROR_CLASSES,
    CheckpointNotFoundError,
    CwdNotFoundError,
    InvalidIdError,
    InvalidOptionsError,
    NoCheckpointError,
    ProtocolError,
    Rewindable,
    RewindableError,
    ServerExitedError,
    SessionLockedError,
    SessionNotFoundError,
)
from rewindable.connection import _error_of  # noqa: E402
from rewindable.names import from_wire, to_wire  # noqa: E402

WATCHDOG_SECONDS = 60
# A "server" that reads one request, complains on stderr and exits 3.
DYING_SERVER = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.stderr.write('fatal: out of cheese\\n'); sys.exit(3)"]
# A "server" that reads requests and never answers.
SILENT_SERVER = [sys.executable, "-c", "import sys, time\nfor line in sys.stdin: pass\n"]


def library_codes() -> List[str]:
    """The codes of `RewindableErrorCode` in src/errors.ts."""
    with open(os.path.join(REPOSITORY, "src", "errors.ts"), encoding="utf-8") as handle:
        source = handle.read()
    block = source[source.index("export const RewindableErrorCode = {") :]
    block = block[: block.index("} as const;")]
    return re.findall(r"^\s+([A-Z_]+): '\1',$", block, re.M)


class Watchdog(unittest.TestCase):
    def setUp(self) -> None:
        faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
        self.addCleanup(faulthandler.cancel_dump_traceback_later)


class NamesTest(Watchdog):
    def test_results_get_snake_case_field_names_and_keep_their_data(self) -> None:
        wire = {
            "canRewind": True,
            "filesChanged": ["/p/camelCase.ts"],
            "skippedByReason": {"hard-link": 1, "mergeConflict": 2},
            "files": [{"path": "/p/a", "toolCallIds": ["callId-1"], "statsSkipped": False}],
            "/p/someFile.ts": {"insertions": 1, "toolCallIds": []},
            "message": {"role": "assistant", "stopReason": "end_turn", "content": [{"toolUseId": "x"}]},
        }
        self.assertEqual(
            from_wire(wire),
            {
                "can_rewind": True,
                "files_changed": ["/p/camelCase.ts"],
                "skipped_by_reason": {"hard-link": 1, "mergeConflict": 2},
                "files": [{"path": "/p/a", "tool_call_ids": ["callId-1"], "stats_skipped": False}],
                "/p/someFile.ts": {"insertions": 1, "tool_call_ids": []},
                "message": {"role": "assistant", "stopReason": "end_turn", "content": [{"toolUseId": "x"}]},
            },
        )

    def test_options_get_wire_names_and_none_means_not_given(self) -> None:
        self.assertEqual(
            to_wire({"user_message_id": "u", "dry_run": False, "paths": None, "session": {"resume": "s", "read_only": True}}),
            {"userMessageId": "u", "dryRun": False, "session": {"resume": "s", "readOnly": True}},
        )


class DeepAnswerTest(Watchdog):
    # A server stand-in that answers initialize with a result nested deeper than Python's JSON parser goes.
    DEEP_SERVER = (
        "import sys\n"
        "sys.stdin.readline()\n"
        "sys.stdout.write('{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":' + '[' * 5000 + ']' * 5000 + '}\\n')\n"
        "sys.stdout.flush()\n"
        "sys.stdin.read()\n"
    )

    def test_an_answer_too_deep_to_parse_fails_its_call_instead_of_the_reader(self) -> None:
        with self.assertRaises(ProtocolError) as raised:
            Rewindable(command=[sys.executable, "-c", self.DEEP_SERVER], timeout=20)
        self.assertEqual(raised.exception.code, ProtocolError.PARSE_ERROR)
        self.assertIn("nested too deeply", str(raised.exception))


class ErrorMappingTest(Watchdog):
    def test_every_code_of_src_errors_ts_has_its_subclass(self) -> None:
        codes = library_codes()
        self.assertGreater(len(codes), 30)
        self.assertEqual(sorted(ERROR_CLASSES), sorted(codes))
        for code in codes:
            cls = ERROR_CLASSES[code]
            self.assertEqual(cls.__name__, "".join(part.capitalize() for part in code.split("_")) + "Error")
            self.assertTrue(issubclass(cls, RewindableError))
            self.assertIs(getattr(rewindable, cls.__name__), cls)

    def test_a_library_error_becomes_its_subclass_with_snake_case_details(self) -> None:
        error = _error_of({"code": -32000, "message": "Session is locked.", "data": {"code": "SESSION_LOCKED", "details": {"sessionId": "s", "pid": 7}}})
        self.assertIsInstance(error, SessionLockedError)
        assert isinstance(error, RewindableError)
        self.assertEqual((error.code, error.message, error.details, error.rpc_code), ("SESSION_LOCKED", "Session is locked.", {"session_id": "s", "pid": 7}, -32000))

    def test_an_unknown_library_code_is_still_a_rewindable_error(self) -> None:
        error = _error_of({"code": -32000, "message": "new", "data": {"code": "SOMETHING_NEW"}})
        self.assertIs(type(error), RewindableError)
        assert isinstance(error, RewindableError)
        self.assertEqual(error.code, "SOMETHING_NEW")

    def test_json_rpc_errors_are_protocol_errors_with_their_code(self) -> None:
        for code in (-32700, -32600, -32601, -32602, -32603):
            error = _error_of({"code": code, "message": "m"})
            self.assertIsInstance(error, ProtocolError)
            assert isinstance(error, ProtocolError)
            self.assertEqual(error.code, code)
        invalid = _error_of({"code": -32602, "message": "m", "data": {"code": "INVALID_OPTIONS", "details": {"issues": []}}})
        self.assertIsInstance(invalid, InvalidOptionsError)
        assert isinstance(invalid, RewindableError)
        self.assertEqual(invalid.rpc_code, -32602)


class DeadServerTest(Watchdog):
    def test_a_server_that_exits_raises_server_exited_error_with_its_stderr(self) -> None:
        with self.assertRaises(ServerExitedError) as raised:
            Rewindable(command=DYING_SERVER)
        self.assertEqual(raised.exception.returncode, 3)
        self.assertIn("out of cheese", raised.exception.stderr)
        self.assertIn("out of cheese", str(raised.exception))

    def test_a_command_that_cannot_start_raises_server_exited_error(self) -> None:
        with self.assertRaises(ServerExitedError):
            Rewindable(command=["/nonexistent/rewindable-server"])

    def test_rewindable_server_names_the_command_and_command_overrides_it(self) -> None:
        previous = os.environ.get("REWINDABLE_SERVER")
        os.environ["REWINDABLE_SERVER"] = " ".join(shlex.quote(part) for part in DYING_SERVER)
        try:
            self.assertEqual(rewindable.default_command(), DYING_SERVER)
            with self.assertRaises(ServerExitedError) as raised:
                Rewindable()
            self.assertIn("out of cheese", raised.exception.stderr)
            with self.assertRaises(TimeoutError):
                Rewindable(command=SILENT_SERVER, timeout=0.5)
        finally:
            if previous is None:
                del os.environ["REWINDABLE_SERVER"]
            else:
                os.environ["REWINDABLE_SERVER"] = previous

    def test_a_server_that_does_not_answer_times_out(self) -> None:
        with self.assertRaises(TimeoutError):
            Rewindable(command=SILENT_SERVER, timeout=0.5)

    def test_a_server_that_never_answers_initialize_fails_at_the_start_timeout_without_a_call_timeout(self) -> None:
        with self.assertRaises(TimeoutError):
            Rewindable(command=SILENT_SERVER, start_timeout=0.5)


class CloseTest(Watchdog):
    # A server stand-in: answers initialize at once, a "slow" call after 1.5 s, and shutdown at once (then exits).
    SLOW_SERVER = (
        "import json, sys, time\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    if request['method'] == 'slow':\n"
        "        time.sleep(1.5)\n"
        "    result = {'protocolVersion': %r} if request['method'] == 'initialize' else {'finished': request['method']}\n"
        "    sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': result}) + '\\n')\n"
        "    sys.stdout.flush()\n"
        "    if request['method'] == 'shutdown':\n"
        "        break\n"
    )

    def test_close_with_a_short_timeout_lets_a_call_in_progress_finish_first(self) -> None:
        client = Rewindable(command=[sys.executable, "-c", self.SLOW_SERVER % rewindable.PROTOCOL_VERSION])
        answers: list = []
        worker = threading.Thread(target=lambda: answers.append(client.call("slow")))
        worker.start()
        time.sleep(0.3)  # the call is sent and in progress
        self.assertEqual(client.close(timeout=0.2), 0)
        worker.join(10)
        self.assertEqual(answers, [{"finished": "slow"}])


class ServerTest(Watchdog):
    """Against the real server: each test with its own project and store, on one shared client
    (a test that ends its server starts its own)."""

    shared: Rewindable

    @classmethod
    def setUpClass(cls) -> None:
        cli = os.path.join(REPOSITORY, "dist", "cli.js")
        if not os.path.isfile(cli):
            raise RuntimeError(f"{cli} is missing: run `npm run build` first")
        cls.shared = Rewindable()

    @classmethod
    def tearDownClass(cls) -> None:
        stray = cls.shared.stray_lines
        cls.shared.close()
        if stray:
            raise AssertionError(f"the server wrote non-protocol lines to stdout: {stray[:3]}")

    def setUp(self) -> None:
        super().setUp()
        base = os.path.realpath(tempfile.mkdtemp(prefix="rewindable-python-"))
        self.addCleanup(shutil.rmtree, base, True)
        self.project = os.path.join(base, "project")
        self.store = os.path.join(base, "store")
        os.makedirs(self.project)
        self.client = self.shared

    def connect(self, **options: Any) -> Rewindable:
        client = Rewindable(**options)
        self.addCleanup(client.close)
        return client

    def write(self, relative: str, content: bytes) -> str:
        path = os.path.join(self.project, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content)
        return path

    def read(self, relative: str) -> bytes:
        with open(os.path.join(self.project, relative), "rb") as handle:
            return handle.read()

    def open(self, client: Any = None, **options: Any) -> Any:
        session = (client or self.client).open(self.project, store=self.store, **options)
        self.addCleanup(session.close)
        return session

    def test_initialize_reports_the_protocol_and_the_methods(self) -> None:
        self.assertTrue(self.client.server_version)
        for method in ("open", "checkpoint", "trackEdit", "rewindFiles", "diffFiles", "scanBegin", "scanEnd", "shutdown"):
            self.assertIn(method, self.client.methods)

    def test_a_tracked_edit_is_rewound_byte_for_byte_with_snake_case_results(self) -> None:
        original = b"line 1\nline 2\n\x00\xff"
        self.write("data.bin", original)
        session = self.open()
        turn = str(uuid.uuid4())
        self.assertEqual(session.checkpoint(turn), turn)
        session.track_edit("data.bin")
        self.write("data.bin", b"changed\n")
        session.record_write("data.bin", tool="Write", tool_call_id="call-1")
        preview = session.rewind_files(turn, dry_run=True)
        self.assertEqual(preview["can_rewind"], True)
        self.assertEqual(preview["files_changed"], [os.path.join(session.root, "data.bin")])
        self.assertEqual(preview["skipped_links"], 0)
        self.assertEqual(preview["files"][0]["tool_call_ids"], ["call-1"])
        self.assertEqual(self.read("data.bin"), b"changed\n")
        result = session.rewind_files(turn)
        self.assertEqual(self.read("data.bin"), original)
        self.assertIn("undo_checkpoint_id", result)
        self.assertEqual([entry["id"] for entry in session.list_checkpoints()][0], turn)

    def test_a_dry_run_that_cannot_happen_answers_can_rewind_false(self) -> None:
        session = self.open()
        session.checkpoint()
        preview = session.rewind_files(str(uuid.uuid4()), dry_run=True)
        self.assertEqual(preview["can_rewind"], False)
        self.assertEqual(preview["error_code"], "CHECKPOINT_NOT_FOUND")
        with self.assertRaises(CheckpointNotFoundError):
            session.rewind_files(str(uuid.uuid4()))

    def test_a_non_uuid_id_is_refused_before_anything_happens(self) -> None:
        session = self.open()
        for call in (lambda: session.checkpoint("not-a-uuid"), lambda: session.rewind_files("../../etc/passwd", dry_run=True)):
            with self.assertRaises(RewindableError) as raised:
                call()
            self.assertEqual(raised.exception.code, "INVALID_ID")
            self.assertIn("UUID", raised.exception.message)
        self.assertEqual(session.list_checkpoints(), [])

    # The server checks ids before the call reaches the library, with the library's code (-32602, INVALID_ID).
    def test_a_non_uuid_id_raises_invalid_id_error_as_the_library_does(self) -> None:
        session = self.open()
        with self.assertRaises(InvalidIdError) as raised:
            session.checkpoint("not-a-uuid")
        self.assertIn("userMessageId", raised.exception.message)

    def test_an_unknown_or_closed_handle_raises_invalid_options_error(self) -> None:
        stranger = rewindable.Session(self.client, "no-such-handle", str(uuid.uuid4()), self.project)
        with self.assertRaises(InvalidOptionsError):
            stranger.checkpoint()
        session = self.client.open(self.project, store=self.store)
        session.close()
        session.closed = False
        with self.assertRaises(InvalidOptionsError):
            session.list_checkpoints()
        session.closed = True

    def test_track_edit_before_a_checkpoint_raises_no_checkpoint_error(self) -> None:
        self.write("a.txt", b"a")
        with self.assertRaises(NoCheckpointError):
            self.open().track_edit("a.txt")

    def test_a_session_held_by_another_client_raises_session_locked_error(self) -> None:
        session = self.open()
        session.checkpoint()
        other = self.connect()
        with self.assertRaises(SessionLockedError) as raised:
            self.open(other, session={"resume": session.session_id})
        self.assertIsInstance(raised.exception, RewindableError)
        self.assertEqual(raised.exception.code, "SESSION_LOCKED")
        session.close()
        reopened = self.open(other, session={"resume": session.session_id})
        self.assertEqual(reopened.session_id, session.session_id)

    def test_a_read_only_session_reads_beside_the_writer_and_refuses_writes(self) -> None:
        self.write("a.txt", b"a\n")
        writer = self.open()
        turn = writer.checkpoint()
        writer.track_edit("a.txt")
        self.write("a.txt", b"b\n")
        reader = self.open(self.connect(), session={"resume": writer.session_id, "read_only": True})
        self.assertEqual([entry["id"] for entry in reader.list_checkpoints()], [turn])
        self.assertEqual(reader.rewind_files(turn, dry_run=True)["files_changed"], [os.path.join(reader.root, "a.txt")])
        with self.assertRaises(rewindable.ReadOnlyError):
            reader.track_edit("a.txt")
        with self.assertRaises(TypeError):
            reader.rewind_files(turn, dry_run=True, paths="a.txt")  # type: ignore[arg-type]
        self.assertEqual(self.read("a.txt"), b"b\n")

    def test_the_server_runs_in_its_own_process_group_away_from_ctrl_c(self) -> None:
        self.assertNotEqual(os.getpgid(self.client.pid), os.getpgid(0))

    def test_a_missing_session_or_project_raises_its_error(self) -> None:
        with self.assertRaises(SessionNotFoundError):
            self.open(session={"resume": str(uuid.uuid4())})
        with self.assertRaises(CwdNotFoundError):
            self.client.open(os.path.join(self.project, "missing"), store=self.store)

    def test_malformed_requests_are_protocol_errors(self) -> None:
        with self.assertRaises(ProtocolError) as raised:
            self.client.call("noSuchMethod", {})
        self.assertEqual(raised.exception.code, ProtocolError.METHOD_NOT_FOUND)
        with self.assertRaises(RewindableError) as invalid:
            self.client.call("open", {"cwd": 42})
        self.assertEqual(invalid.exception.code, "INVALID_OPTIONS")

    def test_diff_files_calls_the_progress_callbacks(self) -> None:
        everything: List[Dict[str, Any]] = []
        client = self.connect(on_progress=everything.append)
        session = self.open(client)
        turn = session.checkpoint()
        for index in range(5):
            session.track_edit(f"file{index}.txt")
            self.write(f"file{index}.txt", b"new\n")
        mine: List[Dict[str, Any]] = []
        diffs = session.diff_files(turn, on_progress=mine.append)
        self.assertEqual(len(diffs), 5)
        self.assertGreater(len(mine), 0)
        self.assertEqual(mine[-1]["done"], mine[-1]["total"])
        self.assertEqual(set(mine[0]), {"progress_token", "done", "total", "path"})
        self.assertEqual(len([entry for entry in everything if entry["progress_token"] == mine[0]["progress_token"]]), len(mine))

    def test_a_server_killed_mid_call_raises_server_exited_error(self) -> None:
        self.client = self.connect()
        session = self.open()
        turn = session.checkpoint()
        for index in range(3):
            session.track_edit(f"file{index}.txt")
            self.write(f"file{index}.txt", b"new\n")

        # Stopped, the server cannot answer: the call is surely waiting when the kill comes.
        os.kill(self.client.pid, signal.SIGSTOP)
        killer = threading.Timer(0.3, os.kill, (self.client.pid, signal.SIGKILL))
        killer.start()
        self.addCleanup(killer.cancel)
        with self.assertRaises(ServerExitedError) as raised:
            session.diff_files(turn)
        self.assertEqual(raised.exception.returncode, -signal.SIGKILL)
        with self.assertRaises(ServerExitedError):
            session.list_checkpoints()

    def test_a_capture_records_a_command_even_when_it_fails(self) -> None:
        self.write("a.txt", b"a\n")
        session = self.open(capture=True)
        turn = session.checkpoint()
        scope = session.capture("rm a.txt")
        with self.assertRaises(subprocess.CalledProcessError):
            with scope:
                subprocess.run(["sh", "-c", "rm a.txt; echo b > b.txt; exit 4"], cwd=self.project, check=True)
        self.assertIsNotNone(scope.changes)
        assert scope.changes is not None
        self.assertEqual(scope.changes["deleted"], [os.path.join(session.root, "a.txt")])
        self.assertEqual(scope.changes["created"], [os.path.join(session.root, "b.txt")])
        session.rewind_files(turn)
        self.assertEqual(self.read("a.txt"), b"a\n")
        self.assertFalse(os.path.exists(os.path.join(self.project, "b.txt")))

    # Without `capture` at open, a scan covers the default scope, as the library's captureChanges does.
    def test_a_capture_works_without_a_capture_scope_at_open(self) -> None:
        session = self.open()
        session.checkpoint()
        with session.capture("touch") as scope:
            self.write("new.txt", b"")
        self.assertEqual(scope.changes, {"created": [os.path.join(session.root, "new.txt")], "modified": [], "deleted": [], "over_cap": [], "unreadable": []})

    def test_calls_from_many_threads_each_get_their_own_answer(self) -> None:
        session = self.open()
        answers: Dict[str, str] = {}
        errors: List[BaseException] = []

        def record(index: int) -> None:
            try:
                for round_ in range(5):
                    message_id = str(uuid.uuid4())
                    stored = session.record_message("assistant", {"thread": index, "round": round_}, uuid=message_id, parent_uuid=None)
                    answers[message_id] = stored["uuid"]
                    if stored["message"] != {"thread": index, "round": round_}:
                        raise AssertionError(stored)
            except BaseException as error:  # noqa: BLE001 - reported by the main thread
                errors.append(error)

        threads = [threading.Thread(target=record, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(answers), 40)
        self.assertTrue(all(sent == stored for sent, stored in answers.items()))
        self.assertEqual(len(session.list_branches()), 40)

    def test_the_transcript_keeps_the_harness_payload_as_given(self) -> None:
        session = self.open()
        payload = {"role": "user", "content": [{"type": "text", "text": "hi"}], "parentToolUseId": None, "camelCase": {"innerKey": 1}}
        user = session.record_user_message(payload)
        self.assertEqual(user["message"], payload)
        self.assertIsNone(user["parent_uuid"])
        reply = session.record_message("assistant", {"stopReason": "end_turn"})
        self.assertEqual(reply["parent_uuid"], user["uuid"])
        transcript = session.get_transcript()
        self.assertEqual([entry["message"] for entry in transcript], [payload, {"stopReason": "end_turn"}])
        result = session.rewind(user["uuid"], scope="conversation")
        self.assertEqual(result["status"], "success")
        self.assertEqual(result["conversation"]["rewound_message"]["message"], payload)

    def test_unicode_names_and_payloads_round_trip(self) -> None:
        name = "d\u00e9j\u00e0 vu \U0001f600\u2028.txt"
        self.write(name, "caf\u00e9\r\n".encode("utf-8"))
        session = self.open()
        turn = session.checkpoint()
        session.track_edit(name)
        self.write(name, b"changed")
        self.assertEqual(session.rewind_files(turn)["files_changed"], [os.path.join(session.root, name)])
        self.assertEqual(self.read(name), "caf\u00e9\r\n".encode("utf-8"))
        payload = {"text": "line\nbreak \u2028 \u2029 \r \x00 \U0001f600", "big": "x" * (2 << 20)}
        self.assertEqual(session.record_message("assistant", payload)["message"], payload)

    def test_a_request_over_16_mib_is_refused_without_being_sent(self) -> None:
        session = self.open()
        with self.assertRaises(ProtocolError) as raised:
            session.record_message("assistant", "x" * (17 << 20))
        self.assertEqual(raised.exception.code, ProtocolError.INVALID_REQUEST)
        with self.assertRaises(ValueError):
            session.record_message("assistant", {"score": float("nan")})
        self.assertEqual(session.get_transcript(), [])

    def test_an_exception_in_a_progress_callback_is_raised_by_the_call(self) -> None:
        session = self.open()
        turn = session.checkpoint()
        session.track_edit("a.txt")
        self.write("a.txt", b"a")

        def fail(progress: Dict[str, Any]) -> None:
            raise KeyError("from the callback")

        with self.assertRaises(KeyError):
            session.diff_files(turn, on_progress=fail)
        self.assertEqual(len(session.diff_files(turn)), 1)

    def test_two_sessions_share_one_connection(self) -> None:
        first, second = self.open(), self.open()
        self.assertNotEqual(first.handle, second.handle)
        self.assertNotEqual(first.session_id, second.session_id)
        first.checkpoint()
        self.assertEqual(len(first.list_checkpoints()), 1)
        self.assertEqual(second.list_checkpoints(), [])
        listed = {entry["session_id"] for entry in self.client.list_sessions(self.project, store=self.store)}
        self.assertIn(first.session_id, listed)

    def test_stdout_carries_protocol_messages_only_and_close_ends_the_server(self) -> None:
        self.client = self.connect()
        session = self.open()
        session.checkpoint()
        session.close()
        self.assertEqual(self.client.stray_lines, [])
        self.assertEqual(self.client.close(), 0)
        with self.assertRaises(ServerExitedError) as raised:
            self.client.list_sessions(self.project, store=self.store)
        self.assertIn("client was closed", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
