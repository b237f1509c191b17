"""Tests of the Julia lexer/structure lint and of run_julia_tests.sh.

Needs only the Python standard library.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.abspath(os.path.join(TOOLS, "..", "Mpcf"))
sys.path.insert(0, TOOLS)

import julia_source  # noqa: E402
import lint_julia  # noqa: E402


def lint(code: str):
    return lint_julia.lint_text(textwrap.dedent(code))


class WellFormedCodeTest(unittest.TestCase):
    def assert_clean(self, code):
        self.assertEqual(lint(code), [])

    def test_every_block_kind(self):
        self.assert_clean("""
            module M
            abstract type Shape end
            primitive type Bits8 8 end
            mutable struct Box <: Shape
                x::Int
            end
            macro twice(ex)
                return quote
                    $(esc(ex)); $(esc(ex))
                end
            end
            function f(x)
                let y = x
                    while y > 0
                        y -= 1
                    end
                end
                for i in 1:3
                    if i == 1
                        continue
                    elseif i == 2
                        break
                    else
                        nothing
                    end
                end
                try
                    error("x")
                catch err
                    rethrow()
                finally
                    nothing
                end
                open("f") do io
                    read(io)
                end
                return begin x end
            end
            end
            """)

    def test_index_end_and_begin(self):
        self.assert_clean("""
            a = x[end]; b = x[2:end]; c = x[begin]; d = x[min(end, 3)]
            e = m[end, 1]
            """)

    def test_comprehensions_and_generators_need_no_end(self):
        self.assert_clean("""
            a = [f(x) for x in xs if x > 0]
            b = sum(x^2 for x in xs)
            c = Float64[y for y in 1:3]
            d = Dict(k => v for (k, v) in pairs)
            """)

    def test_keywords_inside_strings_comments_and_symbols(self):
        self.assert_clean('''
            s = "function if end for $(f("end")) begin"
            t = """
                triple: function ( [ end
                """
            r = raw"end\\"" # function (
            #= block comment: function begin
               #= nested =# if
            =#
            sym = (:end, :function, :begin)
            c = ('(', '"', '\\'', ']')
            adjoint = x' * y'
            cmd = `ls $(dir) end`
            ''')

    def test_preserved_pointers(self):
        self.assert_clean("""
            function f(x, y)
                GC.@preserve x y begin
                    ccall(:g, Cvoid, (Ptr{Cvoid}, Ptr{Cvoid}), pointer(x), pointer(y))
                    run(1) do h
                        use(pointer(x))
                    end
                end
            end
            """)


class BrokenCodeTest(unittest.TestCase):
    def assert_problem(self, code, fragment):
        found = lint(code)
        self.assertTrue(any(fragment in p for p in found), found)

    def test_missing_end(self):
        self.assert_problem("""
            function f(x)
                if x
                    1
            end
            """, "`function` is never closed")

    def test_extra_end(self):
        self.assert_problem("""
            function f(x)
                x
            end
            end
            """, "`end` closes nothing")

    def test_missing_end_before_closing_bracket(self):
        self.assert_problem("f(function (x) x)", "is still open (missing `end`?)")

    def test_mismatched_brackets(self):
        self.assert_problem("a = [1, 2)", "')' does not match '['")

    def test_unclosed_bracket(self):
        self.assert_problem("a = f(1, 2", "'(' is never closed")

    def test_unterminated_string(self):
        self.assert_problem('s = "abc\n', "unterminated string")

    def test_unterminated_block_comment(self):
        self.assert_problem("#= x\n", "unterminated #= block comment")

    def test_else_outside_if(self):
        self.assert_problem("""
            while x
            else
            end
            """, "`else` outside an `if` or `try` block")

    def test_catch_outside_try(self):
        self.assert_problem("""
            begin
            catch
            end
            """, "`catch` outside a `try` block")

    def test_end_in_parentheses(self):
        self.assert_problem("f(end)", "closes no block")

    def test_pointer_without_preserve(self):
        self.assert_problem("ccall(:g, Cvoid, (Ptr{Cvoid},), pointer(x))",
                            "pointer(x) is not inside `GC.@preserve x begin ... end`")

    def test_pointer_of_another_array(self):
        self.assert_problem("""
            GC.@preserve x begin
                g(pointer(y))
            end
            """, "pointer(y) is not inside")

    def test_pointer_after_the_preserve_block(self):
        self.assert_problem("""
            GC.@preserve x begin
                g(x)
            end
            g(pointer(x))
            """, "pointer(x) is not inside")

    def test_preserve_without_block(self):
        self.assert_problem("GC.@preserve x g(pointer(x))", "GC.@preserve must be written as")


class CCallExtractionTest(unittest.TestCase):
    def test_ccall_parts(self):
        lexed = julia_source.tokenize(textwrap.dedent("""
            @check ccall(_sym(:mpcf_pdist_size), Cint,
                         (Ptr{mpcf_pcfs}, Cint, Ref{UInt64}),
                         X, code, out)
            ccall((:mpcf_task_cancel, lib), Cint, (Ptr{mpcf_task},), t,)  # unchecked: why
            x = @ccall $(_sym(:mpcf_version))()::Cint
            """))
        calls = julia_source.find_ccalls(lexed)
        self.assertEqual(len(calls), 3)
        first, second, third = calls
        self.assertEqual(first.c_name(), "mpcf_pdist_size")
        self.assertEqual(first.return_type, "Cint")
        self.assertEqual(first.arg_types, ["Ptr{mpcf_pcfs}", "Cint", "Ref{UInt64}"])
        self.assertEqual(first.values, ["X", "code", "out"])
        self.assertTrue(first.checked)
        self.assertEqual((first.line, first.last_line), (2, 4))
        self.assertEqual(second.c_name(), "mpcf_task_cancel")
        self.assertEqual(second.values, ["t"])
        self.assertFalse(second.checked)
        self.assertEqual(lexed.comments_between(second.line, second.last_line), ["unchecked: why"])
        self.assertEqual((third.form, third.c_name(), third.arg_types, third.return_type),
                         ("@ccall", "mpcf_version", [], "Cint"))

    def test_library_name_is_not_taken_for_the_function(self):
        lexed = julia_source.tokenize("ccall((:clock, libmpcf_path), Cint, ())")
        self.assertIsNone(julia_source.find_ccalls(lexed)[0].c_name())


class PackageFilesTest(unittest.TestCase):
    def test_package_source_and_tests_are_well_formed(self):
        for rel in ("src/Mpcf.jl", "test/runtests.jl"):
            with open(os.path.join(PACKAGE, rel), encoding="utf-8") as fh:
                with self.subTest(file=rel):
                    self.assertEqual(lint_julia.lint_text(fh.read()), [])


class RunnerScriptTest(unittest.TestCase):
    """run_julia_tests.sh: skips (77) without a usable julia, else runs
    test/runtests.jl of the package with MPCF_LIBRARY passed through."""

    script = os.path.join(TOOLS, "run_julia_tests.sh")

    def run_script(self, fake_julia=None, library="/x/libmpcf.so"):
        with tempfile.TemporaryDirectory() as bindir:
            if fake_julia is not None:
                path = os.path.join(bindir, "julia")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(fake_julia)
                os.chmod(path, 0o755)
            env = {"PATH": bindir + ":/usr/bin:/bin" if fake_julia else bindir}
            if library is not None:
                env["MPCF_LIBRARY"] = library
            return subprocess.run(["/bin/sh", self.script, PACKAGE], capture_output=True,
                                  text=True, env=env, check=False)

    def test_skips_without_julia(self):
        proc = self.run_script()
        self.assertEqual(proc.returncode, 77)
        self.assertIn("SKIP: no 'julia' executable on PATH", proc.stdout)

    def test_skips_with_too_old_julia(self):
        proc = self.run_script('#!/bin/sh\necho "julia version 1.5.3"\n')
        self.assertEqual(proc.returncode, 77)
        self.assertIn("not Julia >= 1.6", proc.stdout)

    def test_runs_runtests_with_the_library(self):
        fake = ('#!/bin/sh\n'
                'if [ "$1" = "--startup-file=no" ] && [ "$2" = "--version" ]; then\n'
                '  echo "julia version 1.10.4"; exit 0; fi\n'
                'echo "ARGS $*"; echo "LIB $MPCF_LIBRARY"; exit 3\n')
        proc = self.run_script(fake)
        self.assertEqual(proc.returncode, 3)  # julia's own exit status is passed on
        self.assertIn(f"--project={PACKAGE}", proc.stdout)
        self.assertIn(f"{PACKAGE}/test/runtests.jl", proc.stdout)
        self.assertIn("LIB /x/libmpcf.so", proc.stdout)

    def test_fails_without_library(self):
        proc = self.run_script('#!/bin/sh\necho "julia version 1.10.4"\n', library=None)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("MPCF_LIBRARY is not set", proc.stderr)


if __name__ == "__main__":
    unittest.main()
