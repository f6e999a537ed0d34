"""Every Python example in README.md and docs/ runs as written.

One test per page: its ```python blocks (and ``.. code-block:: python`` in .rst
pages) run in order in one namespace, as if pasted into one session, in a
fresh temporary folder with matplotlib's Agg backend. A page whose examples
start worker processes (a Dask ``LocalCluster``, ``n_jobs`` above 1,
``multiprocessing``) runs instead as a script, its blocks concatenated, with
``sys.executable`` in a subprocess, because that is how a user runs them.
Either way a failure names the page, the block's first line and the line
that raised, with page line numbers.

A block may emit a statsmodels warning or a ``RuntimeWarning`` only when its
text names the warning's class (e.g. ``# PerfectSeparationWarning``): an
example that warns unexpectedly fails, as a test would under the pytest config.

Markers, on the line just before a fence (an HTML comment, which neither GitHub
nor Sphinx shows); keep them rare:

``<!-- docs-test: skip REASON -->``
    not run, reported as skipped with REASON (e.g. ``network: ...`` for a
    block that connects to a server);
``<!-- docs-test: needs-data -->``
    reads the paper's UCI data (``../shared/data``, or ``--data-dir``), handed
    over through ``PLUMESTATS_DATA``; the page is skipped without it, except
    under ``CI``;
``<!-- docs-test: xfail REASON -->``
    expected to fail until a feature lands: the page is reported as xfailed
    with REASON, and fails if the block runs (remove the marker then).
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import re
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from statsmodels.tools.sm_exceptions import ModelWarning

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOT_SOURCES = ("_build", "generated", "_templates")

FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*?)\s*$")
PYTHON_INFO = re.compile(r"^(?:python3?|py|\{code-block\}\s+python3?)$")
# MyST directives whose body is markdown (it may hold code fences)
CONTAINERS = re.compile(
    r"^\{(?:note|warning|tip|important|seealso|admonition|dropdown)"
)
RST_CODE = re.compile(
    r"^(?P<indent>\s*)\.\. (?:code-block|code|sourcecode):: python3?$"
)
MARKER = re.compile(
    r"docs-test:\s*(?P<kind>skip|xfail|needs-data)\b\s*(?P<reason>.*?)\s*(?:-->)?$"
)
# examples that start processes: run as a script, as a user would
PROCESSES = re.compile(
    r"LocalCluster|multiprocessing|ProcessPool|n_jobs\s*=\s*(?:-1|[2-9]|\d{2})"
)
# what a page's imports need beyond the core dependencies: extra -> modules
EXTRAS = {
    "plot": ("matplotlib",),
    "dask": ("dask", "distributed", "pyarrow"),
    "sklearn": ("sklearn",),
}
EXTRA_OF_IMPORT = {
    "matplotlib": "plot",
    "plumestats.plotting": "plot",
    "dask": "dask",
    "distributed": "dask",
    "sklearn": "sklearn",
    "plumestats.sklearn": "sklearn",
}
IMPORT = re.compile(r"^\s*(?:from|import)\s+([\w.]+)", re.MULTILINE)
# warnings that fail a block unless the block names them (as pyproject's filters)
CHECKED_WARNINGS = (ModelWarning, RuntimeWarning)


@dataclass(frozen=True)
class Block:
    line: int  # page line of the block's first code line (1-based)
    code: str
    marker: str = ""  # "", "skip", "xfail" or "needs-data"
    reason: str = ""


def _marker(lines: list[str], index: int) -> tuple[str, str]:
    """The docs-test marker on the line before ``lines[index]``, if any."""
    found = MARKER.search(lines[index - 1]) if index > 0 else None
    return (found["kind"], found["reason"]) if found else ("", "")


def _closing(fence: str) -> re.Pattern:
    return re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")


def markdown_blocks(text: str) -> list[Block]:
    """The python fences of a (MyST) markdown page, in order."""
    lines, blocks, containers, index = text.splitlines(), [], [], 0
    while index < len(lines):
        line, index = lines[index], index + 1
        if containers and containers[-1].match(line):
            containers.pop()
            continue
        opened = FENCE.match(line)
        if not opened:
            continue
        if CONTAINERS.match(opened["info"]):  # its body is markdown: look inside
            containers.append(_closing(opened["fence"]))
            continue
        closing, start = _closing(opened["fence"]), index
        while index < len(lines) and not closing.match(lines[index]):
            index += 1
        if PYTHON_INFO.match(opened["info"]):
            code = "\n".join(lines[start:index])
            blocks.append(Block(start + 1, code, *_marker(lines, start - 1)))
        index += 1
    return blocks


def rst_blocks(text: str) -> list[Block]:
    """The ``.. code-block:: python`` bodies of a reStructuredText page."""
    lines, blocks = text.splitlines(), []
    for index, line in enumerate(lines):
        opened = RST_CODE.match(line)
        if not opened:
            continue
        body, start = [], None
        for later in range(index + 1, len(lines)):
            text_line = lines[later]
            indent = len(text_line) - len(text_line.lstrip())
            if text_line.strip() and indent <= len(opened["indent"]):
                break
            if start is None and (not text_line.strip() or text_line.strip()[0] == ":"):
                continue  # the directive's options and the blank line after them
            start = later if start is None else start
            body.append(text_line)
        if start is not None:
            code = "\n".join(body).rstrip()
            dedent = min(len(b) - len(b.lstrip()) for b in body if b.strip())
            code = "\n".join(b[dedent:] for b in code.splitlines())
            blocks.append(Block(start + 1, code, *_marker(lines, index)))
    return blocks


def page_blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return rst_blocks(text) if path.suffix == ".rst" else markdown_blocks(text)


def _pages() -> list[Path]:
    sources = [
        ROOT / "README.md",
        *sorted(DOCS.rglob("*.md")),
        *sorted(DOCS.rglob("*.rst")),
    ]
    return [
        path
        for path in sources
        if not set(path.relative_to(ROOT).parts) & set(NOT_SOURCES)
        and page_blocks(path)
    ]


PAGES = _pages()


def _padded(blocks: list[Block]) -> str:
    """The blocks as one source whose line numbers are the page's."""
    lines: list[str] = []
    for block in blocks:
        lines += [""] * (block.line - 1 - len(lines))
        lines += block.code.splitlines()
    return "\n".join(lines) + "\n"


def _page_frames(exc: BaseException, filename: str) -> str:
    """The traceback from the page's frame inwards (library frames kept short)."""
    frames = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(frames) if f.filename == filename), 0)
    shown = traceback.format_list(frames[first:])
    if len(shown) > 6:
        shown = [*shown[:3], "  ...\n", *shown[-2:]]
    return "".join(shown)


def _check_warnings(caught, block: Block) -> None:
    for item in caught:
        names = {cls.__name__ for cls in item.category.__mro__}
        if issubclass(item.category, CHECKED_WARNINGS):
            if not names & set(re.findall(r"\w+", block.code)):
                raise AssertionError(
                    f"unexpected {item.category.__name__}: {item.message}"
                )
        else:  # not ours to judge: hand it to pytest's summary
            warnings.warn_explicit(
                item.message, item.category, item.filename, item.lineno
            )


def _run_block(block: Block, page: str, namespace: dict) -> BaseException | None:
    """Exec one block; the exception it raised (or its unexpected warning)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(_padded([block]), page, "exec"), namespace)
        _check_warnings(caught, block)
    except Exception as exc:
        return exc
    finally:
        _close_figures()
    return None


def run_in_session(page: str, blocks: list[Block]) -> list[str]:
    """Exec the blocks in one namespace; the reasons of the xfail blocks that failed."""
    namespace: dict = {"__name__": "__main__"}
    source = _padded(blocks)  # tracebacks quote the page's lines
    linecache.cache[page] = (len(source), None, source.splitlines(True), page)
    xfailed = []
    for block in blocks:
        exc = _run_block(block, page, namespace)
        if block.marker == "xfail" and exc is not None:
            xfailed.append(f"line {block.line}: {block.reason}")
        elif block.marker == "xfail":
            message = f"is marked xfail ({block.reason}) but runs: remove the marker"
            pytest.fail(f"{page}, block at line {block.line} {message}", pytrace=False)
        elif exc is not None:
            pytest.fail(
                f"{page}, block at line {block.line}: {type(exc).__name__}: {exc}\n"
                + _page_frames(exc, page),
                pytrace=False,
            )
    return xfailed


def _close_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def run_as_script(page: str, blocks: list[Block], folder: Path) -> list[str]:
    """Run the blocks as one script in a subprocess; the xfail reasons, if any."""
    script = folder / f"{Path(page).stem}.py"
    script.write_text(_padded(blocks), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, script.name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    xfails = [b for b in blocks if b.marker == "xfail"]
    if proc.returncode == 0:
        if xfails:
            pytest.fail(f"{page}: blocks marked xfail run: remove the markers")
        printed = set(re.findall(r"\b(\w+Warning): ", proc.stderr))
        named = set(re.findall(r"\w+", "\n".join(b.code for b in blocks)))
        if unexpected := (printed & _checked_warning_names()) - named:
            pytest.fail(
                f"{page} as a script warned: {sorted(unexpected)}\n{proc.stderr}"
            )
        return []
    lines = [
        int(n) for n in re.findall(rf'File ".*{script.name}", line (\d+)', proc.stderr)
    ]
    line = lines[-1] if lines else 0
    for block in xfails:
        if block.line <= line < block.line + len(block.code.splitlines()):
            return [f"line {block.line}: {block.reason}"]
    tail = proc.stderr.strip().splitlines()[-15:]
    where = f", line {line}" if line else ""
    pytest.fail(
        f"{page} as a script{where}: exit status {proc.returncode}\n" + "\n".join(tail),
        pytrace=False,
    )


def _checked_warning_names() -> set[str]:
    """The names of the warning classes a block must name to emit them."""
    import plumestats.api  # noqa: F401  (defines plumestats' own subclasses)

    names, stack = set(), list(CHECKED_WARNINGS)
    while stack:
        cls = stack.pop()
        names.add(cls.__name__)
        stack += cls.__subclasses__()
    return names


def missing_extras(code: str) -> list[str]:
    """The optional extras the code imports that are not installed."""
    extras = {
        extra
        for name in IMPORT.findall(code)
        for prefix, extra in EXTRA_OF_IMPORT.items()
        if name == prefix or name.startswith(prefix + ".")
    }
    return sorted(
        extra
        for extra in extras
        if any(importlib.util.find_spec(module) is None for module in EXTRAS[extra])
    )


def test_the_pages_with_examples_are_found():
    names = {path.relative_to(ROOT).as_posix() for path in PAGES}
    assert {"README.md", "docs/getting_started.md", "docs/index.md"} <= names


@pytest.mark.parametrize(
    "path", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES]
)
def test_page_examples_run(path, request, tmp_path, monkeypatch):
    page = path.relative_to(ROOT).as_posix()
    blocks = page_blocks(path)
    skipped = [b for b in blocks if b.marker == "skip"]
    blocks = [b for b in blocks if b.marker != "skip"]
    if not blocks:
        pytest.skip(f"{page}: every block is marked skip ({skipped[0].reason})")
    missing = missing_extras("\n".join(b.code for b in blocks))
    if missing:
        reason = f'{page} needs pip install -e ".[{",".join(missing)}]"'
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI's test command installs them", pytrace=False)
        pytest.skip(reason)
    if any(b.marker == "needs-data" for b in blocks):
        monkeypatch.setenv("PLUMESTATS_DATA", str(request.getfixturevalue("data_dir")))
    monkeypatch.setenv("MPLBACKEND", "Agg")  # figures are saved, never shown
    monkeypatch.chdir(tmp_path)  # files the examples write land here
    if PROCESSES.search("\n".join(b.code for b in blocks)):
        xfailed = run_as_script(page, blocks, tmp_path)
    else:
        if "matplotlib" in sys.modules:
            sys.modules["matplotlib"].use("Agg")
        xfailed = run_in_session(page, blocks)
    if xfailed:
        pytest.xfail(f"{page}: " + "; ".join(xfailed))


SKIPPED = [
    (path, block)
    for path in PAGES
    for block in page_blocks(path)
    if block.marker == "skip"
]


@pytest.mark.parametrize(
    ("path", "block"),
    SKIPPED,
    ids=[f"{p.relative_to(ROOT).as_posix()}:{b.line}" for p, b in SKIPPED],
)
def test_skipped_block(path, block):
    """Each block marked skip is listed, with its reason, in the test report."""
    assert block.reason, "a skip marker needs a reason"
    pytest.skip(
        f"{path.relative_to(ROOT).as_posix()}, line {block.line}: {block.reason}"
    )


# The runner's own mechanics, on small made-up pages.

PAGE = """# A page

```python
x = 1
```

<!-- docs-test: skip network: made up -->
```python
import urllib.request
```

````markdown
```python
not_a_block()
```
````

````{note}
```python
y = x + 1
```
````

```text
not python
```
"""


def test_markdown_blocks_are_the_python_fences_with_their_markers():
    blocks = markdown_blocks(PAGE)
    assert [(b.line, b.code, b.marker) for b in blocks] == [
        (4, "x = 1", ""),
        (9, "import urllib.request", "skip"),
        (20, "y = x + 1", ""),
    ]
    assert blocks[1].reason == "network: made up"


def test_rst_code_blocks_are_found_dedented():
    text = (
        "T\n=\n\n.. code-block:: python\n   :caption: c\n\n   a = 1\n   b = a\n\nText\n"
    )
    assert [(b.line, b.code) for b in rst_blocks(text)] == [(7, "a = 1\nb = a")]


def test_a_failing_block_is_named_by_page_and_line():
    blocks = [Block(3, "a = 1"), Block(6, "b = a\nc = missing")]
    with pytest.raises(pytest.fail.Exception) as failure:
        run_in_session("made_up.md", blocks)
    message = str(failure.value)
    assert "made_up.md, block at line 6: NameError" in message
    assert 'File "made_up.md", line 7' in message


def test_xfail_blocks_are_reported_and_must_fail():
    failing = [Block(3, "import not_a_module", "xfail", "needs a feature")]
    assert run_in_session("made_up.md", failing) == ["line 3: needs a feature"]
    with pytest.raises(pytest.fail.Exception, match="remove the marker"):
        run_in_session("made_up.md", [Block(3, "a = 1", "xfail", "needs a feature")])


def test_a_block_may_emit_only_the_warnings_it_names():
    warn = "import numpy as np\nnp.log(0.0)"
    with pytest.raises(pytest.fail.Exception, match="unexpected RuntimeWarning"):
        run_in_session("made_up.md", [Block(1, warn)])
    assert run_in_session("made_up.md", [Block(1, warn + "  # RuntimeWarning")]) == []


def test_a_script_page_reports_the_page_line(tmp_path):
    blocks = [Block(2, "import sys"), Block(5, "print('ok')\nraise SystemExit(3)")]
    with pytest.raises(
        pytest.fail.Exception, match=r"made_up\.md as a script: exit status 3"
    ):
        run_as_script("made_up.md", blocks, tmp_path)
    blocks = [Block(2, "import sys"), Block(5, "x = 1\nraise ValueError('no')")]
    with pytest.raises(pytest.fail.Exception, match="as a script, line 6: exit"):
        run_as_script("made_up.md", blocks, tmp_path)


def test_pages_that_start_processes_are_run_as_scripts():
    assert PROCESSES.search("LocalCluster(n_workers=2)")
    assert PROCESSES.search("res.bootstrap(n_boot=9, n_jobs=2)")
    assert not PROCESSES.search("res.bootstrap(n_boot=9, n_jobs=1)")
