import pathlib
import subprocess
import tempfile
import uuid

from rewindable import Rewindable, RewindableError

project = pathlib.Path(tempfile.mkdtemp())
(project / "app.py").write_text('print("hello")\n')

# capture=True: the session can also record what shell commands change
with Rewindable() as client, client.open(str(project), capture=True) as session:
    turn = str(uuid.uuid4())
    session.checkpoint(turn)  # a user message arrived, before any tool runs

    session.track_edit("app.py")  # before the agent's Write tool changes it
    (project / "app.py").write_text('print("bye")\n')
    with session.capture("rm app.py; touch log.txt") as command:  # a shell command
        subprocess.run(["sh", "-c", "rm app.py; touch log.txt"], cwd=project, check=True)
    print(command.changes["deleted"], command.changes["created"])

    preview = session.rewind_files(turn, dry_run=True)
    print(preview["can_rewind"], preview["files_changed"], preview["insertions"], preview["deletions"])
    result = session.rewind_files(turn)
    print((project / "app.py").read_text().strip(), (project / "log.txt").exists())  # print("hello") False
    session.rewind_files(result["undo_checkpoint_id"])  # every rewind can be undone

    try:
        session.rewind_files(str(uuid.uuid4()))  # no checkpoint has that id
    except RewindableError as error:  # or CheckpointNotFoundError
        print(error.code)  # CHECKPOINT_NOT_FOUND

print((project / "app.py").exists(), (project / "log.txt").exists())  # False True
