"""The Python code blocks of bindings/python/README.md and of the top-level
README.md run as written, in order, in one namespace per file (as a reader
pastes them into one session), in a temporary folder. A block followed by
"prints" and a plain fenced block must print exactly that (whitespace at
line ends ignored).

A comment line before a block marks it:
    <!-- readme-test: skip (the reason) -->     not run (a cluster, data the tests lack)
    <!-- readme-test: needs gudhi matplotlib --> skipped unless those modules import
Every other block runs. Skipped when the READMEs are not beside the tests
(an installed package).
"""

import contextlib
import io
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {
    "python": os.path.join(HERE, "..", "README.md"),
    "top": os.path.join(HERE, "..", "..", "..", "README.md"),
}
MARK = re.compile(r"<!--\s*readme-test:\s*(skip|needs)\b(.*?)-->")
FENCE = re.compile(r"^```python\n(.*?)^```\n(?:\nprints\n\n```\n(.*?)^```\n)?", re.S | re.M)


def blocks(path):
    """(line, code, expected output or None, mark or None) of every ```python block."""
    text = open(path, encoding="utf-8").read()
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").split("\n")[-1]
        mark = MARK.search(before)
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2),
                    (mark.group(1), mark.group(2).strip()) if mark else None))
    return out


def cases():
    for name, path in FILES.items():
        if not os.path.exists(path):
            continue
        found = blocks(path)
        yield pytest.param(name, path, found, id=name)


def strip_lines(s):
    return "\n".join(line.rstrip() for line in s.strip("\n").split("\n"))


@pytest.mark.parametrize("name,path,found", list(cases()))
def test_readme_python_blocks_run_as_written(name, path, found, tmp_path, monkeypatch):
    if not found:
        pytest.fail(f"{path} has no ```python block")
    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__readme__"}
    ran = 0
    for line, code, expected, mark in found:
        if mark and mark[0] == "skip":
            continue
        if mark and mark[0] == "needs":
            missing = [m for m in mark[1].split() if not _importable(m)]
            if missing:
                continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, f"{os.path.basename(path)}:{line}", "exec"), scope)
        ran += 1
        if expected is not None:
            assert strip_lines(buf.getvalue()) == strip_lines(expected), f"the block at line {line}"
    assert ran > 0


def _importable(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def test_every_block_is_found_and_every_mark_is_known():
    for name, path in FILES.items():
        if not os.path.exists(path):
            pytest.skip("the READMEs are not beside these tests (installed package)")
        text = open(path, encoding="utf-8").read()
        assert len(blocks(path)) == text.count("```python\n"), path
        for m in re.finditer(r"<!--\s*readme-test:(.*?)-->", text):
            assert MARK.search(m.group(0)), f"{path}: unknown mark {m.group(0)}"
