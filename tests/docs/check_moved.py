#!/usr/bin/env python3
"""Checks that the text of an old Markdown file survives in a set of new files.

    python3 tests/docs/check_moved.py OLD.md NEW.md [NEW.md ...]
    python3 tests/docs/check_moved.py --git REV:README.md README.md capi/README.md ...

The old file is cut into blocks: fenced code blocks, indented code blocks,
table rows and paragraphs. A code block or table row must appear in some new
file (whitespace-normalised); a paragraph is cut into sentences, and each
sentence of more than three words must appear in some new file
(whitespace-normalised, Markdown emphasis ignored). Prints what is missing,
sentence by sentence, and exits 1 if anything is. Headings are not checked
(files get new headings when text moves).

Written for the move of the top-level README's manual into the files beside
the code (the README of c9da539 against today's files).
"""

import argparse
import re
import subprocess
import sys


def norm(s: str) -> str:
    s = s.replace("**", "").replace("*", "")
    return re.sub(r"\s+", " ", s).strip()


def blocks(text: str):
    """(kind, text) for every fenced block, indented block, table row and paragraph."""
    lines = text.split("\n")
    i, out, para = 0, [], []

    def flush():
        if para:
            out.append(("para", "\n".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append(("code", "\n".join(lines[i + 1 : j])))
            i = j + 1
            continue
        if line.startswith("    ") and not para:
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            for code_line in lines[i:j]:
                if code_line.strip():
                    out.append(("codeline", code_line))
            i = j
            continue
        if line.startswith("|"):
            flush()
            if not re.fullmatch(r"\|[-| :]*\|", line.strip()):
                out.append(("row", line))
            i += 1
            continue
        if line.startswith("#"):
            flush()
            i += 1
            continue
        if not line.strip():
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    return out


def sentences(para: str):
    # A sentence ends at ". ", "; " or ": " followed by a capital or a code
    # span; list items are their own sentences.
    text = norm(para)
    parts = re.split(r"(?<=[.;:!?])\s+(?=[A-Z`(*\[])|\s(?=\* )", text)
    return [p.strip() for p in parts if len(p.split()) > 3]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the old file, or REV:PATH with --git")
    ap.add_argument("new", nargs="+")
    ap.add_argument("--git", action="store_true", help="read OLD with git show")
    args = ap.parse_args()
    if args.git:
        old = subprocess.run(["git", "show", args.old], capture_output=True, text=True, check=True).stdout
    else:
        old = open(args.old, encoding="utf-8").read()
    corpus = norm("\n".join(open(p, encoding="utf-8").read() for p in args.new))
    corpus_lines = {norm(line) for p in args.new for line in open(p, encoding="utf-8").read().split("\n")}
    missing, checked = [], 0
    for kind, text in blocks(old):
        if kind == "para":
            for s in sentences(text):
                checked += 1
                if s not in corpus:
                    missing.append(("sentence", s))
        elif kind == "code":
            for line in text.split("\n"):
                if line.strip():
                    checked += 1
                    if norm(line) not in corpus_lines and norm(line) not in corpus:
                        missing.append(("code line", line))
        else:
            checked += 1
            if norm(text) not in corpus_lines:
                missing.append((kind, text))
    for kind, text in missing:
        print(f"MISSING {kind}: {text}")
    print(f"{checked} sentences, code lines and table rows checked; {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
