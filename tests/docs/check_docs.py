#!/usr/bin/env python3
"""Checks of the documentation (ctest label `docs`): the examples of the
Markdown files run as written, and the files link to what exists.

    check_docs.py links ROOT
        Every relative link of the project's Markdown files (the front page
        and the manual; MARKDOWN below) resolves to a file
        or folder of the checkout (and a #fragment to a heading of the target
        Markdown file); README.md links nowhere outside the checkout and has at
        most 300 lines.
    check_docs.py c ROOT --cc CC --include DIR --lib LIBFILE
        Every complete C program (a ```c block with `int main`) of README.md
        and capi/README.md compiles against mpcf.h, links against LIBFILE and
        prints "L1 distance = 3" (the distance of the two example PCFs).
    check_docs.py cli ROOT --mpcf PATH
        The `$ mpcf ...` transcripts of README.md and capi/cli/README.md, run
        in a folder holding the data.csv those files show, print exactly the
        lines shown under them.
    check_docs.py copies ROOT
        The R and Julia examples of README.md are copies of lines of
        bindings/r/README.md and bindings/julia/Mpcf/README.md, where the R
        tests run them (test-readme.R) and Julia users find them.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARKDOWN = [
    "README.md", "capi/README.md", "capi/cli/README.md", "core/README.md", "cuda/README.md",
    "bindings/python/README.md", "bindings/r/README.md", "bindings/julia/Mpcf/README.md",
    "packaging/README.md", "tests/README.md", "tests/benchmarks/RESULTS.md",
    "tests/benchmarks/gpu/RESULTS.md",
]


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def anchors(text):
    """GitHub's anchors of the headings of a Markdown text."""
    out = set()
    in_code = False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        title = re.sub(r"[^\w\- ]", "", title)
        out.add(title.replace(" ", "-"))
    return out


def check_links(root):
    errors = []
    for rel in MARKDOWN:
        text = read(root, rel)
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
                continue
            path, _, frag = target.partition("#")
            full = os.path.normpath(os.path.join(root, os.path.dirname(rel), path)) if path else os.path.join(root, rel)
            if not os.path.abspath(full).startswith(os.path.abspath(root) + os.sep):
                errors.append(f"{rel}: link {target} leaves the checkout")
                continue
            if not os.path.exists(full):
                errors.append(f"{rel}: link {target}: no such file")
                continue
            if frag and full.endswith(".md") and frag not in anchors(open(full, encoding="utf-8").read()):
                errors.append(f"{rel}: link {target}: no heading #{frag} in {os.path.relpath(full, root)}")
    readme = read(root, "README.md")
    for bad in ("../shared", ".device"):
        if bad in readme:
            errors.append(f"README.md mentions {bad}: the README must stand alone")
    lines = readme.count("\n")
    if lines > 300:
        errors.append(f"README.md has {lines} lines; the front page keeps to 300")
    return errors, f"links of {len(MARKDOWN)} files; README.md {lines} lines"


def c_programs(text):
    return [b for b in re.findall(r"```c\n(.*?)```", text, re.S) if "int main" in b]


def check_c(root, cc, include, lib):
    errors, n = [], 0
    with tempfile.TemporaryDirectory(prefix="mpcf-docs-c-") as tmp:
        for rel in ("README.md", "capi/README.md"):
            for k, program in enumerate(c_programs(read(root, rel))):
                n += 1
                src = os.path.join(tmp, f"example{n}.c")
                exe = os.path.join(tmp, f"example{n}")
                with open(src, "w") as f:
                    f.write(program)
                cmd = shlex.split(cc) + ["-std=c11", "-Wall", "-Werror", "-I", include, src, "-o", exe, lib,
                                          "-Wl,-rpath," + os.path.dirname(lib)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    errors.append(f"{rel}, C program {k + 1}: does not compile: {' '.join(cmd)}\n{r.stderr}")
                    continue
                r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
                if r.returncode != 0 or r.stdout != "L1 distance = 3\n":
                    errors.append(f"{rel}, C program {k + 1}: exit {r.returncode}, printed {r.stdout!r} "
                                  f"(expected 'L1 distance = 3'); stderr {r.stderr!r}")
    if n < 2:
        errors.append(f"found {n} C programs in README.md and capi/README.md; expected at least 2")
    return errors, f"{n} C programs"


def data_csv(text):
    m = re.search(r"\n(    id,t,v\n(?:    \S.*\n)+)", text)
    return None if m is None else "".join(line[4:] + "\n" for line in m.group(1).rstrip("\n").split("\n"))


def transcripts(text):
    """(command, expected lines) of every indented `$ mpcf ...` line."""
    out = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"    \$ (mpcf .*)$", line)
        if not m:
            continue
        expected = []
        for nxt in lines[i + 1 :]:
            if not nxt.startswith("    ") or nxt.startswith("    $ "):
                break
            expected.append(nxt[4:])
        out.append((m.group(1), expected))
    return out


def check_cli(root, mpcf):
    errors, n = [], 0
    for rel in ("README.md", "capi/cli/README.md"):
        text = read(root, rel)
        data = data_csv(text)
        found = transcripts(text)
        if data is None or not found:
            errors.append(f"{rel}: no data.csv block or no `$ mpcf` transcript found")
            continue
        with tempfile.TemporaryDirectory(prefix="mpcf-docs-cli-") as tmp:
            with open(os.path.join(tmp, "data.csv"), "w") as f:
                f.write(data)
            for command, expected in found:
                n += 1
                argv = shlex.split(command.split("  #")[0])
                r = subprocess.run([os.path.abspath(mpcf)] + argv[1:], capture_output=True, text=True, cwd=tmp, timeout=120)
                if r.returncode != 0:
                    errors.append(f"{rel}: `{command}` exited {r.returncode}: {r.stderr}")
                elif r.stdout.rstrip("\n").split("\n") != expected and (expected or r.stdout):
                    errors.append(f"{rel}: `{command}` printed\n{r.stdout}expected\n" + "\n".join(expected))
    return errors, f"{n} CLI transcripts"


def code_lines(text, lang):
    out = []
    for block in re.findall(r"```" + lang + r"\n(.*?)```", text, re.S):
        for line in block.split("\n"):
            code = re.split(r"\s+#", line)[0].rstrip()
            if code and not code.startswith("#"):
                out.append(code)
    return out


def check_copies(root):
    errors, n = [], 0
    readme = read(root, "README.md")
    for lang, manual in (("r", "bindings/r/README.md"), ("julia", "bindings/julia/Mpcf/README.md")):
        theirs = set(code_lines(read(root, manual), lang))
        mine = code_lines(readme, lang)
        if not mine:
            errors.append(f"README.md has no ```{lang} example")
        for line in mine:
            n += 1
            if line not in theirs:
                errors.append(f"README.md's {lang} line `{line}` is not in {manual}")
    return errors, f"{n} R and Julia lines"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["links", "c", "cli", "copies"])
    ap.add_argument("root")
    ap.add_argument("--cc")
    ap.add_argument("--include")
    ap.add_argument("--lib")
    ap.add_argument("--mpcf")
    args = ap.parse_args()
    if args.what == "links":
        errors, what = check_links(args.root)
    elif args.what == "c":
        errors, what = check_c(args.root, args.cc, args.include, args.lib)
    elif args.what == "cli":
        errors, what = check_cli(args.root, args.mpcf)
    else:
        errors, what = check_copies(args.root)
    for e in errors:
        print("FAIL:", e)
    print(f"{args.what}: {what} checked; {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
