"""The two Python distributions of the package mpcf stay one package
(ctest: packaging_wheel_projects).

bindings/python/pyproject.toml builds `mpcf` (CPU) and
packaging/wheels/mpcf-cuda/pyproject.toml builds `mpcf-cuda`: the same files
under the same import name, differing only in the name, the description,
the README and the CUDA settings. These tests fail when one is changed and
the other is not, and when the versions drift from the CMake project's. The
sdist's pyproject.toml is made from the CPU one (packaging/wheels/make_sdist.py).
"""

import copy
import os
import re
import sys
import unittest

try:
    import tomllib
except ImportError:  # Python < 3.11
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CPU = os.path.join(ROOT, "bindings", "python", "pyproject.toml")
CUDA_DIR = os.path.join(ROOT, "packaging", "wheels", "mpcf-cuda")
CUDA = os.path.join(CUDA_DIR, "pyproject.toml")
BUILD_SH = os.path.join(ROOT, "packaging", "wheels", "build.sh")


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


class WheelProjects(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cpu = load(CPU)
        cls.cuda = load(CUDA)

    def test_names(self):
        self.assertEqual(self.cpu["project"]["name"], "mpcf")
        self.assertEqual(self.cuda["project"]["name"], "mpcf-cuda")

    def test_same_version_as_the_cmake_project(self):
        with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
            cmake_version = re.search(r"project\(mpcf VERSION ([0-9.]+)", f.read()).group(1)
        self.assertEqual(self.cpu["project"]["version"], cmake_version)
        self.assertEqual(self.cuda["project"]["version"], cmake_version)

    def test_same_metadata_but_name_description_readme_classifiers(self):
        differ = {"name", "description", "readme", "classifiers"}
        cpu = {k: v for k, v in self.cpu["project"].items() if k not in differ}
        cuda = {k: v for k, v in self.cuda["project"].items() if k not in differ}
        self.assertEqual(cpu, cuda)
        self.assertEqual(self.cpu["project"]["dependencies"], ["numpy>=1.21"])
        self.assertTrue(set(self.cpu["project"]["classifiers"]) <= set(self.cuda["project"]["classifiers"]))
        self.assertTrue(os.path.isfile(os.path.join(CUDA_DIR, self.cuda["project"]["readme"])))

    def test_long_descriptions_have_no_relative_links(self):
        # The README of each distribution is its PyPI page, where a link
        # relative to the repository leads nowhere: name such files as text.
        for project, folder in ((self.cpu, os.path.dirname(CPU)), (self.cuda, CUDA_DIR)):
            path = os.path.join(folder, project["project"]["readme"])
            with open(path, encoding="utf-8") as f:
                prose = re.sub(r"```.*?```", "", f.read(), flags=re.S)
            targets = re.findall(r"\]\(([^)\s]+)", prose) + re.findall(r"""(?:src|href)=["']([^"']+)""", prose)
            relative = [t for t in targets if not re.match(r"(https?://|mailto:|#)", t)]
            self.assertEqual(relative, [], path)

    def test_same_build_system(self):
        self.assertEqual(self.cpu["build-system"], self.cuda["build-system"])

    def test_same_scikit_build_settings_but_paths_and_cuda(self):
        cpu = copy.deepcopy(self.cpu["tool"]["scikit-build"])
        cuda = copy.deepcopy(self.cuda["tool"]["scikit-build"])
        cpu_defines, cuda_defines = cpu.pop("cmake")["define"], cuda.pop("cmake")["define"]
        cpu_cmake = {k: v for k, v in self.cpu["tool"]["scikit-build"]["cmake"].items() if k != "define"}
        cuda_cmake = {k: v for k, v in self.cuda["tool"]["scikit-build"]["cmake"].items() if k != "define"}
        # Both point at the repository root and at the one source of the package.
        self.assertEqual(os.path.normpath(os.path.join(os.path.dirname(CPU), cpu_cmake.pop("source-dir"))), ROOT)
        self.assertEqual(os.path.normpath(os.path.join(CUDA_DIR, cuda_cmake.pop("source-dir"))), ROOT)
        self.assertEqual(cpu_cmake, cuda_cmake)
        cpu_packages = cpu.pop("wheel").pop("packages")
        cuda_packages = cuda.pop("wheel").pop("packages")
        self.assertEqual(cpu_packages, ["src/mpcf"])
        self.assertEqual(set(cuda_packages), {"mpcf"})
        self.assertEqual(os.path.realpath(os.path.join(CUDA_DIR, cuda_packages["mpcf"])),
                         os.path.realpath(os.path.join(os.path.dirname(CPU), "src", "mpcf")))
        self.assertEqual(cpu, cuda)
        self.assertNotIn("MPCF_WITH_CUDA", cpu_defines)  # CPU unless asked (and a GPU is present)
        self.assertEqual(cuda_defines.pop("MPCF_WITH_CUDA"), "ON")
        archs = cuda_defines.pop("CMAKE_CUDA_ARCHITECTURES")
        self.assertEqual(cpu_defines, cuda_defines)
        # SASS from Turing (sm_75) to Blackwell (sm_120), PTX of the newest.
        self.assertEqual(archs.split(";")[0], "75-real")
        self.assertEqual(archs.split(";")[-1], "120")

    def test_build_sh_default_architectures_are_the_projects(self):
        with open(BUILD_SH) as f:
            default = re.search(r"MPCF_WHEEL_CUDA_ARCHITECTURES:-([^}]+)\}", f.read()).group(1)
        self.assertEqual(default, self.cuda["tool"]["scikit-build"]["cmake"]["define"]["CMAKE_CUDA_ARCHITECTURES"])

    def test_the_sdist_pyproject_is_the_cpu_one_from_the_top(self):
        # packaging/wheels/make_sdist.py rewrites bindings/python/pyproject.toml
        # for the top of the sdist: every edit must still apply.
        sys.path.insert(0, os.path.join(ROOT, "packaging", "wheels"))
        try:
            import make_sdist
        finally:
            sys.path.pop(0)
        with open(CPU) as f:
            sdist = tomllib.loads(make_sdist.sdist_pyproject(f.read()))
        self.assertEqual(sdist["project"], dict(self.cpu["project"], readme="bindings/python/README.md"))
        self.assertEqual(sdist["build-system"]["requires"], self.cpu["build-system"]["requires"] + ["swig>=4.2"])
        build = sdist["tool"]["scikit-build"]
        self.assertEqual(build["cmake"]["source-dir"], ".")
        for package in build["wheel"]["packages"]:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, package, "__init__.py")), package)
        self.assertTrue(os.path.isfile(os.path.join(ROOT, sdist["project"]["readme"])))
        for path in make_sdist.PATHS:
            self.assertTrue(os.path.exists(os.path.join(ROOT, path)), path)


if __name__ == "__main__":
    if tomllib is None:
        print("SKIP: reading pyproject.toml needs Python >= 3.11 or tomli")
        sys.exit(77)
    unittest.main(verbosity=2)
