"""Tests of check_signatures.py: it must pass the real Mpcf.jl and catch
deliberately broken wrappers (unknown function, wrong argument count, wrong
type mapping, missing function not marked unwrapped, ...).

Needs pycparser and a C compiler (run.py skips with exit 77 otherwise).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.abspath(os.path.join(TOOLS, "..", "..", ".."))
HEADER = os.path.join(ROOT, "capi", "include", "mpcf", "mpcf.h")
PACKAGE_SRC = os.path.join(TOOLS, "..", "Mpcf", "src", "Mpcf.jl")
CHECKER = os.path.join(TOOLS, "check_signatures.py")
CC = os.environ.get("CC", "cc")
sys.path.insert(0, TOOLS)

import c_header  # noqa: E402
import check_signatures  # noqa: E402
import julia_source  # noqa: E402

_HEADER = None


def header():
    global _HEADER
    if _HEADER is None:
        _HEADER = c_header.load(HEADER, CC)
    return _HEADER


def wrapper(body: str, unwrapped=None, preamble=None) -> str:
    """A minimal Julia wrapper around `body`. Unless given, UNWRAPPED lists
    every public function that `body` does not call."""
    called = set(re.findall(r"(?<![\w])mpcf_\w+", body)) & set(header().functions)
    if unwrapped is None:
        unwrapped = sorted(set(header().functions) - called)
    listed = ",\n    ".join(f":{n} => \"not needed in this test\"" for n in unwrapped)
    if preamble is None:
        preamble = (
            "const MPCF_HEADER_VERSION = 100\n"
            "mutable struct mpcf_pcfs end\n"
            "mutable struct mpcf_options end\n"
            "mutable struct mpcf_task end\n")
    return (f"module M\n{preamble}"
            f"const UNWRAPPED = (\n    {listed},\n)\n"
            f"{body}\nend\n")


def problems(text: str):
    return check_signatures.check(header(), "Test.jl", text).problems


class BaselineTest(unittest.TestCase):
    def test_header_is_read_completely(self):
        h = header()
        self.assertEqual(h.version, 100)  # 0.1.0 in mpcf.h
        # Every MPCF_API declaration, counted in the raw text (so the count
        # follows the header as functions are added).
        with open(HEADER, encoding="utf-8") as fh:
            declared = set(re.findall(r"\bMPCF_API\b[^;]*?\b(mpcf_\w+)\s*\(", fh.read()))
        self.assertGreaterEqual(len(declared), 42)
        self.assertEqual(set(h.functions), declared)
        self.assertEqual(h.enums["mpcf_status"]["MPCF_RUNNING"], 10)
        self.assertEqual(str(h.functions["mpcf_pcfs_create"].params[5].ctype), "mpcf_pcfs**")
        self.assertEqual(str(h.functions["mpcf_pcfs_reshape"].params[1].ctype), "size_t")

    def test_real_package_passes(self):
        with open(PACKAGE_SRC, encoding="utf-8") as fh:
            self.assertEqual(problems(fh.read()), [])

    def test_minimal_correct_wrapper_passes(self):
        body = """
f() = @check ccall(_sym(:mpcf_pcfs_reshape), Cint, (Ptr{mpcf_pcfs}, Csize_t, Ptr{UInt64}), p, n, s)
g() = @check ccall(_sym(:mpcf_pcfs_create), Cint,
    (Cint, UInt64, Ptr{UInt64}, Ptr{Cvoid}, Ptr{Cvoid}, Ref{Ptr{mpcf_pcfs}}), 2, n, o, t, v, out)
h() = unsafe_string(ccall(_sym(:mpcf_version_string), Cstring, ()))
"""
        self.assertEqual(problems(wrapper(body)), [])


class CatchesBrokenWrappersTest(unittest.TestCase):
    """Each wrapper differs from a correct one in one deliberate mistake."""

    def assert_caught(self, body, *fragments, **kwargs):
        found = problems(wrapper(body, **kwargs))
        self.assertTrue(found, "the broken wrapper was accepted")
        text = "\n".join(found)
        for fragment in fragments:
            self.assertIn(fragment, text)
        return found

    def test_unknown_function(self):
        self.assert_caught("f() = @check ccall(_sym(:mpcf_pdistt), Cint, (), )",
                           "mpcf_pdistt is not declared", "unknown function")

    def test_function_name_not_recognisable(self):
        self.assert_caught("f(fp) = ccall(fp, Cint, ())", "cannot tell which C function")

    def test_too_few_arguments(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_options_set_window), Cint, "
            "(Ptr{mpcf_options}, Cdouble), o, a)",
            "mpcf_options_set_window takes 3 argument(s) but the ccall declares 2")

    def test_too_many_arguments(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_task_cancel), Cint, (Ptr{mpcf_task}, Cint), t, 1)",
            "mpcf_task_cancel takes 1 argument(s) but the ccall declares 2")

    def test_values_differ_from_types(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_task_cancel), Cint, (Ptr{mpcf_task},), t, 1)",
            "1 argument type(s) but 2 value(s) passed")

    def test_uint64_for_size_t(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_pcfs_reshape), Cint, "
            "(Ptr{mpcf_pcfs}, UInt64, Ptr{UInt64}), p, n, s)",
            "mpcf_pcfs_reshape argument 2 (ndim: size_t): Julia type UInt64 does not match; "
            "expected Csize_t")

    def test_csize_t_for_uint64(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_options_set_block_hints), Cint, "
            "(Ptr{mpcf_options}, UInt64, Csize_t, UInt64), o, a, b, c)",
            "argument 3 (min_block_side: uint64_t): Julia type Csize_t does not match; "
            "expected UInt64")

    def test_int64_for_int(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_options_set_threads), Cint, "
            "(Ptr{mpcf_options}, Int64), o, 2)",
            "argument 2 (threads: int): Julia type Int64 does not match; expected Cint")

    def test_float32_for_double(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_options_set_memory_fraction), Cint, "
            "(Ptr{mpcf_options}, Cfloat), o, 0.5)",
            "argument 2 (fraction: double): Julia type Cfloat does not match; expected Cdouble")

    def test_unsigned_for_enum(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_options_set_backend), Cint, "
            "(Ptr{mpcf_options}, UInt32), o, 1)",
            "argument 2 (backend: mpcf_backend): Julia type UInt32 does not match; expected Cint")

    def test_wrong_handle_type(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_pcfs_count), Cint, (Ptr{mpcf_options}, Ref{UInt64}), x, n)",
            "argument 1 (pcfs: const mpcf_pcfs*): Julia type Ptr{mpcf_options} does not match; "
            "expected Ptr{mpcf_pcfs}")

    def test_untyped_pointer_for_handle(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_pcfs_destroy), Cvoid, (Ptr{Cvoid},), x)",
            "Julia type Ptr{Cvoid} does not match; expected Ptr{mpcf_pcfs}")

    def test_handle_out_pointer_missing_a_level(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_options_create), Cint, (Ref{mpcf_options},), out)",
            "argument 1 (out: mpcf_options**): Julia type Ref{mpcf_options} does not match; "
            "expected Ref{Ptr{mpcf_options}} or Ptr{Ptr{mpcf_options}}")

    def test_wrong_scalar_out_pointer(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_pcfs_ndim), Cint, (Ptr{mpcf_pcfs}, Ref{UInt64}), x, n)",
            "argument 2 (out: size_t*): Julia type Ref{UInt64} does not match; "
            "expected Ref{Csize_t} or Ptr{Csize_t}")

    def test_value_for_pointer(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_lp_distance), Cint, (Ptr{mpcf_pcfs}, UInt64, "
            "Ptr{mpcf_pcfs}, UInt64, Cdouble, Ptr{mpcf_options}, Cdouble), x, i, y, j, p, o, out)",
            "argument 7 (out: double*): Julia type Cdouble does not match")

    def test_ref_for_void_buffer(self):
        self.assert_caught(
            "f() = @check ccall(_sym(:mpcf_lp_norm), Cint, (Ptr{mpcf_pcfs}, Cdouble, Ref{Cvoid}, "
            "UInt64, Ptr{mpcf_options}), x, p, out, n, o)",
            "argument 3 (out: void*): Julia type Ref{Cvoid} does not match")

    def test_wrong_return_type_void_for_status(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_task_cancel), Cvoid, (Ptr{mpcf_task},), t)",
            "mpcf_task_cancel return type (mpcf_status): Julia type Cvoid does not match; "
            "expected Cint")

    def test_wrong_return_type_for_void(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_task_destroy), Cint, (Ptr{mpcf_task},), t)",
            "mpcf_task_destroy return type (void): Julia type Cint does not match")

    def test_wrong_return_type_for_string(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_build_info), Cint, ())",
            "mpcf_build_info return type (const char*): Julia type Cint does not match; "
            "expected Cstring, Ptr{UInt8} or Ptr{Cchar}")

    def test_ref_return_type(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_version_string), Ref{UInt8}, ())",
            "return type (const char*): Julia type Ref{UInt8} does not match")

    def test_handle_type_not_declared(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_task_destroy), Cvoid, (Ptr{mpcf_task},), t)",
            "the handle type mpcf_task is not declared",
            preamble="const MPCF_HEADER_VERSION = 100\n")

    def test_one_element_tuple_without_comma(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_task_destroy), Cvoid, (Ptr{mpcf_task}), t)",
            "has one element but no trailing comma")

    def test_types_not_a_literal_tuple(self):
        self.assert_caught(
            "const TYPES = (Ptr{mpcf_task},)\nf() = ccall(_sym(:mpcf_task_destroy), Cvoid, TYPES, t)",
            "must be a literal tuple")

    def test_unreadable_type(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_task_destroy), Cvoid, (Ptr{<:mpcf_task},), t)",
            "cannot read the Julia type")

    def test_unchecked_status(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_task_cancel), Cint, (Ptr{mpcf_task},), t)",
            "mpcf_task_cancel returns an mpcf_status that is neither checked")

    def test_missing_function_not_marked_unwrapped(self):
        body = "f() = ccall(_sym(:mpcf_task_destroy), Cvoid, (Ptr{mpcf_task},), t)"
        unwrapped = sorted(set(header().functions) - {"mpcf_task_destroy", "mpcf_lp_norm"})
        found = self.assert_caught(
            body, "mpcf_lp_norm is neither wrapped nor listed in UNWRAPPED", unwrapped=unwrapped)
        self.assertEqual(len(found), 1)

    def test_no_unwrapped_list_lists_everything_missing(self):
        found = problems("module M\nconst MPCF_HEADER_VERSION = 100\nend\n")
        missing = [p for p in found if "neither wrapped nor listed" in p]
        self.assertEqual(len(missing), len(header().functions))

    def test_unwrapped_names_an_unknown_function(self):
        names = sorted(header().functions) + ["mpcf_frobnicate"]
        self.assert_caught("", "UNWRAPPED lists mpcf_frobnicate, which mpcf.h does not declare",
                           unwrapped=names)

    def test_function_both_wrapped_and_unwrapped(self):
        self.assert_caught(
            "f() = ccall(_sym(:mpcf_task_destroy), Cvoid, (Ptr{mpcf_task},), t)",
            "mpcf_task_destroy is called but also listed in UNWRAPPED",
            unwrapped=sorted(header().functions))

    def test_symbol_table_misses_a_called_function(self):
        self.assert_caught(
            "const C_FUNCTIONS = (:mpcf_task_cancel,)\n"
            "f() = ccall(_sym(:mpcf_task_destroy), Cvoid, (Ptr{mpcf_task},), t)",
            "mpcf_task_destroy is called but missing from C_FUNCTIONS",
            "C_FUNCTIONS lists mpcf_task_cancel, which no ccall uses")

    def test_header_version_mismatch(self):
        self.assert_caught("", "MPCF_HEADER_VERSION is 200 but mpcf.h has MPCF_VERSION 100",
                           preamble="const MPCF_HEADER_VERSION = 200\n")

    def test_header_version_missing(self):
        self.assert_caught("", "no `const MPCF_HEADER_VERSION", preamble="")

    def test_enum_constant_value_mismatch(self):
        self.assert_caught("const MPCF_ERROR_CANCELLED = Cint(9)",
                           "MPCF_ERROR_CANCELLED = 9 but mpcf.h says 8")

    _TASK_INFO = (
        "struct mpcf_task_info\n    struct_size::UInt32\n    backend::Cint\n    reason::Cint\n"
        "    threads::Int32\n    merge_steps::Cdouble\n    seconds::Cdouble\n"
        "    device_count::Int32\n    devices::NTuple{64,Int32}\nend")

    def test_struct_layout_as_in_the_header_passes(self):
        self.assertEqual(problems(wrapper(self._TASK_INFO)), [])
        self.assertEqual(problems(wrapper("const N = 64\n" + self._TASK_INFO.replace("{64,", "{N,"))), [])

    def test_struct_fields_in_another_order(self):
        self.assert_caught(
            self._TASK_INFO.replace("    merge_steps::Cdouble\n    seconds::Cdouble\n",
                                    "    seconds::Cdouble\n    merge_steps::Cdouble\n"),
            "struct mpcf_task_info has the fields struct_size, backend, reason, threads, seconds")

    def test_struct_field_of_another_type(self):
        self.assert_caught(self._TASK_INFO.replace("threads::Int32", "threads::Int64"),
                           "field threads (int32_t): Julia type Int64 does not match")

    def test_struct_array_of_another_length(self):
        self.assert_caught(self._TASK_INFO.replace("{64,Int32}", "{32,Int32}"),
                           "field devices (int32_t[64]): Julia type NTuple{32,Int32} does not match")

    def test_enum_constant_unknown(self):
        self.assert_caught("const MPCF_ERROR_TIMEOUT = Cint(11)",
                           "MPCF_ERROR_TIMEOUT is not an enumerator of mpcf.h")

    def test_at_ccall_wrong_type(self):
        self.assert_caught(
            "f() = @check @ccall $(_sym(:mpcf_options_set_threads))(o::Ptr{mpcf_options}, n::Csize_t)::Cint",
            "mpcf_options_set_threads argument 2 (threads: int): Julia type Csize_t does not match")

    def test_at_ccall_wrong_count(self):
        self.assert_caught(
            "f() = @ccall libmpcf.mpcf_task_destroy(t::Ptr{mpcf_task}, u::Cint)::Cvoid",
            "mpcf_task_destroy takes 1 argument(s) but the @ccall declares 2")

    def test_unbalanced_blocks(self):
        self.assert_caught("function f()\n    if x\n        y\nend\n", "is never closed")

    def test_pointer_outside_preserve(self):
        self.assert_caught(
            "f(out) = @check ccall(_sym(:mpcf_lp_norm), Cint, (Ptr{mpcf_pcfs}, Cdouble, Ptr{Cvoid}, "
            "UInt64, Ptr{mpcf_options}), x, 1.0, pointer(out), n, o)",
            "pointer(out) is not inside `GC.@preserve out")


class AcceptsEquivalentSpellingsTest(unittest.TestCase):
    def assert_ok(self, body, preamble=None):
        self.assertEqual(problems(wrapper(body, preamble=preamble)), [])

    def test_platform_independent_aliases(self):
        self.assert_ok(
            "f() = @check ccall(_sym(:mpcf_options_set_threads), Cint, (Ptr{mpcf_options}, Int32), o, 1)\n"
            "g() = @check ccall(_sym(:mpcf_options_set_memory_fraction), Int32, "
            "(Base.Ptr{mpcf_options}, Float64), o, 0.5)")

    def test_typed_buffers_and_double_pointers(self):
        self.assert_ok(
            "f() = @check ccall(_sym(:mpcf_lp_norm), Cint, (Ptr{mpcf_pcfs}, Cdouble, Ptr{Float64}, "
            "UInt64, Ptr{mpcf_options}), x, 1.0, out, n, o)\n"
            "g(::Type{T}) where {T} = @check ccall(_sym(:mpcf_pcfs_create_interleaved), Cint, "
            "(Cint, UInt64, Ptr{UInt64}, Ptr{T}, Ptr{Ptr{mpcf_pcfs}}), 2, n, o, pts, out)")

    def test_string_returns(self):
        self.assert_ok(
            "f() = ccall(_sym(:mpcf_build_info), Ptr{UInt8}, ())\n"
            "g() = ccall(_sym(:mpcf_last_error_message), Ptr{Cchar}, ())")

    def test_cint_backed_julia_enum(self):
        preamble = ("const MPCF_HEADER_VERSION = 100\nmutable struct mpcf_options end\n"
                    "@enum Backend::Cint begin\n    AUTO = 0\n    CPU = 1\n    CUDA = 2\nend\n")
        self.assert_ok(
            "f() = @check ccall(_sym(:mpcf_options_set_backend), Cint, (Ptr{mpcf_options}, Backend), o, CPU)",
            preamble=preamble)

    def test_unchecked_with_reason(self):
        self.assert_ok(
            "f() = ccall(_sym(:mpcf_task_cancel), Cint, (Ptr{mpcf_task},), t)  # unchecked: best effort")

    def test_tuple_function_spec_and_at_ccall(self):
        self.assert_ok(
            "f() = _check(ccall((:mpcf_task_cancel, libmpcf), Cint, (Ptr{mpcf_task},), t))\n"
            "g() = @ccall libmpcf.mpcf_task_destroy(t::Ptr{mpcf_task})::Cvoid")

    def test_calls_in_comments_and_strings_are_ignored(self):
        self.assert_ok(
            '# ccall(_sym(:mpcf_nothing), Cvoid, ())\n'
            's = "ccall(_sym(:mpcf_nothing), Cvoid, ())"\n'
            '#= ccall((:mpcf_nothing, lib), Cvoid, ()) =#')


# Replacements that turn a correct Julia type into a wrong one.
_WRONG = [
    ("Ref{Ptr{mpcf_pcfs}}", "Ref{mpcf_pcfs}"), ("Ref{Ptr{mpcf_options}}", "Ref{mpcf_options}"),
    ("Ref{Ptr{mpcf_task}}", "Ref{Ptr{mpcf_pcfs}}"),
    ("Ptr{mpcf_pcfs}", "Ptr{mpcf_options}"), ("Ptr{mpcf_options}", "Ptr{mpcf_task}"),
    ("Ptr{mpcf_task}", "Ptr{mpcf_pcfs}"), ("Ptr{mpcf_task_info}", "Ptr{mpcf_task}"),
    ("Ref{UInt64}", "Ref{Csize_t}"), ("Ref{Cdouble}", "Ref{Cfloat}"), ("Ptr{Cdouble}", "Ptr{Cfloat}"),
    ("Ref{Cint}", "Ref{Int64}"),
    ("Ptr{UInt64}", "Ptr{Int64}"), ("Ptr{Cint}", "Ptr{Int64}"), ("Ptr{Cvoid}", "Ptr{UInt64}"),
    ("Ptr{Int64}", "Ptr{UInt64}"),
    ("Csize_t", "UInt64"), ("UInt64", "Csize_t"), ("Cint", "Int64"), ("Int64", "UInt64"),
    ("Cdouble", "Cfloat"),
    ("Cstring", "Cint"), ("Cvoid", "Cint"),
]


def _wrong(jtype: str) -> str:
    for good, bad in _WRONG:
        if jtype == good:
            return bad
    raise AssertionError(f"no wrong replacement for {jtype}")


class MutatedPackageTest(unittest.TestCase):
    """Every argument and return type of every ccall in the real Mpcf.jl,
    changed one at a time to a wrong type, is caught; so is every dropped
    argument."""

    @classmethod
    def setUpClass(cls):
        with open(PACKAGE_SRC, encoding="utf-8") as fh:
            cls.source = fh.read()
        cls.calls = julia_source.find_ccalls(julia_source.tokenize(cls.source))

    def test_the_package_has_the_expected_calls(self):
        self.assertGreaterEqual(len(self.calls), 30)

    def test_every_wrong_type_is_caught(self):
        mutants = 0
        for call in self.calls:
            spans = list(call.arg_type_spans) + [call.return_span]
            for (start, end) in spans:
                original = self.source[start:end]
                text = self.source[:start] + _wrong(original) + self.source[end:]
                with self.subTest(line=call.line, function=call.c_name(), type=original):
                    found = problems(text)
                    self.assertTrue(any(call.c_name() in p and "does not match" in p
                                        for p in found), found)
                mutants += 1
        self.assertGreater(mutants, 100)

    def test_every_dropped_argument_is_caught(self):
        for call in self.calls:
            if not call.arg_type_spans:
                continue
            start, end = call.arg_type_spans[-1]
            # Remove the last type and the comma (or space) before it.
            cut = self.source.rfind(",", 0, start)
            text = self.source[:cut] + self.source[end:]
            with self.subTest(line=call.line, function=call.c_name()):
                found = problems(text)
                self.assertTrue(any(call.c_name() in p and "argument" in p for p in found), found)

    def test_every_unwrapped_entry_is_needed(self):
        lexed = julia_source.tokenize(self.source)
        _, names = julia_source.const_tuple_symbols(lexed, "UNWRAPPED")
        for name in names:
            text = self.source.replace(f":{name} =>", ":mpcf_placeholder_unknown =>", 1)
            with self.subTest(function=name):
                found = problems(text)
                self.assertTrue(any(f"{name} is neither wrapped nor listed" in p for p in found))


class CommandLineTest(unittest.TestCase):
    def run_checker(self, *args, python_prefix=()):
        cmd = [sys.executable, *python_prefix, CHECKER, "--header", HEADER, *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    def test_real_package_exit_0(self):
        proc = self.run_checker("--julia", PACKAGE_SRC, "--cc", CC)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("OK:", proc.stdout)

    def test_broken_package_exit_1(self):
        with open(PACKAGE_SRC, encoding="utf-8") as fh:
            text = fh.read().replace("(Ptr{mpcf_options}, Csize_t, Ptr{Cint})",
                                     "(Ptr{mpcf_options}, UInt64, Ptr{Cint})", 1)
        with tempfile.NamedTemporaryFile("w", suffix=".jl", delete=False) as fh:
            fh.write(text)
        try:
            proc = self.run_checker("--julia", fh.name, "--cc", CC)
        finally:
            os.unlink(fh.name)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("mpcf_options_set_devices argument 2 (count: size_t)", proc.stdout)

    def test_missing_julia_file_exit_2(self):
        proc = self.run_checker("--julia", "/nonexistent/Mpcf.jl", "--cc", CC)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("cannot read", proc.stderr)

    def test_without_pycparser_skips_with_77(self):
        # Run the checker with `import pycparser` made to fail.
        code = ("import sys, runpy; sys.modules['pycparser'] = None; "
                f"sys.argv = [{CHECKER!r}, '--header', {HEADER!r}, '--julia', {PACKAGE_SRC!r}]; "
                f"runpy.run_path({CHECKER!r}, run_name='__main__')")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=False)
        self.assertEqual(proc.returncode, 77, proc.stdout + proc.stderr)
        self.assertIn("SKIP", proc.stdout)
        self.assertIn("pycparser", proc.stdout)

    def test_without_c_preprocessor_skips_with_77(self):
        proc = self.run_checker("--julia", PACKAGE_SRC, "--cc", "no-such-compiler-for-mpcf")
        self.assertEqual(proc.returncode, 77)
        self.assertIn("SKIP", proc.stdout)


if __name__ == "__main__":
    unittest.main()
