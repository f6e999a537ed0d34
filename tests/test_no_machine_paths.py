"""No committed file names this machine: no absolute path, interpreter path or
PYTHONPATH setting, in code, docs and benchmark reports alike (a report says
``python -m benchmarks.<name> <args>``, see ``benchmarks/_common.py``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What a path of one machine looks like. Written as patterns, so that this file
# does not match itself.
MACHINE_PATH = re.compile(
    r"/(?:work|root|home|tmp|Users)/"  # POSIX home, scratch and work folders
    r"|\b[A-Z]:\\\\?(?:Users|Windows|Program|\w+\\)"  # a drive, then a folder
    r"|site[-]packages"  # an installed package's location
    r"|PYTHONPATH\s*="  # an environment setting in a command line
)
# Legitimate mentions, as (file, text of the line): none so far. A docs page
# that explains the rule with an example would be listed here, with a comment.
ALLOWED: set[tuple[str, str]] = set()
# Folders that are never committed (build outputs, caches), for a source tree
# without git, such as an unpacked source distribution.
UNTRACKED = {".git", "_build", "generated", "__pycache__", "build", "dist", "output"}


def committed_files() -> list[Path]:
    """``git ls-files``; without git, every file of the tree but build outputs."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z"],
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        return [path for path in ROOT.rglob("*") if path.is_file() and _shipped(path)]
    return [ROOT / name for name in listed.split("\0") if name]


def _shipped(path: Path) -> bool:
    """Not in a build output, a cache, a hidden folder or the egg-info (nor a
    worktree's ``.git`` file, which names where the repository is)."""
    parts = path.relative_to(ROOT).parts[:-1]
    return path.name != ".git" and not any(
        part in UNTRACKED or part.startswith(".") or part.endswith(".egg-info")
        for part in parts
    )


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file (a figure, a pickle)."""
    try:
        data = path.read_bytes()
    except OSError:  # deleted in the working tree, not yet in the index
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_committed_file_holds_a_machine_path():
    found = []
    for path in committed_files():
        text = text_of(path)
        if text is None:
            continue
        name = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line) and (name, line.strip()) not in ALLOWED:
                found.append(f"{name}:{number}: {line.strip()[:160]}")
    assert not found, "machine paths in committed files:\n" + "\n".join(found)


def test_the_pattern_finds_what_it_should():
    # the check itself: each kind of machine path is caught, relative paths not
    for line in (
        "- command: `/ro" + "ot/.pyenv/versions/3.11.7/bin/python x.py`",
        "plumestats from `/wo" + "rk/main/plumestats`",
        "--output /tm" + "p/exp",
        "C:" + "\\Users\\me\\project",
        "C:" + "\\\\work\\\\project",  # as a Python string spells it
        "lib/python3.11/site" + "-packages/plumestats",
        "PYTHON" + "PATH=/somewhere python -m benchmarks.table1",
    ):
        assert MACHINE_PATH.search(line), line
    for line in (
        "python -m benchmarks.table1 --data-dir ../shared/data",
        "--output '<elsewhere>/exp'",
        "benchmarks/results/table1.md",
        "$x:\\alpha$ and a ratio 3:1",
    ):
        assert not MACHINE_PATH.search(line), line
