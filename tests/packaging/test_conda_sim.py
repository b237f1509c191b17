#!/usr/bin/env python3
"""Tests of conda_sim.py: the simulated conda-build must reject what the real
one (or a user of the packages) would trip over. Each case breaks a copy of
the recipe, or runs a small made-up recipe, and checks the failure is caught.
Expected values are written out by hand.

Run: python3 test_conda_sim.py   (exits 77 without jinja2 / PyYAML)
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RECIPE = os.path.join(REPO, "packaging", "conda")
sys.path.insert(0, HERE)

import conda_sim  # noqa: E402


class PinAndSelectorTest(unittest.TestCase):
    def test_pin_expression_like_conda_build(self):
        self.assertEqual(conda_sim.pin_expression("0.1.0", max_pin="x"), ">=0.1.0,<1.0a0")
        self.assertEqual(conda_sim.pin_expression("2.4.6", max_pin="x.x"), ">=2.4.6,<2.5.0a0")
        self.assertEqual(conda_sim.pin_expression("1.3.1", max_pin="x.x.x"), ">=1.3.1,<1.3.2.0a0")

    def test_selectors_keep_and_drop_lines(self):
        text = "a: 1  # [linux]\nb: 2  # [win]\nc: 3  # [cuda_compiler_version != \"None\"]\nd: 4\n"
        ns = conda_sim.selector_namespace({"cuda_compiler_version": "None"})
        self.assertEqual(conda_sim.apply_selectors(text, ns), "a: 1\nd: 4\n")
        ns = conda_sim.selector_namespace({"cuda_compiler_version": "12.9"})
        self.assertEqual(conda_sim.apply_selectors(text, ns), "a: 1\nc: 3\nd: 4\n")

    def test_selector_with_unknown_name_is_an_error(self):
        with self.assertRaisesRegex(conda_sim.CheckFailed, "no_such_name"):
            conda_sim.apply_selectors("x: 1  # [no_such_name]\n", conda_sim.selector_namespace({}))

    def test_binary_replace_pads_with_nul(self):
        data = b"\x7fELF\0/long/build/prefix/lib\0tail"
        out = conda_sim.binary_replace(data, b"/long/build/prefix", b"/short")
        self.assertEqual(out, b"\x7fELF\0/short/lib\0" + b"\0" * 12 + b"tail")
        with self.assertRaises(conda_sim.CheckFailed):
            conda_sim.binary_replace(data, b"/long/build/prefix", b"/a/much/longer/test/prefix")


class VariantTest(unittest.TestCase):
    def test_zip_keys_pair_instead_of_crossing(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "conda_build_config.yaml"), "w") as fh:
                fh.write(textwrap.dedent("""\
                    cuda_compiler: [None, cuda-nvcc]
                    cuda_compiler_version: [None, "12.9"]
                    python: ["3.10", "3.11", "3.12"]
                    r_base: ["4.4"]  # [linux]
                    r_base: ["9.9"]  # [win]
                    zip_keys:
                      - [cuda_compiler, cuda_compiler_version]
                    """))
            variants = conda_sim.load_variants(d)
        self.assertEqual(len(variants), 6)  # 2 CUDA settings x 3 pythons
        pairs = {(v["cuda_compiler"], v["cuda_compiler_version"]) for v in variants}
        self.assertEqual(pairs, {("None", "None"), ("cuda-nvcc", "12.9")})
        self.assertEqual({v["r_base"] for v in variants}, {"4.4"})


class ElfTest(unittest.TestCase):
    def test_soname_of_a_small_library(self):
        cc = shutil.which("cc")
        if not cc:
            self.skipTest("no C compiler")
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "x.c")
            with open(src, "w") as fh:
                fh.write("int x(void) { return 1; }\n")
            lib = os.path.join(d, "libx.so.3.2.1")
            subprocess.run([cc, "-shared", "-fPIC", "-Wl,-soname,libx.so.3", src, "-o", lib], check=True)
            self.assertEqual(conda_sim.elf_soname(lib), "libx.so.3")
            nosoname = os.path.join(d, "liby.so")
            subprocess.run([cc, "-shared", "-fPIC", src, "-o", nosoname], check=True)
            self.assertIsNone(conda_sim.elf_soname(nosoname))


class BrokenRecipeTest(unittest.TestCase):
    """Each case edits one thing in a copy of packaging/conda; the structure
    check must name the problem. The unedited copy must pass."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.recipe = os.path.join(self.tmp, "conda")
        shutil.copytree(RECIPE, self.recipe)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, old, new, count=1, path="meta.yaml"):
        p = os.path.join(self.recipe, path)
        with open(p) as fh:
            text = fh.read()
        self.assertGreaterEqual(text.count(old), count, f"{old!r} not in {path}")
        with open(p, "w") as fh:
            fh.write(text.replace(old, new))

    def problems(self):
        return "\n".join(conda_sim.check_structure(self.recipe, REPO))

    def test_unedited_recipe_passes(self):
        self.assertEqual(self.problems(), "")

    def test_missing_run_exports(self):
        self.edit('        - {{ pin_subpackage("libmpcf", max_pin="x") }}\n', "        []\n")
        self.assertIn("libmpcf run_exports are []", self.problems())

    def test_run_exports_narrower_than_the_soname(self):
        self.edit('pin_subpackage("libmpcf", max_pin="x")', 'pin_subpackage("libmpcf", max_pin="x.x")')
        self.assertIn("libmpcf >=0.1.0,<0.2.0a0", self.problems())

    def test_cuda_build_not_preferred(self):
        self.edit("{% set build_number = number + 100 %}", "{% set build_number = number %}")
        self.assertIn("the CUDA build number 0 is not above the CPU build number 0", self.problems())

    def test_python_package_not_pinned_to_the_exact_library_build(self):
        self.edit('{{ pin_subpackage("libmpcf", exact=True) }}', '{{ pin_subpackage("libmpcf") }}', count=4)
        self.assertRegex(self.problems(), r"mpcf: host requirements lack the exact pin 'libmpcf 0\.1\.0 cpu_h[0-9a-f]{7}_0'")

    def test_header_not_checked(self):
        self.edit("        - test -f $PREFIX/include/mpcf/mpcf_export.h\n", "")
        self.assertIn("the tests never check include/mpcf/mpcf_export.h", self.problems())

    def test_pkgconfig_not_checked(self):
        self.edit("        - test -f $PREFIX/lib/pkgconfig/mpcf.pc\n", "")
        self.edit("test \"$(pkg-config --variable=pcfiledir mpcf)\" = \"$PREFIX/lib/pkgconfig\"", "true")
        self.assertIn("the tests never check lib/pkgconfig/mpcf.pc", self.problems())

    def test_python_version_missing_from_build_string(self):
        self.edit("{{ variant }}_py{{ CONDA_PY }}h{{ PKG_HASH }}", "{{ variant }}_h{{ PKG_HASH }}")
        problems = self.problems()
        self.assertIn("does not name the Python version", problems)
        self.assertIn("two variants render different packages with the same build string", problems)

    def test_variant_missing_from_build_string(self):
        self.edit("string: {{ variant }}_h{{ PKG_HASH }}", "string: h{{ PKG_HASH }}")
        self.assertIn("does not start with 'cpu_'", self.problems())

    def test_version_differs_from_cmake(self):
        self.edit('{% set version = "0.1.0" %}', '{% set version = "0.2.0" %}')
        self.assertIn("package version 0.2.0 differs from the CMake project's 0.1.0", self.problems())

    def test_missing_build_script(self):
        os.remove(os.path.join(self.recipe, "build_r_mpcf.sh"))
        self.assertIn("r-mpcf: its build script 'build_r_mpcf.sh' is not a file of the recipe", self.problems())

    def test_missing_test_file(self):
        os.remove(os.path.join(self.recipe, "checks", "test_mpcf_python.py"))
        self.assertIn("test file 'checks/test_mpcf_python.py' does not exist", self.problems())

    def test_cuda_requirement_leaks_into_cpu_build(self):
        self.edit('        - __cuda >={{ cuda_major }}  # [cuda_compiler_version != "None"]\n',
                  "        - __cuda >={{ cuda_major }}\n")
        self.assertIn("the CPU variant has CUDA requirements", self.problems())

    def test_cuda_variant_without_driver_requirement(self):
        self.edit('        - __cuda >={{ cuda_major }}  # [cuda_compiler_version != "None"]\n', "")
        self.assertIn("the CUDA variant does not need __cuda at run time", self.problems())

    def test_no_cuda_variant(self):
        self.edit('  - cuda-nvcc\n', '', path="conda_build_config.yaml")
        self.edit('  - "12.9"\n', '', path="conda_build_config.yaml")
        self.assertIn("conda_build_config.yaml has no CUDA variant", self.problems())

    def test_r_package_never_loaded(self):
        self.edit("""        - $R --vanilla -e "library('mpcf')"\n""", "")
        self.edit("Rscript --vanilla checks/test_r_mpcf.R", "Rscript --vanilla -e 1 #")
        self.assertIn("r-mpcf: the tests never load the package", self.problems())

    def test_undefined_jinja_variable(self):
        self.edit("{{ variant }}_r{{ r_base", "{{ no_such_variable }}_r{{ r_base")
        self.assertIn("no_such_variable", self.problems())


FAKE_META = """\
{% set version = "0.1.0" %}
package:
  name: fake-split
  version: {{ version }}
build:
  number: 0
outputs:
  - name: libmpcf
    script: build_lib.sh
    build:
      string: cpu_h{{ PKG_HASH }}_0
    requirements:
      build:
        - make
    test:
      commands:
        - test "$(cat $PREFIX/share/where.txt)" = "$PREFIX"
        - test -f $PREFIX/share/data.txt
  - name: mpcf
    script: build_py.sh
    build:
      string: cpu_h{{ PKG_HASH }}_0
    requirements:
      host:
        - {{ pin_subpackage("libmpcf", exact=True) }}
        - EXTRA_HOST
      run:
        - {{ pin_subpackage("libmpcf", exact=True) }}
    test:
      commands:
        - test -f $PREFIX/share/data.txt
        - test -f $PREFIX/share/py.txt
"""


class FakeRecipeBuildTest(unittest.TestCase):
    """The build and test machinery on a made-up two-output recipe whose
    scripts only write text files."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.recipe = os.path.join(self.tmp, "recipe")
        self.source = os.path.join(self.tmp, "source")
        self.work = os.path.join(self.tmp, "work")
        os.makedirs(self.recipe)
        os.makedirs(self.source)
        with open(os.path.join(self.source, "data.txt"), "w") as fh:
            fh.write("data\n")
        with open(os.path.join(self.recipe, "conda_build_config.yaml"), "w") as fh:
            fh.write("cuda_compiler_version: [None]\npython: ['%d.%d']\n" % sys.version_info[:2])
        self.write_meta()
        self.script("build_lib.sh", 'mkdir -p "$PREFIX/share"\nprintf %s "$PREFIX" > "$PREFIX/share/where.txt"\n'
                                    'cp "$SRC_DIR/data.txt" "$PREFIX/share/"\n')
        self.script("build_py.sh", 'echo py > "$PREFIX/share/py.txt"\n')

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write_meta(self, extra_host="make", test_extra=""):
        meta = FAKE_META.replace("EXTRA_HOST", extra_host)
        meta = meta.replace("        - test -f $PREFIX/share/py.txt\n",
                            "        - test -f $PREFIX/share/py.txt\n" + test_extra)
        with open(os.path.join(self.recipe, "meta.yaml"), "w") as fh:
            fh.write(meta)

    def script(self, name, body):
        with open(os.path.join(self.recipe, name), "w") as fh:
            fh.write("set -eu\n" + body)

    def run_stage(self, stage):
        return conda_sim.main(["--recipe", self.recipe, "--source", self.source, "--work", self.work,
                               "--stage", stage, "--jobs", "1"])

    def test_good_recipe_builds_and_tests_with_relocation(self):
        self.assertEqual(self.run_stage("libmpcf"), 0)
        pkg = conda_sim.Package(os.path.join(self.work, "pkgs", "libmpcf"))
        self.assertEqual(pkg.files, ["share/data.txt", "share/where.txt"])
        self.assertEqual(pkg.manifest["has_prefix"], {"share/where.txt": "text"})
        self.assertTrue(re.fullmatch(r"cpu_h[0-9a-f]{7}_0", pkg.manifest["build"]))
        self.assertEqual(self.run_stage("mpcf"), 0)

    def test_failing_build_script_fails(self):
        self.script("build_lib.sh", "exit 3\n")
        self.assertEqual(self.run_stage("libmpcf"), 1)

    def test_missing_file_in_tests_fails(self):
        self.script("build_lib.sh", 'mkdir -p "$PREFIX/share"\nprintf %s "$PREFIX" > "$PREFIX/share/where.txt"\n')
        self.assertEqual(self.run_stage("libmpcf"), 1)

    def test_failing_test_command_fails(self):
        self.write_meta(test_extra="        - false\n")
        self.assertEqual(self.run_stage("libmpcf"), 0)
        self.assertEqual(self.run_stage("mpcf"), 1)

    def test_overwriting_a_host_package_file_fails(self):
        self.assertEqual(self.run_stage("libmpcf"), 0)
        self.script("build_py.sh", 'echo py > "$PREFIX/share/py.txt"\necho clobbered > "$PREFIX/share/data.txt"\n')
        self.assertEqual(self.run_stage("mpcf"), 1)

    def test_absolute_link_into_the_prefix_fails(self):
        self.script("build_lib.sh", 'mkdir -p "$PREFIX/share"\nprintf %s "$PREFIX" > "$PREFIX/share/where.txt"\n'
                                    'cp "$SRC_DIR/data.txt" "$PREFIX/share/"\n'
                                    'ln -s "$PREFIX/share/data.txt" "$PREFIX/share/link.txt"\n')
        self.assertEqual(self.run_stage("libmpcf"), 1)

    def test_unknown_requirement_skips(self):
        self.assertEqual(self.run_stage("libmpcf"), 0)
        self.write_meta(extra_host="no-such-package-anywhere")
        self.assertEqual(self.run_stage("mpcf"), conda_sim.SKIP)

    def test_dependent_output_without_its_library_skips(self):
        self.assertEqual(self.run_stage("mpcf"), conda_sim.SKIP)


if __name__ == "__main__":
    if conda_sim._IMPORT_ERROR:
        print(f"SKIP: jinja2 and PyYAML are needed ({conda_sim._IMPORT_ERROR}); pip install jinja2 pyyaml")
        sys.exit(conda_sim.SKIP)
    unittest.main(verbosity=2)
