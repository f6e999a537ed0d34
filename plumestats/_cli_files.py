"""The command line's output files: checked before the work, written whole.

``plumestats fit ... --output FILE`` and ``plumestats predict ... --output
FILE`` follow four rules, checked before any fitting so that no fit is lost
to a bad path:

- never over one of the command's own inputs (the training CSV, the model,
  the new data), compared by resolved path and, when the output exists, by
  ``os.path.samefile`` (hard links);
- never through a symbolic link: a link as the output is refused whatever
  it points at (replacing it would replace the link, writing through it
  would write somewhere the command line does not show); give the target's
  own path;
- an existing file is replaced only with ``--force``;
- a missing folder, or a folder as the output, is one line naming it.

The file is written to a temporary file in the same folder (hidden, named
after the output), flushed to disk and renamed over the output with
``os.replace``, an atomic step: an interrupted or failed run leaves the old
file (or none) and no temporary file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["FileRefused", "check_output", "write_atomically"]


class FileRefused(Exception):
    """An output the command line will not write, reported as one line."""


def check_output(
    output: str, inputs: Mapping[str, str], force: bool, example: str = "fit.json"
) -> None:
    """Refuse ``output`` if writing it would lose something.

    Parameters
    ----------
    output : str
        The ``--output`` path.
    inputs : mapping
        The command's input files, ``{what it is: path}``.
    force : bool
        Whether an existing file may be replaced (``--force``).
    example : str
        A name of the file the command writes, for the advice.
    """
    target = Path(output)
    if not output.strip():  # an unset shell variable: say so, write nothing
        raise FileRefused(f"--output is empty; give a file name, e.g. {example}")
    if output.endswith(("/", os.sep)) and not target.is_dir():
        folder = output.rstrip("/" + os.sep)
        problem = (
            "is not a folder; give a file name"
            if Path(folder).exists()
            else "does not exist; create it first, or give a file name"
        )
        raise FileRefused(f"--output {output}: the folder {folder} {problem}")
    if target.is_dir():
        raise FileRefused(
            f"--output {output} is a folder; give a file name in it, e.g. "
            f"{target / example}"
        )
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise FileRefused(
            f"--output {output}: the folder {folder} {what}; create it first, or "
            "choose another file"
        )
    for what, path in inputs.items():
        if _same_file(output, path):
            raise FileRefused(
                f"--output {output} is {what} ({path}), an input of this command; "
                "plumestats never writes over its inputs: choose another file"
            )
    if os.path.islink(output):
        raise FileRefused(
            f"--output {output} is a symbolic link (to {os.readlink(output)}); "
            "plumestats does not write through links: give the file's own path"
        )
    if os.path.lexists(output) and not force:
        raise FileRefused(
            f"--output {output} exists; add --force to replace it, or choose "
            "another file"
        )


def _same_file(output: str, path: str) -> bool:
    if os.path.realpath(output) == os.path.realpath(path):
        return True
    try:  # another name of the same file (a hard link)
        return os.path.samefile(output, path)
    except OSError:  # either does not exist
        return False


def write_atomically(output: str, write: Callable[[str], None]) -> None:
    """Write ``output`` through ``write(temporary_path)``, then rename it into
    place; on any failure or interruption the temporary file is removed and
    ``output`` is left as it was."""
    target = Path(output)
    try:
        fd, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".part"
        )
    except OSError as exc:
        raise FileRefused(f"could not write {output}: {exc.strerror or exc}") from exc
    os.close(fd)
    try:
        write(temporary)
        with open(temporary, "rb+") as handle:  # on disk before the rename
            os.fsync(handle.fileno())
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except OSError as exc:
        raise FileRefused(f"could not write {output}: {exc.strerror or exc}") from exc
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def _mode_for(target: Path) -> int:
    """The permissions the output gets: those of the file it replaces, else
    those a new file gets under the umask (mkstemp's own are owner-only)."""
    if target.exists():
        return stat.S_IMODE(target.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
