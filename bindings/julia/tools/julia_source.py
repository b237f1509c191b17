"""Lexical analysis of Julia source, just enough for the libmpcf binding checks.

Julia cannot be installed on the machines that build libmpcf, so the Julia
package is checked mechanically instead:

* ``tokenize`` splits Julia source into tokens, skipping comments (kept per
  line, for annotations) and the insides of strings, characters and commands;
* ``check_structure`` checks that brackets and ``... end`` blocks balance
  and that ``pointer(x)`` only appears inside ``GC.@preserve x ... begin
  ... end``;
* ``find_ccalls`` extracts every ``ccall(...)`` and ``@ccall ...`` with its
  argument types, return type and the values passed.

This is not a Julia parser. It understands the constructs Mpcf.jl uses and
reports anything it cannot follow as an error rather than guessing.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Optional, Tuple

# Keywords that open a block closed by `end`.
BLOCK_OPENERS = frozenset(
    ["function", "macro", "module", "baremodule", "struct", "begin", "let",
     "quote", "if", "for", "while", "try", "do"])
# `abstract type ... end` and `primitive type ... end` open a block at `type`.
TYPE_BLOCK_PREFIXES = frozenset(["abstract", "primitive"])
KEYWORDS = BLOCK_OPENERS | TYPE_BLOCK_PREFIXES | frozenset(
    ["end", "else", "elseif", "catch", "finally", "mutable", "return",
     "break", "continue", "const", "global", "local", "using", "import",
     "export"])
OPEN_BRACKETS = {"(": ")", "[": "]", "{": "}"}
CLOSE_BRACKETS = {v: k for k, v in OPEN_BRACKETS.items()}


class JuliaSourceError(Exception):
    """Source the lexer cannot follow (an unterminated string, ...)."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclasses.dataclass
class Token:
    kind: str  # ident keyword macro symbol number string char op open close
    text: str
    start: int  # offset in the source
    end: int
    line: int


@dataclasses.dataclass
class Lexed:
    source: str
    tokens: List[Token]
    comments: Dict[int, List[str]]  # line -> comment texts on that line

    def comments_between(self, first_line: int, last_line: int) -> List[str]:
        found: List[str] = []
        for line in range(first_line, last_line + 1):
            found.extend(self.comments.get(line, []))
        return found


def _is_ident_start(ch: str) -> bool:
    return ch == "_" or ch.isalpha()


def _is_ident_char(ch: str) -> bool:
    return ch == "_" or ch == "!" or ch.isalnum()


_NUMBER = re.compile(
    r"0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|"
    r"\d[\d_]*(?:\.\d[\d_]*)?(?:[eEf][+-]?\d+)?|\.\d[\d_]*(?:[eEf][+-]?\d+)?")


class _Lexer:
    def __init__(self, source: str):
        self.src = source
        self.pos = 0
        self.line = 1
        self.tokens: List[Token] = []
        self.comments: Dict[int, List[str]] = {}

    # -- helpers ----------------------------------------------------------
    def _peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < len(self.src) else ""

    def _advance(self, n: int = 1) -> None:
        chunk = self.src[self.pos:self.pos + n]
        self.line += chunk.count("\n")
        self.pos += n

    def _prev_is_operand(self) -> bool:
        """True when the previous token ends an expression and nothing
        separates it from the current position (for `'` and `:`)."""
        if not self.tokens:
            return False
        prev = self.tokens[-1]
        if prev.kind in ("ident", "number", "close", "string", "char", "symbol"):
            return True
        if prev.kind == "op" and prev.text == "'":
            return True
        return prev.kind == "keyword" and prev.text in ("end", "begin")

    def _emit(self, kind: str, start: int, line: int) -> Token:
        tok = Token(kind, self.src[start:self.pos], start, self.pos, line)
        self.tokens.append(tok)
        return tok

    # -- comments ---------------------------------------------------------
    def _line_comment(self) -> None:
        start, line = self.pos, self.line
        end = self.src.find("\n", self.pos)
        if end < 0:
            end = len(self.src)
        self.comments.setdefault(line, []).append(self.src[start + 1:end].strip())
        self._advance(end - self.pos)

    def _block_comment(self) -> None:
        line = self.line
        depth = 0
        while True:
            if self.pos >= len(self.src):
                raise JuliaSourceError(line, "unterminated #= block comment")
            if self.src.startswith("#=", self.pos):
                depth += 1
                self._advance(2)
            elif self.src.startswith("=#", self.pos):
                depth -= 1
                self._advance(2)
                if depth == 0:
                    return
            else:
                self._advance()

    # -- strings ----------------------------------------------------------
    def _interpolation(self, line: int) -> None:
        """Skips `$( ... )` inside a string, lexing the expression so that
        nested strings and parentheses are followed."""
        self._advance(2)  # "$("
        inner = _Lexer(self.src)
        inner.pos, inner.line = self.pos, self.line
        inner.run(stop_at_close_paren=True)
        self.pos, self.line = inner.pos, inner.line

    def _string(self, quote: str, interpolate: bool) -> None:
        start, line = self.pos, self.line
        triple = quote * 3 if quote == '"' and self.src.startswith('"""', self.pos) else None
        self._advance(3 if triple else 1)
        while True:
            if self.pos >= len(self.src):
                raise JuliaSourceError(line, "unterminated string")
            ch = self._peek()
            if ch == "\\":
                self._advance(2)
            elif interpolate and ch == "$" and self._peek(1) == "(":
                self._interpolation(line)
            elif triple and self.src.startswith(triple, self.pos):
                self._advance(3)
                break
            elif not triple and ch == quote:
                self._advance()
                break
            else:
                self._advance()
        self._emit("string", start, line)

    def _char(self) -> None:
        start, line = self.pos, self.line
        self._advance()  # opening '
        if self._peek() == "\\":
            self._advance(2)
            while self.pos < len(self.src) and self._peek() != "'" and self._peek() != "\n":
                self._advance()  # \u00e9, \x41, ...
        else:
            self._advance()
        if self._peek() != "'":
            raise JuliaSourceError(line, "unterminated character literal")
        self._advance()
        self._emit("char", start, line)

    # -- main loop --------------------------------------------------------
    def run(self, stop_at_close_paren: bool = False) -> None:
        depth = 0
        src = self.src
        while self.pos < len(src):
            ch = src[self.pos]
            start, line = self.pos, self.line
            if ch in " \t\r\n\f\\":
                self._advance()
            elif src.startswith("#=", self.pos):
                self._block_comment()
            elif ch == "#":
                self._line_comment()
            elif ch == '"':
                self._string('"', interpolate=True)
            elif ch == "`":
                self._string("`", interpolate=True)
            elif ch == "'":
                if self._prev_is_operand() and self.tokens[-1].end == self.pos:
                    self._advance()
                    self._emit("op", start, line)  # adjoint
                else:
                    self._char()
            elif _is_ident_start(ch):
                while self.pos < len(src) and _is_ident_char(src[self.pos]):
                    self._advance()
                word = src[start:self.pos]
                if self._peek() == '"':  # string macro: raw"...", r"..."
                    self._string('"', interpolate=False)
                    self.tokens[-1].start = start
                    self.tokens[-1].text = src[start:self.pos]
                elif word in KEYWORDS and not (
                        self.tokens and self.tokens[-1].text == "." and
                        self.tokens[-1].end == start):
                    self._emit("keyword", start, line)
                else:
                    self._emit("ident", start, line)
            elif ch == "@":
                self._advance()
                while self.pos < len(src) and (_is_ident_char(src[self.pos]) or src[self.pos] == "."):
                    if src[self.pos] == "." and not (self.pos + 1 < len(src) and _is_ident_start(src[self.pos + 1])):
                        break
                    self._advance()
                self._emit("macro", start, line)
            elif ch.isdigit() or (ch == "." and self._peek(1).isdigit() and not self._prev_is_operand()):
                m = _NUMBER.match(src, self.pos)
                self._advance(m.end() - self.pos)
                self._emit("number", start, line)
            elif ch == ":" and self._peek(1) == ":":
                self._advance(2)
                self._emit("op", start, line)
            elif ch == ":" and _is_ident_start(self._peek(1)) and not self._prev_is_operand():
                self._advance()
                while self.pos < len(src) and _is_ident_char(src[self.pos]):
                    self._advance()
                self._emit("symbol", start, line)
            elif ch in OPEN_BRACKETS:
                self._advance()
                self._emit("open", start, line)
                depth += 1
            elif ch in CLOSE_BRACKETS:
                if stop_at_close_paren and depth == 0 and ch == ")":
                    self._advance()
                    return
                self._advance()
                self._emit("close", start, line)
                depth -= 1
            else:
                self._advance()
                self._emit("op", start, line)
        if stop_at_close_paren:
            raise JuliaSourceError(self.line, "unterminated $( interpolation")


def tokenize(source: str) -> Lexed:
    lexer = _Lexer(source)
    lexer.run()
    return Lexed(source, lexer.tokens, lexer.comments)


# ---------------------------------------------------------------------------
# Block structure
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class _Frame:
    kind: str  # "block" or "bracket"
    text: str  # keyword or bracket character
    line: int
    generator: bool = False  # bracket holding a `for` clause
    preserved: Tuple[str, ...] = ()  # GC.@preserve names of this block


def _index_context(stack: List[_Frame]) -> bool:
    """True when `end`/`begin` would be an index inside `[...]`: some `[`
    encloses the position with no block in between."""
    for frame in reversed(stack):
        if frame.kind == "block":
            return False
        if frame.text == "[":
            return True
    return False


def check_structure(lexed: Lexed, check_pointers: bool = True) -> List[str]:
    """Returns a list of problems (empty when the file is well formed)."""
    problems: List[str] = []
    stack: List[_Frame] = []
    toks = lexed.tokens
    pending_preserve: Optional[Tuple[int, List[str]]] = None
    i = 0
    while i < len(toks):
        tok = toks[i]
        # GC.@preserve a b begin ... end: remember the names for the block.
        if pending_preserve is not None:
            line, names = pending_preserve
            if tok.kind == "ident":
                names.append(tok.text)
                i += 1
                continue
            if not (tok.kind == "keyword" and tok.text == "begin"):
                problems.append(
                    f"line {line}: GC.@preserve must be written as "
                    f"`GC.@preserve x y begin ... end` (found {tok.text!r} after the names)")
                pending_preserve = None
        if tok.kind == "macro" and tok.text in ("@preserve", "@GC.preserve"):
            pending_preserve = (tok.line, [])
            i += 1
            continue
        if tok.kind == "open":
            stack.append(_Frame("bracket", tok.text, tok.line))
        elif tok.kind == "close":
            want = CLOSE_BRACKETS[tok.text]
            if not stack:
                problems.append(f"line {tok.line}: {tok.text!r} closes nothing")
            elif stack[-1].kind == "block":
                top = stack[-1]
                problems.append(
                    f"line {tok.line}: {tok.text!r} closes a bracket while `{top.text}` "
                    f"from line {top.line} is still open (missing `end`?)")
                while stack and stack[-1].kind == "block":
                    stack.pop()
                if stack and stack[-1].text == want:
                    stack.pop()
            elif stack[-1].text != want:
                top = stack[-1]
                problems.append(
                    f"line {tok.line}: {tok.text!r} does not match {top.text!r} from line {top.line}")
                stack.pop()
            else:
                stack.pop()
        elif tok.kind == "keyword":
            word = tok.text
            top = stack[-1] if stack else None
            if word == "end":
                if top is not None and top.kind == "block":
                    stack.pop()
                elif _index_context(stack):
                    pass  # x[end]
                elif top is None:
                    problems.append(f"line {tok.line}: `end` closes nothing")
                else:
                    problems.append(
                        f"line {tok.line}: `end` inside {top.text!r} from line {top.line} "
                        "closes no block")
            elif word == "begin" and _index_context(stack):
                pass  # x[begin]
            elif word == "for" and top is not None and top.kind == "bracket":
                top.generator = True  # comprehension / generator clause
            elif word == "if" and top is not None and top.kind == "bracket" and top.generator:
                pass  # generator filter
            elif word in BLOCK_OPENERS:
                frame = _Frame("block", word, tok.line)
                if word == "begin" and pending_preserve is not None:
                    frame.preserved = tuple(pending_preserve[1])
                    pending_preserve = None
                stack.append(frame)
            elif word in TYPE_BLOCK_PREFIXES:
                nxt = toks[i + 1] if i + 1 < len(toks) else None
                if nxt is not None and nxt.kind == "ident" and nxt.text == "type":
                    stack.append(_Frame("block", f"{word} type", tok.line))
                    i += 1
            elif word == "elseif":
                if top is None or top.text != "if":
                    problems.append(f"line {tok.line}: `elseif` outside an `if` block")
            elif word == "else":
                if top is None or top.text not in ("if", "try"):
                    problems.append(f"line {tok.line}: `else` outside an `if` or `try` block")
            elif word in ("catch", "finally"):
                if top is None or top.text != "try":
                    problems.append(f"line {tok.line}: `{word}` outside a `try` block")
        elif check_pointers and tok.kind == "ident" and tok.text == "pointer":
            problems.extend(_check_pointer_call(toks, i, stack))
        i += 1
    for frame in reversed(stack):
        what = f"`{frame.text}`" if frame.kind == "block" else repr(frame.text)
        problems.append(f"line {frame.line}: {what} is never closed")
    return problems


def _check_pointer_call(toks: List[Token], i: int, stack: List[_Frame]) -> List[str]:
    """pointer(x) must sit inside a `GC.@preserve ... x ... begin` block."""
    tok = toks[i]
    if i > 0 and toks[i - 1].text == "." and toks[i - 1].end == tok.start:
        return []  # a field or qualified name such as Base.pointer is not a call here
    if i + 2 >= len(toks) or toks[i + 1].text != "(" or toks[i + 1].start != tok.end:
        return []  # `pointer` not called (e.g. passed as a function)
    arg = toks[i + 2]
    if arg.kind != "ident":
        return [f"line {tok.line}: pointer(...) must take a plain variable, preserved with "
                "GC.@preserve"]
    for frame in stack:
        if arg.text in frame.preserved:
            return []
    return [f"line {tok.line}: pointer({arg.text}) is not inside "
            f"`GC.@preserve {arg.text} begin ... end`; the array could be freed while C uses it"]


# ---------------------------------------------------------------------------
# ccall extraction
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class CCall:
    form: str  # "ccall" or "@ccall"
    line: int
    last_line: int
    function_expr: str  # text naming the C function (tuple, pointer expression, ...)
    return_type: str
    arg_types: List[str]
    values: List[str]
    checked: bool  # directly wrapped in one of the check macros/functions
    problems: List[str]  # shape problems found while extracting
    # Source offsets (start, end) of each argument type and of the return type.
    arg_type_spans: List[Tuple[int, int]] = dataclasses.field(default_factory=list)
    return_span: Tuple[int, int] = (0, 0)

    def c_name(self) -> Optional[str]:
        m = re.search(r"(?<![\w])mpcf_\w+", self.function_expr)
        return m.group(0) if m else None


def _matching(toks: List[Token], i: int) -> int:
    """Index of the bracket closing the one opened at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].kind == "open":
            depth += 1
        elif toks[j].kind == "close":
            depth -= 1
            if depth == 0:
                return j
    raise JuliaSourceError(toks[i].line, f"{toks[i].text!r} is never closed")


def _split_top(toks: List[Token], lo: int, hi: int, sep: str = ",") -> List[Tuple[int, int]]:
    """Splits toks[lo:hi] at depth-0 separators; returns (start, stop) pairs."""
    parts = []
    depth = 0
    begin = lo
    for j in range(lo, hi):
        t = toks[j]
        if t.kind == "open":
            depth += 1
        elif t.kind == "close":
            depth -= 1
        elif depth == 0 and t.kind == "op" and t.text == sep:
            parts.append((begin, j))
            begin = j + 1
    parts.append((begin, hi))
    return parts


def _text(lexed: Lexed, lo: int, hi: int) -> str:
    if lo >= hi:
        return ""
    return lexed.source[lexed.tokens[lo].start:lexed.tokens[hi - 1].end]


def _is_checked(toks: List[Token], i: int, check_names: Tuple[str, ...]) -> bool:
    """The call at toks[i] is `@check ccall(...)` or `_check(ccall(...))`."""
    if i >= 1 and toks[i - 1].kind == "macro" and toks[i - 1].text in check_names:
        return True
    return (i >= 2 and toks[i - 1].text == "(" and toks[i - 2].kind == "ident"
            and toks[i - 2].text in check_names and toks[i - 2].end == toks[i - 1].start)


def _span(lexed: Lexed, lo: int, hi: int) -> Tuple[int, int]:
    if lo >= hi:
        return (0, 0)
    return (lexed.tokens[lo].start, lexed.tokens[hi - 1].end)


def _parse_type_tuple(lexed: Lexed, lo: int, hi: int,
                      line: int) -> Tuple[List[str], List[str], List[Tuple[int, int]]]:
    toks = lexed.tokens
    problems: List[str] = []
    if lo >= hi or toks[lo].text != "(" or _matching(toks, lo) != hi - 1:
        return [], [f"line {line}: the argument types of a ccall must be a literal tuple, "
                    f"found {_text(lexed, lo, hi)!r}"], []
    parts = _split_top(toks, lo + 1, hi - 1)
    if len(parts) == 1 and parts[0][0] == parts[0][1]:
        return [], problems, []  # ()
    trailing = parts[-1][0] == parts[-1][1]
    if trailing:
        parts = parts[:-1]
    if len(parts) == 1 and not trailing:
        problems.append(
            f"line {line}: the argument type tuple {_text(lexed, lo, hi)} has one element but "
            "no trailing comma, so it is not a tuple; write (T,)")
    types = []
    for a, b in parts:
        if a == b:
            problems.append(f"line {line}: empty entry in the argument type tuple")
        types.append(_text(lexed, a, b))
    return types, problems, [_span(lexed, a, b) for a, b in parts]


def find_ccalls(lexed: Lexed, check_names: Tuple[str, ...] = ("@check", "_check")) -> List[CCall]:
    toks = lexed.tokens
    calls: List[CCall] = []
    for i, tok in enumerate(toks):
        if (tok.kind == "ident" and tok.text == "ccall" and i + 1 < len(toks)
                and toks[i + 1].text == "(" and toks[i + 1].start == tok.end
                and not (i > 0 and toks[i - 1].text == ".")):
            close = _matching(toks, i + 1)
            parts = _split_top(toks, i + 2, close)
            problems: List[str] = []
            if len(parts) < 3:
                problems.append(f"line {tok.line}: ccall needs (function, return type, "
                                "argument types, values...)")
                parts = parts + [(close, close)] * (3 - len(parts))
            types, tuple_problems, spans = _parse_type_tuple(lexed, parts[2][0], parts[2][1],
                                                             tok.line)
            problems.extend(tuple_problems)
            values = [_text(lexed, a, b) for a, b in parts[3:]]
            if parts[3:] and parts[-1][0] == parts[-1][1]:
                values = values[:-1]  # trailing comma
            calls.append(CCall("ccall", tok.line, toks[close].line, _text(lexed, *parts[0]),
                               _text(lexed, *parts[1]), types, values,
                               _is_checked(toks, i, check_names), problems,
                               spans, _span(lexed, *parts[1])))
        elif tok.kind == "macro" and tok.text == "@ccall":
            calls.append(_parse_at_ccall(lexed, i, check_names))
    return calls


def _parse_at_ccall(lexed: Lexed, i: int, check_names: Tuple[str, ...]) -> CCall:
    toks = lexed.tokens
    tok = toks[i]
    j = i + 1
    problems: List[str] = []
    # Callee: `$(expr)` or a dotted name `lib.func` / `func`.
    if j < len(toks) and toks[j].text == "$":
        if j + 1 >= len(toks) or toks[j + 1].text != "(":
            raise JuliaSourceError(tok.line, "@ccall $ must be followed by (expression)")
        callee_end = _matching(toks, j + 1) + 1
    else:
        callee_end = j
        while callee_end < len(toks) and (toks[callee_end].kind == "ident" or toks[callee_end].text == "."):
            callee_end += 1
    callee = _text(lexed, j, callee_end)
    if callee_end >= len(toks) or toks[callee_end].text != "(":
        raise JuliaSourceError(tok.line, "@ccall must be followed by func(args...)::ReturnType")
    close = _matching(toks, callee_end)
    types: List[str] = []
    values: List[str] = []
    spans: List[Tuple[int, int]] = []
    for a, b in _split_top(toks, callee_end + 1, close):
        if a == b:
            continue  # f() or a trailing comma
        if any(t.kind == "op" and t.text == ";" for t in toks[a:b]):
            problems.append(f"line {tok.line}: varargs in @ccall are not supported by the checker")
        split = _split_top(toks, a, b, sep="::")
        if len(split) < 2:
            problems.append(f"line {tok.line}: @ccall argument {_text(lexed, a, b)!r} has no ::Type")
            types.append("")
            values.append(_text(lexed, a, b))
            spans.append((0, 0))
        else:
            values.append(_text(lexed, split[0][0], split[-2][1]))
            types.append(_text(lexed, *split[-1]))
            spans.append(_span(lexed, *split[-1]))
    # Return type: `::` then Name or Name{...}.
    k = close + 1
    ret = ""
    ret_span = (0, 0)
    last = close
    if k < len(toks) and toks[k].text == "::":
        k += 1
        start = k
        while k < len(toks) and (toks[k].kind == "ident" or
                                 (toks[k].text == "." and k + 1 < len(toks) and toks[k + 1].kind == "ident")):
            k += 1
        if k < len(toks) and toks[k].text == "{":
            k = _matching(toks, k) + 1
        ret = _text(lexed, start, k)
        ret_span = _span(lexed, start, k)
        last = k - 1
    else:
        problems.append(f"line {tok.line}: @ccall without ::ReturnType")
    return CCall("@ccall", tok.line, toks[last].line, callee, ret, types, values,
                 _is_checked(toks, i, check_names), problems, spans, ret_span)


# ---------------------------------------------------------------------------
# Declarations the checks need
# ---------------------------------------------------------------------------

def declared_types(lexed: Lexed) -> Dict[str, str]:
    """Names of types declared in the file: struct/mutable struct/abstract
    type/primitive type -> "struct" ..., and `@enum Name::Base` -> "enum:Base"."""
    found: Dict[str, str] = {}
    toks = lexed.tokens
    for i, tok in enumerate(toks):
        if tok.kind == "keyword" and tok.text == "struct" and i + 1 < len(toks):
            found[toks[i + 1].text] = "struct"
        elif (tok.kind == "keyword" and tok.text in TYPE_BLOCK_PREFIXES and i + 2 < len(toks)
              and toks[i + 1].text == "type"):
            found[toks[i + 2].text] = "abstract"
        elif tok.kind == "macro" and tok.text == "@enum" and i + 1 < len(toks):
            name = toks[i + 1].text
            base = "Int32"
            if i + 3 < len(toks) and toks[i + 2].text == "::":
                base = toks[i + 3].text
            found[name] = "enum:" + base
    return found


def struct_fields(lexed: Lexed) -> Dict[str, Tuple[int, List[Tuple[str, str]]]]:
    """For each `struct NAME ... end` (mutable or not) with fields: its line
    and its `field::Type` declarations in order, as (field, type text).
    Inner constructors and other blocks of the body are skipped."""
    found: Dict[str, Tuple[int, List[Tuple[str, str]]]] = {}
    toks = lexed.tokens
    for i, tok in enumerate(toks):
        if not (tok.kind == "keyword" and tok.text == "struct" and i + 1 < len(toks)):
            continue
        fields: List[Tuple[str, str]] = []
        depth = 0  # blocks opened inside the body
        k = i + 2
        while k < len(toks):
            t = toks[k]
            if t.kind == "keyword" and t.text == "end":
                if depth == 0:
                    break
                depth -= 1
            elif t.kind == "keyword" and t.text in BLOCK_OPENERS:
                depth += 1
            elif t.kind == "open":
                k = _matching(toks, k)
            elif (depth == 0 and t.kind == "ident" and k + 2 < len(toks)
                  and toks[k + 1].text == "::" and toks[k + 2].kind == "ident"):
                start = k + 2
                e = start + 1
                if e < len(toks) and toks[e].text == "{":
                    e = _matching(toks, e) + 1
                fields.append((t.text, _text(lexed, start, e)))
                k = e
                continue
            k += 1
        if fields:
            found[toks[i + 1].text] = (tok.line, fields)
    return found


def const_tuple_symbols(lexed: Lexed, name: str) -> Optional[Tuple[int, List[str]]]:
    """For `const NAME = ( ... )`, the line and the :symbols inside the tuple
    (in order); None when the constant is absent."""
    toks = lexed.tokens
    for i, tok in enumerate(toks):
        if (tok.kind == "keyword" and tok.text == "const" and i + 3 < len(toks)
                and toks[i + 1].text == name and toks[i + 2].text == "="
                and toks[i + 3].text == "("):
            close = _matching(toks, i + 3)
            return tok.line, [t.text[1:] for t in toks[i + 4:close] if t.kind == "symbol"]
    return None


def const_assignments(lexed: Lexed) -> Dict[str, Tuple[int, str]]:
    """`const NAME = expr` anywhere in the code (not in strings or comments):
    name -> (line, source text of expr up to the end of its line)."""
    found: Dict[str, Tuple[int, str]] = {}
    toks = lexed.tokens
    for i, tok in enumerate(toks):
        if (tok.kind == "keyword" and tok.text == "const" and i + 3 < len(toks)
                and toks[i + 1].kind == "ident" and toks[i + 2].text == "="):
            begin = toks[i + 3].start
            end = lexed.source.find("\n", begin)
            text = lexed.source[begin:end if end >= 0 else len(lexed.source)]
            found[toks[i + 1].text] = (tok.line, text.split("#", 1)[0].strip())
    return found
