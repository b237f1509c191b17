#!/usr/bin/env python3
"""conda-build, simulated: renders the libmpcf recipe (packaging/conda) and
builds and tests its outputs without conda.

conda-build cannot be installed on our CI machines, so this script does what
it would do, as far as a machine without conda allows:

  render   renders meta.yaml for every variant of conda_build_config.yaml
           (Jinja2 with conda-build's context functions, then the "# [expr]"
           line selectors, then YAML) and checks the recipe's structure:
           outputs, scripts, build strings and numbers of the CPU and CUDA
           variants, the ABI pin, the exact pins between outputs and what the
           test sections check.
  libmpcf, mpcf, r-mpcf
           builds that output of the CPU variant (cuda_compiler_version=None)
           the way conda-build does: the source copied to a work directory,
           a long placeholder PREFIX holding the host requirements (sibling
           outputs, a Python environment), the output's script run with
           conda-build's variables (PREFIX, SRC_DIR, RECIPE_DIR, PYTHON, R,
           CPU_COUNT, CMAKE_ARGS, PKG_*, the variant variables), and the new
           files in PREFIX taken as the package. The package is then installed,
           relocated as conda relocates (text and NUL-padded binary prefix
           replacement), into a fresh test prefix with its run requirements,
           and the output's declared tests (imports, commands, files) run
           there. mpcf and r-mpcf use the libmpcf package of the libmpcf stage.
  real     runs the real conda-build when it is on PATH (skips otherwise).

Requirements the machine must provide (compilers, cmake, swig, R, Rcpp,
NumPy, scikit-build-core, ...) are probed first; when one is missing the stage
is skipped (exit 77) with a message naming it. A stage fails (exit 1) when a
script or a test command fails, when a check does not hold, or when a build
touches files of another package.

Usage: conda_sim.py --recipe DIR --source REPO --work DIR --stage STAGE
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Any, Dict, Iterable, List, Optional, Tuple

SKIP = 77
TARGET_PLATFORM = "linux-64"

try:
    import jinja2
    import yaml
except ImportError as exc:  # pragma: no cover - depends on the machine
    jinja2 = None
    yaml = None
    _IMPORT_ERROR: Optional[str] = str(exc)
else:
    _IMPORT_ERROR = None


class CheckFailed(Exception):
    """A check of the recipe, a build or a test did not hold."""


class Skip(Exception):
    """Something the stage needs is not on this machine."""


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# Rendering: Jinja2, selectors, YAML
# ---------------------------------------------------------------------------

_SELECTOR = re.compile(r"^(?P<body>.*?)\s*#\s*\[(?P<expr>[^\[\]]+)\]\s*$")


def selector_namespace(variant: Dict[str, str]) -> Dict[str, Any]:
    """The names conda-build's selectors and templates see on linux-64."""
    ns: Dict[str, Any] = {
        "linux": True, "linux64": True, "unix": True, "x86_64": True, "x86": False,
        "osx": False, "win": False, "aarch64": False, "arm64": False, "ppc64le": False,
        "target_platform": TARGET_PLATFORM, "build_platform": TARGET_PLATFORM,
    }
    if "python" in variant:
        major, minor = variant["python"].split(".")[:2]
        ns["py"] = int(major + minor)
        ns["py3k"] = major == "3"
    ns.update(variant)
    return ns


def apply_selectors(text: str, ns: Dict[str, Any]) -> str:
    """Drops the lines whose trailing "# [expr]" is false (conda-build applies
    selectors to the Jinja output, line by line)."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = _SELECTOR.match(line)
        if m:
            try:
                keep = eval(m.group("expr"), {"__builtins__": {}}, dict(ns))  # noqa: S307
            except Exception as exc:
                raise CheckFailed(f"selector [{m.group('expr')}] on rendered line {number} "
                                  f"cannot be evaluated: {exc}") from exc
            if not keep:
                continue
            line = m.group("body")
        out.append(line)
    return "\n".join(out) + "\n"


def _increment(component: Any) -> str:
    if isinstance(component, int):
        return f"{component + 1}.0a0"
    return chr(ord(str(component)[0]) + 1)


def pin_expression(version: str, min_pin: str = "x.x.x.x.x.x.x", max_pin: str = "x") -> str:
    """conda-build's apply_pin_expressions for plain dotted versions:
    ("0.1.0", max_pin="x") -> ">=0.1.0,<1.0a0"."""
    parts: List[Any] = [int(p) if p.isdigit() else p for p in version.split(".")]
    lower = ".".join(str(p) for p in parts[: len(min_pin.split("."))])
    n = min(len(max_pin.split(".")), len(parts))
    upper_parts = [str(p) for p in parts[: n - 1]] + [_increment(parts[n - 1])]
    upper = ".".join(upper_parts)
    if not upper.endswith("a0"):
        upper += "a0"
    return f">={lower},<{upper}"


def load_variants(recipe_dir: str) -> List[Dict[str, str]]:
    """Every variant of conda_build_config.yaml: the cross product of its
    keys, with the keys of each zip_keys group paired, not crossed."""
    path = os.path.join(recipe_dir, "conda_build_config.yaml")
    with open(path) as fh:
        text = apply_selectors(fh.read(), selector_namespace({}))
    config = yaml.safe_load(text) or {}
    zip_groups = config.pop("zip_keys", []) or []
    if zip_groups and not isinstance(zip_groups[0], list):
        zip_groups = [zip_groups]
    for key, values in config.items():
        if not isinstance(values, list) or not values:
            raise CheckFailed(f"conda_build_config.yaml: {key} must be a non-empty list")
    axes: List[List[Dict[str, str]]] = []
    zipped = set()
    for group in zip_groups:
        lengths = {len(config[k]) for k in group}
        if len(lengths) != 1:
            raise CheckFailed(f"conda_build_config.yaml: zip_keys {group} have lists of different lengths")
        axes.append([{k: str(config[k][i]) for k in group} for i in range(lengths.pop())])
        zipped.update(group)
    for key, values in config.items():
        if key not in zipped:
            axes.append([{key: str(v)} for v in values])
    variants = []
    for combo in itertools.product(*axes):
        v: Dict[str, str] = {}
        for part in combo:
            v.update(part)
        variants.append(v)
    return variants


def variant_hash(variant: Dict[str, str]) -> str:
    """Seven hex digits standing in for conda-build's PKG_HASH (conda-build
    hashes the variant keys an output uses; python and r_base are in the
    build string instead)."""
    used = {k: v for k, v in variant.items() if k not in ("python", "r_base")}
    return hashlib.sha1(json.dumps(used, sort_keys=True).encode()).hexdigest()[:7]


class Recipe:
    """A recipe rendered for one variant."""

    def __init__(self, recipe_dir: str, variant: Dict[str, str]):
        self.recipe_dir = recipe_dir
        self.variant = variant
        # Pass 1 finds each output's build string, pass 2 fills in exact pins.
        first = self._render({})
        builds = {o["name"]: str(o.get("build", {}).get("string", "")) for o in first.get("outputs", [])}
        self.meta = self._render(builds)
        self.version = str(self.meta["package"]["version"])
        self.outputs = {o["name"]: o for o in self.meta.get("outputs", [])}

    def _render(self, builds: Dict[str, str]) -> Dict[str, Any]:
        variant = self.variant
        version_holder: Dict[str, str] = {}

        def compiler(lang: str) -> str:
            name = variant.get(f"{lang}_compiler", "None")
            ver = variant.get(f"{lang}_compiler_version", "")
            return f"{name}_{TARGET_PLATFORM} {ver}".strip()

        def stdlib(lang: str) -> str:
            name = variant.get(f"{lang}_stdlib", "sysroot")
            ver = variant.get(f"{lang}_stdlib_version", "")
            return f"{name}_{TARGET_PLATFORM} {ver}".strip()

        def pin_subpackage(name: str, min_pin: str = "x.x.x.x.x.x.x", max_pin: str = "x",
                           exact: bool = False, **_: Any) -> str:
            version = version_holder["version"]
            if exact:
                return f"{name} {version} {builds.get(name, '*') or '*'}"
            return f"{name} {pin_expression(version, min_pin, max_pin)}"

        env = jinja2.Environment(loader=jinja2.FileSystemLoader(self.recipe_dir),
                                 undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        ctx = selector_namespace(variant)
        ctx.update({
            "compiler": compiler, "stdlib": stdlib, "pin_subpackage": pin_subpackage,
            "environ": dict(os.environ), "PKG_HASH": variant_hash(variant),
            "CONDA_BUILD_STATE": "RENDER",
        })
        if "python" in variant:
            ctx["CONDA_PY"] = str(ctx["py"])
            ctx["PY_VER"] = ".".join(variant["python"].split(".")[:2])
        # The version is needed by pin_subpackage before the YAML exists:
        # take it from the template's own "{% set version = ... %}".
        with open(os.path.join(self.recipe_dir, "meta.yaml")) as fh:
            raw = fh.read()
        m = re.search(r"{%\s*set\s+version\s*=\s*[\"']([^\"']+)[\"']\s*%}", raw)
        if not m:
            raise CheckFailed("meta.yaml: no {% set version = \"...\" %} line")
        version_holder["version"] = m.group(1)
        try:
            text = env.get_template("meta.yaml").render(**ctx)
        except jinja2.TemplateError as exc:
            raise CheckFailed(f"meta.yaml does not render for {variant}: {exc}") from exc
        text = apply_selectors(text, selector_namespace(variant))
        try:
            meta = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CheckFailed(f"rendered meta.yaml is not valid YAML for {variant}: {exc}") from exc
        # conda-build pins host requirements named like a variant key
        # (python -> python 3.11, r-base -> r_base) to the variant's value.
        for out in meta.get("outputs", []) or []:
            reqs = out.get("requirements") or {}
            for section in ("build", "host"):
                pinned = []
                for spec in reqs.get(section) or []:
                    spec = str(spec)
                    key = spec.replace("-", "_")
                    if " " not in spec and key in variant:
                        spec = f"{spec} {variant[key]}"
                    pinned.append(spec)
                if section in reqs:
                    reqs[section] = pinned
        return meta

    def output(self, name: str) -> Dict[str, Any]:
        if name not in self.outputs:
            raise CheckFailed(f"the recipe has no output {name!r} (outputs: {sorted(self.outputs)})")
        return self.outputs[name]


def reqs(output: Dict[str, Any], section: str) -> List[str]:
    return [str(s) for s in ((output.get("requirements") or {}).get(section) or [])]


def req_names(specs: Iterable[str]) -> List[str]:
    return [s.split()[0] for s in specs]


def build_string(output: Dict[str, Any]) -> str:
    return str((output.get("build") or {}).get("string", ""))


def build_number(recipe: Recipe, output: Dict[str, Any]) -> int:
    number = (output.get("build") or {}).get("number", (recipe.meta.get("build") or {}).get("number", 0))
    return int(number)


def test_section(output: Dict[str, Any]) -> Dict[str, Any]:
    return output.get("test") or {}


# ---------------------------------------------------------------------------
# Facts about the source tree, read independently of the recipe
# ---------------------------------------------------------------------------

def project_version(source: str) -> str:
    with open(os.path.join(source, "CMakeLists.txt")) as fh:
        m = re.search(r"project\(\s*mpcf\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", fh.read())
    if not m:
        raise CheckFailed("CMakeLists.txt: no project(mpcf VERSION x.y.z)")
    return m.group(1)


def public_headers(source: str) -> List[str]:
    inc = os.path.join(source, "capi", "include", "mpcf")
    return sorted(n for n in os.listdir(inc) if n.endswith(".h"))


def elf_soname(path: str) -> Optional[str]:
    """DT_SONAME of a 64-bit little-endian ELF shared library."""
    import struct
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise CheckFailed(f"{path} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for sh in sections:
        if sh[1] != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[sh[6]]
        off, size = sh[4], sh[5]
        for i in range(0, size, 16):
            tag, val = struct.unpack_from("<qQ", data, off + i)
            if tag == 0:
                break
            if tag == 14:  # DT_SONAME
                start = strtab[4] + val
                return data[start:data.index(b"\0", start)].decode()
    return None


# ---------------------------------------------------------------------------
# Structure checks (stage "render")
# ---------------------------------------------------------------------------

OUTPUTS = ("libmpcf", "mpcf", "r-mpcf")


def check_structure(recipe_dir: str, source: str) -> List[str]:
    """Renders every variant and returns the list of problems found."""
    problems: List[str] = []
    version = project_version(source)
    soversion = version.split(".")[0]
    headers = public_headers(source)
    variants = load_variants(recipe_dir)
    if not any(v.get("cuda_compiler_version") == "None" for v in variants):
        problems.append("conda_build_config.yaml has no CPU variant (cuda_compiler_version None)")
    if not any(v.get("cuda_compiler_version", "None") != "None" for v in variants):
        problems.append("conda_build_config.yaml has no CUDA variant")

    rendered: List[Recipe] = []
    for variant in variants:
        try:
            rendered.append(Recipe(recipe_dir, variant))
        except CheckFailed as exc:
            problems.append(str(exc))
    if problems:
        return problems

    by_build: Dict[Tuple[str, str], str] = {}
    for r in rendered:
        tag = ", ".join(f"{k}={v}" for k, v in sorted(r.variant.items()))
        where = f"[{tag}]"
        cuda = r.variant.get("cuda_compiler_version", "None")
        with_cuda = cuda != "None"
        if r.version != version:
            problems.append(f"{where} package version {r.version} differs from the CMake project's {version}")
        if set(r.outputs) != set(OUTPUTS):
            problems.append(f"{where} outputs are {sorted(r.outputs)}, expected {list(OUTPUTS)}")
            continue
        libmpcf_build = build_string(r.outputs["libmpcf"])
        for name, out in r.outputs.items():
            ow = f"{where} {name}:"
            script = out.get("script")
            if not script or not os.path.isfile(os.path.join(recipe_dir, str(script))):
                problems.append(f"{ow} its build script {script!r} is not a file of the recipe")
            bstr = build_string(out)
            number = build_number(r, out)
            prefix = "cuda" + cuda.replace(".", "") + "_" if with_cuda else "cpu_"
            if not bstr.startswith(prefix):
                problems.append(f"{ow} build string {bstr!r} does not start with {prefix!r}")
            if not re.search(r"h[0-9a-f]{7}_", bstr):
                problems.append(f"{ow} build string {bstr!r} has no h<hash>_ (h{{{{ PKG_HASH }}}})")
            if not bstr.endswith(f"_{number}"):
                problems.append(f"{ow} build string {bstr!r} does not end with its build number {number}")
            if name == "mpcf" and f"py{r.variant['python'].replace('.', '')}" not in bstr:
                problems.append(f"{ow} build string {bstr!r} does not name the Python version")
            if name == "r-mpcf" and f"r{r.variant['r_base'].replace('.', '')}" not in bstr:
                problems.append(f"{ow} build string {bstr!r} does not name the R version")
            # Two variants that yield different packages must not share a file name.
            key = (name, bstr)
            content = json.dumps(out, sort_keys=True, default=str)
            if key in by_build and by_build[key] != content:
                problems.append(f"{ow} two variants render different packages with the same build string {bstr!r}")
            by_build.setdefault(key, content)
            all_specs = reqs(out, "build") + reqs(out, "host") + reqs(out, "run")
            has_cuda_dep = any("cuda" in s for s in all_specs)
            if not with_cuda and has_cuda_dep:
                problems.append(f"{ow} the CPU variant has CUDA requirements: "
                                f"{[s for s in all_specs if 'cuda' in s]}")
            if name != "libmpcf":
                exact = f"libmpcf {version} {libmpcf_build}"
                for section in ("host", "run"):
                    if exact not in reqs(out, section):
                        problems.append(f"{ow} {section} requirements lack the exact pin {exact!r} "
                                        f"(got {reqs(out, section)})")
            if not test_section(out):
                problems.append(f"{ow} has no test section")
            for f in test_section(out).get("files") or []:
                if not os.path.isfile(os.path.join(recipe_dir, str(f))):
                    problems.append(f"{ow} test file {f!r} does not exist in the recipe")

        lib = r.outputs["libmpcf"]
        exports = [str(s) for s in ((lib.get("build") or {}).get("run_exports") or [])]
        want = f"libmpcf >={version},<{int(soversion) + 1}.0a0"
        if exports != [want]:
            problems.append(f"{where} libmpcf run_exports are {exports}, expected [{want!r}] "
                            f"(the ABI of libmpcf.so.{soversion})")
        if with_cuda:
            if not any(n.startswith("cuda-nvcc") for n in req_names(reqs(lib, "build"))):
                problems.append(f"{where} libmpcf: the CUDA variant has no CUDA compiler in build")
            if "__cuda" not in req_names(reqs(lib, "run")):
                problems.append(f"{where} libmpcf: the CUDA variant does not need __cuda at run time")
        commands = "\n".join(str(c) for c in test_section(lib).get("commands") or [])
        for needed in [f"include/mpcf/{h}" for h in headers] + [
                "lib/cmake/mpcf/mpcfConfig.cmake", "lib/cmake/mpcf/mpcfConfigVersion.cmake",
                "lib/pkgconfig/mpcf.pc", f"libmpcf.so.{soversion}"]:
            if needed not in commands:
                problems.append(f"{where} libmpcf: the tests never check {needed}")
        if not any(n.startswith("gcc") for n in req_names(test_section(lib).get("requires") or [])):
            problems.append(f"{where} libmpcf: the tests need a C compiler to build the C program")
        if "mpcf" not in (test_section(r.outputs["mpcf"]).get("imports") or []):
            problems.append(f"{where} mpcf: the tests do not import mpcf")
        for name, needs in (("mpcf", ["python", "numpy"]), ("r-mpcf", ["r-base", "r-rcpp"])):
            missing = [n for n in needs if n not in req_names(reqs(r.outputs[name], "run"))]
            if missing:
                problems.append(f"{where} {name}: run requirements lack {missing}")
        if not re.search(r"library\(['\"]?mpcf", "\n".join(
                str(c) for c in test_section(r.outputs["r-mpcf"]).get("commands") or [])):
            problems.append(f"{where} r-mpcf: the tests never load the package (library('mpcf'))")

    # The CUDA build of every output must be preferred: a higher build number
    # than the CPU build of the same python / R variant.
    cpu = {}
    for r in rendered:
        if r.variant.get("cuda_compiler_version") == "None":
            others = tuple(sorted((k, v) for k, v in r.variant.items() if not k.startswith("cuda")))
            cpu[others] = r
    for r in rendered:
        if r.variant.get("cuda_compiler_version", "None") == "None":
            continue
        others = tuple(sorted((k, v) for k, v in r.variant.items() if not k.startswith("cuda")))
        base = cpu.get(others)
        if base is None:
            continue
        for name in OUTPUTS:
            a, b = build_number(r, r.outputs[name]), build_number(base, base.outputs[name])
            if a <= b:
                problems.append(f"{name}: the CUDA build number {a} is not above the CPU build number {b}, "
                                "so the solver would not prefer CUDA where a GPU is present")
    log(f"rendered {len(rendered)} variants; outputs {list(OUTPUTS)}")
    for r in rendered[:1] + [x for x in rendered if x.variant.get("cuda_compiler_version") != "None"][:1]:
        for name in OUTPUTS:
            log(f"  {name}-{r.version}-{build_string(r.outputs[name])}  "
                f"(number {build_number(r, r.outputs[name])})")
    return sorted(set(problems))


# ---------------------------------------------------------------------------
# What the machine provides for a requirement
# ---------------------------------------------------------------------------

def _version_tuple(text: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def _meets(found: str, spec: str) -> bool:
    """Only lower bounds written in the recipe (">=x.y") are enforced; pins
    that come from the variant (python 3.11, r-base 4.4) are not: the
    simulation builds with the interpreters this machine has."""
    m = re.search(r">=\s*([0-9][0-9.]*)", spec)
    return not m or _version_tuple(found) >= _version_tuple(m.group(1))


def _run_text(cmd: List[str]) -> Optional[str]:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout + r.stderr if r.returncode == 0 else None


def _python_module(module: str) -> Optional[str]:
    code = ("import importlib.metadata as m, importlib, sys; importlib.import_module(sys.argv[1]); "
            "print(m.version(sys.argv[2]))")
    dist = {"scikit_build_core": "scikit-build-core"}.get(module, module)
    out = _run_text([sys.executable, "-c", code, module, dist])
    return out.strip() if out else None


def _r_package(pkg: str) -> Optional[str]:
    if not shutil.which("Rscript"):
        return None
    out = _run_text(["Rscript", "--vanilla", "-e",
                     f"cat(as.character(packageVersion('{pkg}')))"])
    return out.strip() if out else None


def _tool(name: str, version_args: Optional[List[str]] = None) -> Optional[str]:
    if not shutil.which(name):
        return None
    if not version_args:
        return "0"
    out = _run_text([name] + version_args)
    return out or "0"


# conda names R packages r-<lower case name>; R's own names keep their case.
_R_PACKAGE_NAMES = {"r-rcpp": "Rcpp", "r-testthat": "testthat"}


def probe(spec: str, staged: Dict[str, str]) -> Tuple[bool, str]:
    """Whether this machine provides `spec`; a sibling output is provided by
    its staged package. Unknown names fail: the simulation must be taught
    every requirement the recipe adds."""
    name = spec.split()[0]
    if name in staged:
        return True, f"the {name} package of this simulation"
    compilers = {f"gcc_{TARGET_PLATFORM}": "cc", f"gxx_{TARGET_PLATFORM}": "c++",
                 f"cuda-nvcc_{TARGET_PLATFORM}": "nvcc"}
    if name in compilers:
        tool = compilers[name]
        return (shutil.which(tool) is not None, f"{tool} on PATH")
    if name == f"sysroot_{TARGET_PLATFORM}":
        return True, "the system C library"
    tools = {"cmake": ["--version"], "swig": ["-version"], "make": None, "ninja": None,
             "pkg-config": None}
    if name in tools:
        found = _tool(name, tools[name])
        ok = found is not None and _meets(found, spec)
        return ok, f"{name} on PATH" + ("" if ok or found is None else f" (version too old for {spec})")
    if name == "python":
        return True, f"{sys.executable} (a virtual environment in the prefix)"
    if name == "pip":
        return (_python_module("pip") is not None, f"pip for {sys.executable}")
    if name in ("numpy", "scikit-build-core", "scipy", "pytest"):
        module = name.replace("-", "_")
        found = _python_module(module)
        ok = found is not None and _meets(found, spec)
        return ok, f"Python module {module} for {sys.executable}" + (
            "" if ok or found is None else f" (version {found} too old for {spec})")
    if name == "r-base":
        return (shutil.which("R") is not None and shutil.which("Rscript") is not None, "R and Rscript on PATH")
    if name.startswith("r-"):
        r_name = _R_PACKAGE_NAMES.get(name, name[2:])
        found = _r_package(r_name)
        return (found is not None and _meets(found, spec), f"the R package {r_name}")
    if name == "libhwy":
        # Only Google Highway's headers are used (the SIMD CPU walk).
        return (os.path.isfile("/usr/include/hwy/highway.h"), "Google Highway's headers (libhwy-dev)")
    if name in ("cuda-version", "cuda-cudart-dev", "cuda-cudart-static", "__cuda"):
        return (shutil.which("nvcc") is not None, "a CUDA toolkit (nvcc on PATH)")
    return False, f"the simulation does not know how to provide {name!r}"


def require(specs: Iterable[str], staged: Dict[str, str], what: str) -> None:
    missing = []
    for spec in specs:
        ok, how = probe(spec, staged)
        if not ok:
            missing.append(f"{spec} ({how})")
    if missing:
        raise Skip(f"{what} needs what this machine lacks: " + "; ".join(missing))


# ---------------------------------------------------------------------------
# Prefixes, packages, relocation
# ---------------------------------------------------------------------------

def placeholder_prefix(parent: str, tag: str, length: int = 180) -> str:
    """A long prefix like conda-build's _h_env_placehold_placehold..., so
    that installing it elsewhere can replace it in binaries with padding."""
    base = os.path.join(os.path.realpath(parent), f"_{tag}_env")
    name = base + "_placehold" * max(1, (length - len(base)) // 10 + 1)
    return name[:max(length, len(base) + 10)]


def snapshot(prefix: str) -> Dict[str, Tuple[int, int, int]]:
    """Relative path -> (mode, size, mtime_ns) of everything under prefix."""
    out = {}
    for root, dirs, files in os.walk(prefix):
        for n in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            p = os.path.join(root, n)
            st = os.lstat(p)
            out[os.path.relpath(p, prefix)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def copy_source(repo: str, dest: str) -> None:
    """SRC_DIR: the repository's files that git does not ignore (tracked and
    new), so build directories inside the checkout stay out."""
    os.makedirs(dest)
    try:
        listing = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--cached", "--others",
                                  "--exclude-standard"], capture_output=True)
        listed = listing.returncode == 0
    except OSError:  # no git
        listed = False
    if not listed:
        shutil.rmtree(dest)
        shutil.copytree(repo, dest, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "build*", "__pycache__"))
        return
    for rel in listing.stdout.decode().split("\0"):
        if not rel:
            continue
        src = os.path.join(repo, rel)
        if not os.path.lexists(src):
            continue  # deleted in the working tree
        dst = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isfile(src):
            shutil.copy2(src, dst)


def binary_replace(data: bytes, old: bytes, new: bytes) -> bytes:
    """conda's replacement of a prefix inside NUL-terminated strings of a
    binary file: the string keeps its place and is padded with NULs."""
    if len(new) > len(old):
        raise CheckFailed("the install prefix is longer than the build prefix")

    def repl(m: "re.Match[bytes]") -> bytes:
        s = m.group()
        return s.replace(old, new) + b"\0" * ((len(old) - len(new)) * s.count(old))

    out = re.sub(re.escape(old) + b"([^\0]*?)\0", repl, data)
    assert len(out) == len(data)
    return out


class Package:
    """A built output: its files (relative to the prefix) and where the build
    prefix appears in them, like conda's info/has_prefix."""

    def __init__(self, root: str):
        self.root = root
        with open(os.path.join(root, "manifest.json")) as fh:
            self.manifest = json.load(fh)

    @property
    def name(self) -> str:
        return self.manifest["name"]

    @property
    def files(self) -> List[str]:
        return self.manifest["files"]

    def install(self, prefix: str) -> None:
        old = self.manifest["build_prefix"].encode()
        new = prefix.encode()
        for rel in self.files:
            src = os.path.join(self.root, "files", rel)
            dst = os.path.join(prefix, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                raise CheckFailed(f"installing {self.name}: {rel} already exists in {prefix} "
                                  "(two packages own the same file)")
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
                continue
            mode = self.manifest["has_prefix"].get(rel)
            if mode is None:
                shutil.copy2(src, dst)
                continue
            with open(src, "rb") as fh:
                data = fh.read()
            data = data.replace(old, new) if mode == "text" else binary_replace(data, old, new)
            with open(dst, "wb") as fh:
                fh.write(data)
            shutil.copymode(src, dst)


def stage_package(name: str, version: str, build: str, prefix: str, new_files: List[str],
                  dest: str) -> Package:
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(os.path.join(dest, "files"))
    has_prefix: Dict[str, str] = {}
    needle = prefix.encode()
    problems = []
    for rel in new_files:
        src = os.path.join(prefix, rel)
        dst = os.path.join(dest, "files", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            target = os.readlink(src)
            if os.path.isabs(target):
                problems.append(f"{rel} is an absolute link to {target}")
            os.symlink(target, dst)
            continue
        shutil.copy2(src, dst)
        with open(src, "rb") as fh:
            data = fh.read()
        if needle in data:
            has_prefix[rel] = "binary" if b"\0" in data else "text"
    if problems:
        raise CheckFailed(f"{name}: not relocatable: " + "; ".join(problems))
    manifest = {"name": name, "version": version, "build": build, "build_prefix": prefix,
                "files": sorted(new_files), "has_prefix": has_prefix}
    with open(os.path.join(dest, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    return Package(dest)


def make_python_env(prefix: str) -> str:
    """The prefix's Python: a virtual environment of this interpreter that
    sees its packages (NumPy, scikit-build-core, pip), installing into the
    prefix as conda's python does."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", prefix],
                   check=True)
    return os.path.join(prefix, "bin", "python")


def make_r_library(prefix: str) -> str:
    """The prefix's R library, lib/R/library, where conda's r-base keeps its
    packages; the simulation's R finds it first through R_LIBS (R ignores
    R_LIBS entries that do not exist, so it must exist before R starts)."""
    lib = os.path.join(prefix, "lib", "R", "library")
    os.makedirs(lib, exist_ok=True)
    return lib


# ---------------------------------------------------------------------------
# Building and testing one output
# ---------------------------------------------------------------------------

_LEAKY_ENV = ("PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "R_LIBS", "R_LIBS_USER", "R_LIBS_SITE",
              "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH", "CMAKE_ARGS", "CONDA_PREFIX", "MPCF_HOME",
              "VIRTUAL_ENV", "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS")


def base_env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY_ENV}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def choose_variant(recipe_dir: str, cuda: bool = False) -> Dict[str, str]:
    """The CPU (or the first CUDA) variant whose python is this interpreter's
    (the first python otherwise), with the first r_base."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    cpu = [v for v in load_variants(recipe_dir) if (v.get("cuda_compiler_version") != "None") == cuda]
    if not cpu:
        raise CheckFailed(f"conda_build_config.yaml has no {'CUDA' if cuda else 'CPU'} variant")
    if cuda:
        first = cpu[0]["cuda_compiler_version"]
        cpu = [v for v in cpu if v["cuda_compiler_version"] == first]
    same_py = [v for v in cpu if v.get("python") == here]
    if not same_py:
        log(f"note: no python {here} variant; using {cpu[0].get('python')} with this interpreter")
    return (same_py or cpu)[0]


def run_logged(cmd: List[str], env: Dict[str, str], cwd: str, timeout: int, what: str) -> None:
    log(f"+ ({what}) {' '.join(cmd)}")
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, env=env, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise CheckFailed(f"{what} did not finish within {timeout} s") from exc
    log(f"  ({what}: exit status {r.returncode}, {time.monotonic() - start:.0f} s)")
    if r.returncode != 0:
        raise CheckFailed(f"{what} failed with exit status {r.returncode}")


class Simulation:
    def __init__(self, recipe_dir: str, source: str, work: str, jobs: int, cuda: bool = False):
        self.recipe_dir = os.path.realpath(recipe_dir)
        self.source = os.path.realpath(source)
        self.work = os.path.realpath(work)
        self.jobs = jobs
        self.variant = choose_variant(self.recipe_dir, cuda)
        self.recipe = Recipe(self.recipe_dir, self.variant)
        log("variant: " + ", ".join(f"{k}={v}" for k, v in sorted(self.variant.items())))

    def package_dir(self, name: str) -> str:
        return os.path.join(self.work, "pkgs", name)

    def staged(self) -> Dict[str, Package]:
        out = {}
        for name in self.recipe.outputs:
            d = self.package_dir(name)
            if os.path.isfile(os.path.join(d, "manifest.json")):
                out[name] = Package(d)
        return out

    def sibling_deps(self, specs: List[str], staged: Dict[str, Package], what: str) -> List[Package]:
        deps = []
        for spec in specs:
            name = spec.split()[0]
            if name in self.recipe.outputs:
                if name not in staged:
                    # Under ctest the stage that builds it is a fixture: when it
                    # failed this test is not run, when it was skipped so is this.
                    raise Skip(f"{what} needs the {name} package, which has not been built "
                               f"(run the stage {name!r} first)")
                pkg = staged[name]
                want = spec.split()
                have = [name, pkg.manifest["version"], pkg.manifest["build"]]
                if len(want) == 3 and want != have:
                    raise CheckFailed(f"{what} pins {spec!r} but the staged package is {' '.join(have)}")
                deps.append(pkg)
        return deps

    def conda_env(self, name: str, prefix: str, build_prefix: str, src: str, python: Optional[str],
                  out: Dict[str, Any]) -> Dict[str, str]:
        env = base_env()
        v = self.variant
        env.update({
            "CONDA_BUILD": "1", "PREFIX": prefix, "BUILD_PREFIX": build_prefix, "SRC_DIR": src,
            "RECIPE_DIR": self.recipe_dir, "CPU_COUNT": str(self.jobs),
            "PKG_NAME": name, "PKG_VERSION": self.recipe.version,
            "PKG_BUILDNUM": str(build_number(self.recipe, out)),
            "PKG_BUILD_STRING": build_string(out), "PKG_HASH": "h" + variant_hash(v),
            "target_platform": TARGET_PLATFORM, "build_platform": TARGET_PLATFORM,
            # The part of conda-forge's CMAKE_ARGS that does not depend on
            # conda's compiler packages.
            "CMAKE_ARGS": " ".join([
                "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={prefix}",
                "-DCMAKE_INSTALL_LIBDIR=lib"]),
            "PKG_CONFIG_PATH": os.path.join(prefix, "lib", "pkgconfig"),
            "PATH": os.pathsep.join([os.path.join(prefix, "bin"), os.path.join(build_prefix, "bin"),
                                     os.environ.get("PATH", "")]),
            # The prefix's R library, first on R's library path as in conda's R.
            "R_LIBS": os.path.join(prefix, "lib", "R", "library"),
            "R": shutil.which("R") or "R",
        })
        env.update(v)  # conda-build exports the variant variables
        if python:
            py = ".".join(v.get("python", f"{sys.version_info.major}.{sys.version_info.minor}").split(".")[:2])
            env.update({"PYTHON": python, "PY_VER": py, "CONDA_PY": py.replace(".", ""),
                        "SP_DIR": subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                                                 capture_output=True, text=True, check=True).stdout.strip()})
        return env

    def build(self, name: str) -> Package:
        out = self.recipe.output(name)
        staged = self.staged()
        deps = self.sibling_deps(reqs(out, "host"), staged, f"building {name}")
        require(reqs(out, "build") + reqs(out, "host"), {n: "" for n in staged}, f"building {name}")

        root = os.path.join(self.work, name)
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        src = os.path.join(root, "work")
        copy_source(self.source, src)
        prefix = placeholder_prefix(root, "h")
        build_prefix = placeholder_prefix(root, "build")
        os.makedirs(prefix)
        os.makedirs(build_prefix)
        python = None
        if "python" in req_names(reqs(out, "host")):
            python = make_python_env(prefix)
        if "r-base" in req_names(reqs(out, "host")):
            make_r_library(prefix)
        for pkg in deps:
            pkg.install(prefix)
        before = snapshot(prefix)

        env = self.conda_env(name, prefix, build_prefix, src, python, out)
        script = os.path.join(self.recipe_dir, str(out["script"]))
        run_logged(["bash", script], env, src, 1800, f"build script {out['script']} of {name}")

        after = snapshot(prefix)
        touched = sorted(p for p, st in before.items() if after.get(p) != st)
        if touched:
            raise CheckFailed(f"building {name} changed or removed files its host requirements "
                              f"installed: {touched[:10]}")
        new = sorted(p for p in after if p not in before and "/__pycache__/" not in f"/{p}")
        if not new:
            raise CheckFailed(f"building {name} installed nothing into PREFIX")
        owned = {f: p.name for p in staged.values() if p.name != name for f in p.files}
        clash = [f"{f} (also in {owned[f]})" for f in new if f in owned]
        if clash:
            raise CheckFailed(f"{name} would install files another output owns: {clash[:10]}")
        pkg = stage_package(name, self.recipe.version, build_string(out), prefix, new, self.package_dir(name))
        log(f"{name}-{self.recipe.version}-{build_string(out)}: {len(new)} files, "
            f"{len(pkg.manifest['has_prefix'])} with the build prefix in them")
        return pkg

    def test(self, name: str) -> None:
        out = self.recipe.output(name)
        staged = self.staged()
        if name not in staged:
            raise CheckFailed(f"no staged {name} package to test")
        t = test_section(out)
        deps = self.sibling_deps(reqs(out, "run"), staged, f"testing {name}")
        run_specs = reqs(out, "run") + [str(s) for s in t.get("requires") or []]
        require(run_specs, {n: "" for n in staged}, f"testing {name}")

        root = os.path.join(self.work, name)
        prefix = os.path.join(root, "_test_env")  # shorter than the build prefix, as in conda
        test_dir = os.path.join(root, "test_tmp")
        for d in (prefix, test_dir):
            shutil.rmtree(d, ignore_errors=True)
        os.makedirs(test_dir)
        python = None
        if "python" in req_names(reqs(out, "run")):
            python = make_python_env(prefix)
        else:
            os.makedirs(prefix)
        if "r-base" in req_names(reqs(out, "run")):
            make_r_library(prefix)
        for pkg in deps + [staged[name]]:
            pkg.install(prefix)
        for f in t.get("files") or []:
            dst = os.path.join(test_dir, str(f))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(self.recipe_dir, str(f)), dst)
        for f in t.get("source_files") or []:
            src = os.path.join(self.source, str(f))
            dst = os.path.join(test_dir, str(f))
            if os.path.isdir(src):
                shutil.copytree(src, dst)
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)

        lines = ["set -ex"]
        for module in t.get("imports") or []:
            lines.append(f"python -c 'import {module}'")
        lines += [str(c) for c in t.get("commands") or []]
        if len(lines) == 1:
            raise CheckFailed(f"{name} declares no test imports or commands")
        script = os.path.join(test_dir, "run_test.sh")
        with open(script, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        env = self.conda_env(name, prefix, prefix, test_dir, python, out)
        env.pop("CMAKE_ARGS")
        env.pop("PKG_CONFIG_PATH")  # conda's pkg-config searches $PREFIX itself
        env["PKG_CONFIG_PATH"] = os.path.join(prefix, "lib", "pkgconfig")
        run_logged(["bash", script], env, test_dir, 900, f"tests of {name}")

    def check_libmpcf_abi(self, pkg: Package) -> None:
        """The SONAME of the built library is the ABI the run_exports pin."""
        lib = [f for f in pkg.files if re.fullmatch(r"lib/libmpcf\.so\.[0-9.]+", f)
               and not os.path.islink(os.path.join(pkg.root, "files", f))]
        if len(lib) != 1:
            raise CheckFailed(f"libmpcf: expected one real lib/libmpcf.so.x.y.z, found {lib}")
        soname = elf_soname(os.path.join(pkg.root, "files", lib[0]))
        exports = (self.recipe.output("libmpcf").get("build") or {}).get("run_exports") or []
        m = re.fullmatch(r"libmpcf\.so\.([0-9]+)", soname or "")
        if not m:
            raise CheckFailed(f"libmpcf: SONAME {soname!r} is not libmpcf.so.<major>")
        want = f"libmpcf >={self.recipe.version},<{int(m.group(1)) + 1}.0a0"
        if [str(e) for e in exports] != [want]:
            raise CheckFailed(f"libmpcf: SONAME {soname} needs run_exports [{want!r}], the recipe has {exports}")
        log(f"libmpcf: SONAME {soname} matches run_exports {exports}")


# ---------------------------------------------------------------------------
# The real conda-build
# ---------------------------------------------------------------------------

def real_build(recipe_dir: str, work: str) -> int:
    conda_build = shutil.which("conda-build")
    if not conda_build and shutil.which("conda"):
        if _run_text(["conda", "build", "--help"]) is not None:
            conda_build = "conda build"
    if not conda_build:
        raise Skip("neither conda-build nor `conda build` is on PATH (rattler-build needs a recipe.yaml: "
                   "see packaging/README.md)")
    out = os.path.join(work, "real-build")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    variants = ("{cuda_compiler: [None], cuda_compiler_version: [None], python: ['%d.%d']}"
                % sys.version_info[:2])
    cmd = conda_build.split() + [recipe_dir, "--output-folder", out, "--variants", variants,
                                 "-c", "conda-forge", "--no-anaconda-upload"]
    run_logged(cmd, dict(os.environ), work, 3600, "conda-build")
    built = [f for _, _, fs in os.walk(out) for f in fs if f.endswith((".conda", ".tar.bz2"))]
    names = {re.sub(r"-[^-]+-[^-]+\.(conda|tar\.bz2)$", "", f) for f in built}
    if not set(OUTPUTS) <= names:
        raise CheckFailed(f"conda-build made {sorted(built)}, not all of {list(OUTPUTS)}")
    log("conda-build made: " + ", ".join(sorted(built)))
    return 0


# ---------------------------------------------------------------------------

def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recipe", required=True, help="the recipe directory (packaging/conda)")
    ap.add_argument("--source", required=True, help="the repository root (the recipe's source)")
    ap.add_argument("--work", required=True, help="scratch directory")
    ap.add_argument("--stage", required=True, choices=("render",) + OUTPUTS + ("real",))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("MPCF_CONDA_SIM_JOBS", "2")),
                    help="CPU_COUNT given to the build scripts (default 2)")
    ap.add_argument("--cuda", action="store_true",
                    help="build the first CUDA variant instead of the CPU one (needs nvcc; "
                         "for a machine with a GPU, not for ctest)")
    args = ap.parse_args(argv)
    if _IMPORT_ERROR:
        log(f"SKIP: the simulation needs the Python packages jinja2 and PyYAML ({_IMPORT_ERROR}); "
            "pip install jinja2 pyyaml")
        return SKIP
    os.makedirs(args.work, exist_ok=True)
    try:
        if args.stage == "render":
            problems = check_structure(args.recipe, args.source)
            if problems:
                for p in problems:
                    log(f"FAIL: {p}")
                return 1
            log("recipe structure: all checks passed")
            return 0
        if args.stage == "real":
            return real_build(os.path.realpath(args.recipe), os.path.realpath(args.work))
        sim = Simulation(args.recipe, args.source, args.work, args.jobs, args.cuda)
        shutil.rmtree(sim.package_dir(args.stage), ignore_errors=True)
        pkg = sim.build(args.stage)
        if (sim.recipe.output(args.stage).get("build") or {}).get("run_exports"):
            sim.check_libmpcf_abi(pkg)
        sim.test(args.stage)
        log(f"{args.stage}: built and tested")
        return 0
    except Skip as exc:
        log(f"SKIP: {exc}")
        return SKIP
    except CheckFailed as exc:
        log(f"FAIL: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
