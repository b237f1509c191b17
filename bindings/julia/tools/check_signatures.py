#!/usr/bin/env python3
"""Checks the ccall signatures of the Julia package Mpcf against mpcf.h.

Usage: check_signatures.py --header capi/include/mpcf/mpcf.h \\
                           --julia bindings/julia/Mpcf/src/Mpcf.jl [--cc cc]

It reads every `ccall(...)` and `@ccall ...` in the Julia file and fails
(exit 1) on:

* a call to a function that mpcf.h does not declare (or whose name it cannot
  tell);
* an argument count that differs from the header, or from the values passed;
* an argument or return type whose Julia spelling does not match the C type:
  uint64_t -> UInt64, size_t -> Csize_t, int -> Cint, double -> Cdouble,
  enums -> Cint (or a Julia `@enum X::Cint`), const char* -> Cstring /
  Ptr{UInt8} / Ptr{Cchar}, void* -> Ptr{Cvoid} (or Ptr{Float32}, Ptr{Float64},
  Ptr{T} for typed buffers), handle* -> Ptr{handle} with `handle` declared in
  the Julia file, T** -> Ref{Ptr{T}} / Ptr{Ptr{T}}, scalar out-pointers ->
  Ref{X} / Ptr{X}, void -> Cvoid;
* a status-returning call that is not wrapped in `@check` / `_check(...)`
  and carries no `# unchecked: <why>` comment;
* a public mpcf_* function that is neither called nor listed in
  `const UNWRAPPED = (...)` (and a listed one that is called, or unknown);
* `const C_FUNCTIONS = (...)`, when present (the symbols the package resolves
  at load time), differing from the set of functions called;
* `const MPCF_HEADER_VERSION` differing from the header's MPCF_VERSION, and
  any `const MPCF_X = Cint(v)` whose name or value differs from the header's
  enumerators;
* a Julia `struct X` with fields, X a struct the header lays out (such as
  mpcf_task_info), whose fields differ from the header's in name, order or
  type (an array `T a[N]` is `NTuple{N,T}`);
* unbalanced blocks/brackets, or pointer(x) outside GC.@preserve x.

Exit status: 0 all good, 1 mismatches (listed), 2 the inputs could not be
read, 77 a prerequisite (pycparser, a C preprocessor) is missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from typing import Dict, List, Optional, Set

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import julia_source  # noqa: E402

SKIP = 77

# Julia aliases that are the same type on every platform, by canonical name.
_ALIASES = {
    "Cint": "Int32", "Cuint": "UInt32", "Cshort": "Int16", "Cushort": "UInt16",
    "Clonglong": "Int64", "Culonglong": "UInt64", "Cuchar": "UInt8",
    "Cdouble": "Float64", "Cfloat": "Float32", "Cvoid": "Nothing",
}
# C scalar spelling -> accepted canonical Julia types (first: the one to write).
_SCALARS = {
    "int": ["Int32"], "signed int": ["Int32"], "unsigned int": ["UInt32"], "unsigned": ["UInt32"],
    "short": ["Int16"], "unsigned short": ["UInt16"],
    "long": ["Clong"], "unsigned long": ["Culong"],
    "long long": ["Int64"], "unsigned long long": ["UInt64"],
    "double": ["Float64"], "float": ["Float32"],
    "char": ["Cchar"], "signed char": ["Int8"], "unsigned char": ["UInt8"], "_Bool": ["Bool"],
    "int8_t": ["Int8"], "int16_t": ["Int16"], "int32_t": ["Int32"], "int64_t": ["Int64"],
    "uint8_t": ["UInt8"], "uint16_t": ["UInt16"], "uint32_t": ["UInt32"], "uint64_t": ["UInt64"],
    "intptr_t": ["Int"], "uintptr_t": ["UInt"],
    "size_t": ["Csize_t"], "ptrdiff_t": ["Cptrdiff_t"],
}
# Preferred spelling of a canonical type in messages.
_PREFERRED = {"Int32": "Cint", "Float64": "Cdouble", "Float32": "Cfloat", "Nothing": "Cvoid",
              "UInt32": "Cuint"}
# Element types accepted for a typed void* buffer.
_VOID_POINTEES = {"Nothing", "Float32", "Float64", "UInt8"}
_CHAR_POINTEES = {"UInt8", "Int8", "Cchar"}


@dataclasses.dataclass
class JType:
    name: str
    params: List["JType"]

    def __str__(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}{{{', '.join(str(p) for p in self.params)}}}"


def parse_julia_type(text: str) -> Optional[JType]:
    """Parses `Name` / `Mod.Name{A, B{C}}` into a canonical JType (aliases such
    as Cint resolved to Int32, module prefixes dropped); None if unparseable."""
    tokens = re.findall(r"[A-Za-z_][\w.!]*|[{},]|\S", text)
    pos = 0

    def parse() -> Optional[JType]:
        nonlocal pos
        if pos >= len(tokens) or not re.match(r"[A-Za-z_]", tokens[pos]):
            return None
        name = tokens[pos].split(".")[-1]
        pos += 1
        params: List[JType] = []
        if pos < len(tokens) and tokens[pos] == "{":
            pos += 1
            while True:
                p = parse()
                if p is None:
                    return None
                params.append(p)
                if pos < len(tokens) and tokens[pos] == ",":
                    pos += 1
                    continue
                if pos < len(tokens) and tokens[pos] == "}":
                    pos += 1
                    break
                return None
        return JType(_ALIASES.get(name, name), params)

    result = parse()
    return result if result is not None and pos == len(tokens) else None


class TypeRules:
    """Which Julia types stand for a C type, given the Julia file's own
    declarations (handle structs, Cint-backed enums)."""

    def __init__(self, declared: Dict[str, str]):
        self.structs = {n for n, k in declared.items() if k in ("struct", "abstract")}
        self.cint_enums = {n for n, k in declared.items() if k in ("enum:Cint", "enum:Int32")}

    def _scalar_set(self, ctype) -> Set[str]:
        if ctype.kind == "enum":
            return {"Int32"} | self.cint_enums
        if ctype.kind == "prim" and ctype.name == "void":
            return {"Nothing"}
        return set(_SCALARS.get(ctype.name, []))

    def accepts(self, ctype, jtype: JType, where: str) -> bool:
        """where: "arg", "ret" or "pointee" (inside another pointer)."""
        if ctype.kind == "ptr":
            inner = ctype.inner
            if jtype.name == "Cstring" and not jtype.params:
                return inner.kind == "prim" and inner.name == "char"
            if jtype.name not in ("Ptr", "Ref") or len(jtype.params) != 1:
                return False
            if jtype.name == "Ref" and where != "arg":
                return False
            return self._accepts_pointee(inner, jtype.params[0], jtype.name)
        if ctype.kind == "struct":
            return False  # by-value structs are not part of the libmpcf ABI
        if ctype.kind == "prim" and ctype.name == "void" and where != "ret":
            return False
        return not jtype.params and jtype.name in self._scalar_set(ctype)

    def _accepts_pointee(self, inner, jp: JType, outer: str) -> bool:
        if inner.kind == "prim" and inner.name == "void":
            if outer != "Ptr" or jp.params:
                return False
            return jp.name in _VOID_POINTEES or re.fullmatch(r"[A-Z]", jp.name) is not None
        if inner.kind == "prim" and inner.name == "char":
            return not jp.params and jp.name in _CHAR_POINTEES
        if inner.kind == "struct":
            return outer == "Ptr" and not jp.params and jp.name == inner.name
        if inner.kind == "ptr":
            return self.accepts(inner, jp, "pointee")
        return not jp.params and jp.name in self._scalar_set(inner)

    def describe(self, ctype, where: str) -> str:
        """How to write the C type in Julia, for messages."""
        if ctype.kind == "ptr":
            inner = ctype.inner
            if inner.kind == "prim" and inner.name == "char":
                return "Cstring, Ptr{UInt8} or Ptr{Cchar}"
            if inner.kind == "prim" and inner.name == "void":
                return "Ptr{Cvoid} (or Ptr{Float32}/Ptr{Float64}/Ptr{T} for a typed buffer)"
            if inner.kind == "struct":
                return f"Ptr{{{inner.name}}} (with `mutable struct {inner.name} end` declared)"
            pointee = self.describe(inner, "pointee").split(" ")[0]
            if where == "arg":
                return f"Ref{{{pointee}}} or Ptr{{{pointee}}}"
            return f"Ptr{{{pointee}}}"
        if ctype.kind == "enum":
            return "Cint (or an `@enum X::Cint` type)"
        canon = sorted(self._scalar_set(ctype))
        return " or ".join(_PREFERRED.get(c, c) for c in canon) or "(no Julia mapping)"


@dataclasses.dataclass
class Report:
    problems: List[str] = dataclasses.field(default_factory=list)
    notes: List[str] = dataclasses.field(default_factory=list)

    def add(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")


def check(header, julia_path: str, julia_text: str) -> Report:
    report = Report()
    rel = os.path.basename(julia_path)
    try:
        lexed = julia_source.tokenize(julia_text)
    except julia_source.JuliaSourceError as err:
        report.add(f"{rel}:{err.line}", err.message)
        return report
    for problem in julia_source.check_structure(lexed):
        report.add(rel, problem)

    declared = julia_source.declared_types(lexed)
    rules = TypeRules(declared)
    calls = julia_source.find_ccalls(lexed)
    called: Dict[str, int] = {}

    for call in calls:
        where = f"{rel}:{call.line}"
        for problem in call.problems:
            report.add(rel, problem)
        name = call.c_name()
        if name is None:
            report.add(where, f"cannot tell which C function this {call.form} calls "
                              f"({call.function_expr!r}); name it as :mpcf_<name>")
            continue
        fn = header.functions.get(name)
        if fn is None:
            report.add(where, f"{name} is not declared in {os.path.basename(header.path)} "
                              "(unknown function)")
            continue
        called.setdefault(name, call.line)
        sig = f"(C: {fn.signature()})"
        if len(call.arg_types) != len(fn.params):
            report.add(where, f"{name} takes {len(fn.params)} argument(s) but the {call.form} "
                              f"declares {len(call.arg_types)} {sig}")
        if call.form == "ccall" and len(call.values) != len(call.arg_types):
            report.add(where, f"{name}: {len(call.arg_types)} argument type(s) but "
                              f"{len(call.values)} value(s) passed")
        for k, (param, jtext) in enumerate(zip(fn.params, call.arg_types), start=1):
            _check_type(report, rules, declared, where,
                        f"{name} argument {k} ({param.name}: {param.ctype})",
                        param.ctype, jtext, "arg")
        _check_type(report, rules, declared, where, f"{name} return type ({fn.ret})",
                    fn.ret, call.return_type, "ret")
        if (fn.ret.kind == "enum" and fn.ret.name == "mpcf_status" and not call.checked
                and not any(c.startswith("unchecked:")
                            for c in lexed.comments_between(call.line, call.last_line))):
            report.add(where, f"{name} returns an mpcf_status that is neither checked "
                              "(@check / _check) nor annotated `# unchecked: <why>`")

    _check_coverage(report, rel, header, lexed, called)
    _check_constants(report, rel, header, lexed)
    _check_layouts(report, rel, header, lexed, rules)
    return report


def _check_type(report: Report, rules: TypeRules, declared: Dict[str, str], where: str,
                what: str, ctype, jtext: str, position: str) -> None:
    jtype = parse_julia_type(jtext)
    if jtype is None:
        report.add(where, f"{what}: cannot read the Julia type {jtext!r}")
        return
    if rules.accepts(ctype, jtype, position):
        handle = _innermost(ctype)
        if handle.kind == "struct" and handle.name not in rules.structs:
            report.add(where, f"{what}: the handle type {handle.name} is not declared in the "
                              f"Julia file (add `mutable struct {handle.name} end`)")
        return
    report.add(where, f"{what}: Julia type {jtext} does not match; "
                      f"expected {rules.describe(ctype, position)}")


def _innermost(ctype):
    while ctype.kind == "ptr":
        ctype = ctype.inner
    return ctype


def _check_coverage(report: Report, rel: str, header, lexed, called: Dict[str, int]) -> None:
    public = {n for n in header.functions if n.startswith("mpcf_")}
    unwrapped_decl = julia_source.const_tuple_symbols(lexed, "UNWRAPPED")
    unwrapped: Set[str] = set()
    if unwrapped_decl is not None:
        line, names = unwrapped_decl
        unwrapped = set(names)
        for n in names:
            if n not in header.functions:
                report.add(f"{rel}:{line}", f"UNWRAPPED lists {n}, which mpcf.h does not declare")
            elif n in called:
                report.add(f"{rel}:{called[n]}",
                           f"{n} is called but also listed in UNWRAPPED; remove it from the list")
    for n in sorted(public - set(called) - unwrapped):
        report.add(rel, f"{n} is neither wrapped nor listed in UNWRAPPED "
                        "(add a ccall or list it with the reason it is left out)")

    table = julia_source.const_tuple_symbols(lexed, "C_FUNCTIONS")
    if table is not None:
        line, names = table
        for n in sorted(set(names) - set(called)):
            report.add(f"{rel}:{line}", f"C_FUNCTIONS lists {n}, which no ccall uses")
        for n in sorted(set(called) - set(names)):
            report.add(f"{rel}:{called[n]}", f"{n} is called but missing from C_FUNCTIONS, "
                                             "so it would not be resolved at load time")


def _check_layouts(report: Report, rel: str, header, lexed, rules: TypeRules) -> None:
    """A Julia `struct X` with fields, X a struct mpcf.h lays out (such as
    mpcf_task_info), has its fields: the same names in the same order, each
    of the Julia type of the C field (an array T a[N] as NTuple{N,T}, N a
    literal or a `const`), so that the library writes into it what the
    package reads."""
    consts = julia_source.const_assignments(lexed)
    for name, (line, fields) in sorted(julia_source.struct_fields(lexed).items()):
        layout = header.layouts.get(name)
        if layout is None:
            continue
        where = f"{rel}:{line}"
        want = [f.name for f in layout]
        got = [f for f, _ in fields]
        if got != want:
            report.add(where, f"struct {name} has the fields {', '.join(got)} but mpcf.h has "
                              f"{', '.join(want)} (in this order)")
            continue
        for f, (_, jtext) in zip(layout, fields):
            what = f"struct {name} field {f.name} ({f.ctype}{f'[{f.count}]' if f.count else ''})"
            if f.count:
                m = re.fullmatch(r"NTuple\{\s*([^,{}]+?)\s*,\s*(.+?)\s*\}", jtext)
                n_text = m.group(1) if m else ""
                n_text = consts.get(n_text, (0, n_text))[1]
                if m is None or not re.fullmatch(r"\d+", n_text) or int(n_text) != f.count:
                    report.add(where, f"{what}: Julia type {jtext} does not match; expected "
                                      f"NTuple{{{f.count},{rules.describe(f.ctype, 'arg').split(' ')[0]}}}")
                    continue
                jtext = m.group(2)
            jtype = parse_julia_type(jtext)
            if jtype is None or not rules.accepts(f.ctype, jtype, "pointee"):
                report.add(where, f"{what}: Julia type {jtext} does not match; expected "
                                  f"{rules.describe(f.ctype, 'pointee')}")


def _check_constants(report: Report, rel: str, header, lexed) -> None:
    consts = julia_source.const_assignments(lexed)
    if "MPCF_HEADER_VERSION" not in consts:
        report.add(rel, "no `const MPCF_HEADER_VERSION = <MPCF_VERSION of mpcf.h>`; the "
                        "package needs it to check the library version at load time")
    else:
        line, text = consts["MPCF_HEADER_VERSION"]
        if header.version is None:
            report.add(rel, "mpcf.h does not define MPCF_VERSION_MAJOR/MINOR/PATCH")
        elif not re.fullmatch(r"\d+", text) or int(text) != header.version:
            report.add(f"{rel}:{line}", f"MPCF_HEADER_VERSION is {text} but mpcf.h has "
                                        f"MPCF_VERSION {header.version}")
    enumerators = header.enumerators()
    for name, (line, text) in sorted(consts.items()):
        m = re.fullmatch(r"(?:Cint|Int32)\(\s*(-?\d+)\s*\)", text)
        if not name.startswith("MPCF_") or m is None:
            continue
        if name not in enumerators:
            report.add(f"{rel}:{line}", f"{name} is not an enumerator of mpcf.h")
        elif int(m.group(1)) != enumerators[name]:
            report.add(f"{rel}:{line}", f"{name} = {m.group(1)} but mpcf.h says "
                                        f"{enumerators[name]}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--header", required=True, help="path to mpcf/mpcf.h")
    parser.add_argument("--julia", required=True, help="path to Mpcf.jl")
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"),
                        help="C compiler used as preprocessor (default: $CC or cc)")
    args = parser.parse_args(argv)

    try:
        import pycparser  # noqa: F401,PLC0415
    except ImportError:
        print("SKIP: the Python module pycparser is not installed "
              "(pip install pycparser); the Julia signature check needs it to read mpcf.h")
        return SKIP
    import c_header  # noqa: PLC0415

    try:
        header = c_header.load(args.header, args.cc)
    except c_header.PreprocessorMissing as err:
        print(f"SKIP: {err}")
        return SKIP
    except (OSError, c_header.HeaderError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        with open(args.julia, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as err:
        print(f"error: cannot read {args.julia}: {err}", file=sys.stderr)
        return 2

    report = check(header, args.julia, text)
    if report.problems:
        print(f"{len(report.problems)} problem(s) in {args.julia} against {args.header}:")
        for p in report.problems:
            print(f"  {p}")
        return 1
    n_calls = len(julia_source.find_ccalls(julia_source.tokenize(text)))
    unwrapped = julia_source.const_tuple_symbols(julia_source.tokenize(text), "UNWRAPPED")
    print(f"OK: {n_calls} ccall(s) in {os.path.basename(args.julia)} match "
          f"{os.path.basename(args.header)}; {len(header.functions)} public functions, "
          f"{len(unwrapped[1]) if unwrapped else 0} deliberately unwrapped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
