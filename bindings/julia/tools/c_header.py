"""The public functions, enums and version of mpcf.h, read with pycparser.

The header includes <stddef.h> and <stdint.h>, whose system versions are full
of compiler extensions pycparser does not parse. As pycparser's documentation
suggests, the header is preprocessed against small stand-in headers that
declare only the standard typedefs (written here, below). `-undef` drops the
compiler's predefined macros, so MPCF_API expands to nothing.

Type names are kept as written in the header (uint64_t stays uint64_t, size_t
stays size_t) so that the checker can insist on the exact Julia counterpart.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from typing import Dict, List, Optional, Tuple

# Typedef names the stand-in headers provide; they are kept unresolved.
STANDARD_TYPEDEFS = {
    "int8_t": "signed char", "int16_t": "short", "int32_t": "int", "int64_t": "long long",
    "uint8_t": "unsigned char", "uint16_t": "unsigned short", "uint32_t": "unsigned int",
    "uint64_t": "unsigned long long", "intptr_t": "long", "uintptr_t": "unsigned long",
    "size_t": "unsigned long", "ptrdiff_t": "long",
}
_FAKE_HEADERS = {
    "stdint.h": [k for k in STANDARD_TYPEDEFS if k not in ("size_t", "ptrdiff_t")],
    "stddef.h": ["size_t", "ptrdiff_t"],
    "stdbool.h": [],
}


class HeaderError(Exception):
    """The header could not be preprocessed or parsed."""


class PreprocessorMissing(HeaderError):
    """No C preprocessor to run (the checker then skips)."""


@dataclasses.dataclass(frozen=True)
class CType:
    """kind: prim (int, double, char, void, ...), typedef (uint64_t, ...),
    enum, struct, ptr."""
    kind: str
    name: str = ""
    inner: Optional["CType"] = None
    const: bool = False

    def __str__(self) -> str:
        if self.kind == "ptr":
            return f"{self.inner}*"
        prefix = "const " if self.const else ""
        if self.kind == "struct" and self.name.startswith("struct "):
            return prefix + self.name
        return prefix + self.name


@dataclasses.dataclass
class Param:
    name: str
    ctype: CType


@dataclasses.dataclass
class Function:
    name: str
    ret: CType
    params: List[Param]
    line: int

    def signature(self) -> str:
        args = ", ".join(f"{p.ctype} {p.name}".strip() for p in self.params) or "void"
        return f"{self.ret} {self.name}({args})"


@dataclasses.dataclass
class Field:
    name: str
    ctype: CType
    count: int  # array length; 0 for a plain field


@dataclasses.dataclass
class Header:
    path: str
    functions: Dict[str, Function]
    enums: Dict[str, Dict[str, int]]  # typedef name -> enumerator -> value
    structs: List[str]  # opaque handle typedef names
    version: Optional[int]  # MPCF_VERSION computed from the MAJOR/MINOR/PATCH macros
    # typedef name -> fields in order, for the structs the header lays out
    # (mpcf_error_detail, mpcf_task_info, ...), not the opaque handles
    layouts: Dict[str, List[Field]] = dataclasses.field(default_factory=dict)

    def enumerators(self) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for values in self.enums.values():
            out.update(values)
        return out


def _write_fake_headers(directory: str) -> None:
    for name, typedefs in _FAKE_HEADERS.items():
        lines = [f"/* stand-in {name} for the libmpcf signature checker */"]
        lines += [f"typedef {STANDARD_TYPEDEFS[t]} {t};" for t in typedefs]
        if name == "stddef.h":
            lines.append("#define NULL ((void*)0)")
        if name == "stdbool.h":
            lines += ["#define bool _Bool", "#define true 1", "#define false 0"]
        with open(os.path.join(directory, name), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


def preprocess(header_path: str, cc: str) -> str:
    exe = shutil.which(cc.split()[0]) if cc else None
    if exe is None:
        raise PreprocessorMissing(
            f"no C compiler {cc!r} to preprocess {header_path} (set CC or pass --cc)")
    include_dir = os.path.dirname(os.path.dirname(os.path.abspath(header_path)))
    with tempfile.TemporaryDirectory(prefix="mpcf_fake_libc_") as fake:
        _write_fake_headers(fake)
        cmd = cc.split() + ["-E", "-x", "c", "-undef", "-nostdinc", "-I", fake,
                            "-I", include_dir, header_path]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise HeaderError(f"preprocessing {header_path} with {' '.join(cmd)} failed:\n"
                          f"{proc.stderr.strip()}")
    return proc.stdout


def _version_from_macros(text: str) -> Optional[int]:
    parts = {}
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^\s*#\s*define\s+MPCF_VERSION_{part}\s+(\d+)", text, re.M)
        if m is None:
            return None
        parts[part] = int(m.group(1))
    return parts["MAJOR"] * 10000 + parts["MINOR"] * 100 + parts["PATCH"]


def _const_int(node) -> int:
    from pycparser import c_ast  # noqa: PLC0415 (imported lazily, see load)
    if isinstance(node, c_ast.Constant):
        return int(node.value.rstrip("uUlL"), 0)
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        return -_const_int(node.expr)
    raise HeaderError(f"enumerator value {node!r} is not a plain integer")


def load(header_path: str, cc: str = "cc") -> Header:
    """Parses the header. Raises ImportError when pycparser is missing."""
    import pycparser  # noqa: PLC0415
    from pycparser import c_ast  # noqa: PLC0415

    with open(header_path, encoding="utf-8") as fh:
        raw = fh.read()
    text = preprocess(header_path, cc)
    try:
        ast = pycparser.CParser().parse(text, filename=header_path)
    except pycparser.c_parser.ParseError as err:
        raise HeaderError(f"pycparser could not parse {header_path}: {err}") from err

    enums: Dict[str, Dict[str, int]] = {}
    structs: List[str] = []
    kinds: Dict[str, str] = {}  # header typedef name -> enum/struct/prim

    def record_enum(name: str, enum) -> None:
        values: Dict[str, int] = {}
        nxt = 0
        for item in (enum.values.enumerators if enum.values else []):
            nxt = _const_int(item.value) if item.value is not None else nxt
            values[item.name] = nxt
            nxt += 1
        enums[name] = values

    def convert(node, const: bool = False) -> CType:
        if isinstance(node, c_ast.PtrDecl):
            return CType("ptr", inner=convert(node.type), const="const" in node.quals)
        if isinstance(node, c_ast.ArrayDecl):
            return CType("ptr", inner=convert(node.type))
        if isinstance(node, (c_ast.TypeDecl, c_ast.Typename)):
            return convert(node.type, const="const" in node.quals)
        if isinstance(node, c_ast.IdentifierType):
            name = " ".join(node.names)
            if name in STANDARD_TYPEDEFS:
                return CType("typedef", name, const=const)
            if name in kinds:
                return CType(kinds[name], name, const=const)
            return CType("prim", name, const=const)
        if isinstance(node, c_ast.Enum):
            return CType("enum", node.name or "", const=const)
        if isinstance(node, c_ast.Struct):
            return CType("struct", "struct " + (node.name or ""), const=const)
        raise HeaderError(f"unsupported C type node {type(node).__name__}")

    layouts: Dict[str, List[Field]] = {}

    def field(decl) -> Field:
        if isinstance(decl.type, c_ast.ArrayDecl):
            return Field(decl.name, convert(decl.type.type), _const_int(decl.type.dim))
        return Field(decl.name, convert(decl.type), 0)

    functions: Dict[str, Function] = {}
    for ext in ast.ext:
        file = ext.coord.file if ext.coord else ""
        if isinstance(ext, c_ast.Typedef):
            inner = ext.type.type if isinstance(ext.type, c_ast.TypeDecl) else None
            if isinstance(inner, c_ast.Enum):
                kinds[ext.name] = "enum"
                record_enum(ext.name, inner)
            elif isinstance(inner, c_ast.Struct):
                kinds[ext.name] = "struct"
                if os.path.abspath(file) == os.path.abspath(header_path):
                    structs.append(ext.name)
                    if inner.decls:
                        layouts[ext.name] = [field(d) for d in inner.decls]
            continue
        if isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            fdecl = ext.type
            params: List[Param] = []
            for p in (fdecl.args.params if fdecl.args else []):
                if isinstance(p, c_ast.EllipsisParam):
                    raise HeaderError(f"{ext.name}: variadic functions are not supported")
                ctype = convert(p.type)
                if ctype.kind == "prim" and ctype.name == "void" and not p.name:
                    continue  # f(void)
                params.append(Param(p.name or "", ctype))
            functions[ext.name] = Function(ext.name, convert(fdecl.type), params,
                                           ext.coord.line if ext.coord else 0)
    return Header(header_path, functions, enums, structs, _version_from_macros(raw), layouts)
