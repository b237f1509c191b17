#!/usr/bin/env python3
"""Instructions per loop of the block kernels' SASS, without a GPU.

Compiles the PCF block kernels named below for sm_90 (nvcc, this tree's
headers), disassembles them (cuobjdump -sass, which needs nvdisasm beside
it; both come with the CUDA toolkit, or from PyPI: `pip install
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, then put their bin directory on
PATH) and prints, per kernel, its registers and each loop of at least
--min instructions (a backward branch): its length and how many of its
instructions are floating-point, loads and register moves. In the tiled kernel the
innermost loops are the walk, walk_unroll<T>() steps each (4 for float32,
2 for float64; the shorter of a pair is the unchecked fold). The ring
kernel's runs of kRefillSteps (16) steps are unrolled, not loops of their
own: its loops listed are the runs with their refills; --show prints the
code to count a step in.

    python3 tests/benchmarks/gpu/sass_loops.py [--nvcc PATH] [--min 20] [--show KERNEL]

Used to compare a walk's code before and after a change (RESULTS.md, "GPU
kernels: the l2_kernel redo launch and the tiled walk's loads"): the GPU
machine's ncu then measures what the instructions cost.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# Explicit instantiations: the whole-line staged tiled kernels (float32,
# float64; rows from global memory or staged in shared memory too) and the
# float64 ring kernel, L1 and the float32 inner product's
# float attempt.
SOURCE = r"""
#include "mpcf/core/operations.hpp"
#include "mpcf/cuda/cuda_pcf_kernel.cuh"
namespace mpcf::cuda {
template __global__ void pcf_tiled_kernel<true, false, float, OperationL1Dist<float>, false>(
    const TiledBlockArgs<float>, const SimplePoint<float, float>* __restrict__, const OperationL1Dist<float>);
template __global__ void pcf_tiled_kernel<true, false, float, L2InnerProductFloatAcc<float>, false>(
    const TiledBlockArgs<float>, const SimplePoint<float, float>* __restrict__,
    const L2InnerProductFloatAcc<float>);
template __global__ void pcf_tiled_kernel<true, false, double, OperationL1Dist<double>, false>(
    const TiledBlockArgs<double>, const SimplePoint<double, double>* __restrict__, const OperationL1Dist<double>);
template __global__ void pcf_tiled_kernel<true, false, float, OperationL1Dist<float>, false, true>(
    const TiledBlockArgs<float>, const SimplePoint<float, float>* __restrict__, const OperationL1Dist<float>);
template __global__ void pcf_tiled_kernel<true, false, double, OperationL1Dist<double>, false, true>(
    const TiledBlockArgs<double>, const SimplePoint<double, double>* __restrict__, const OperationL1Dist<double>);
template __global__ void pcf_tiled_kernel<true, false, float, OperationL1Dist<float>, false, true, false, false, true>(
    const TiledBlockArgs<float>, const SimplePoint<float, float>* __restrict__, const OperationL1Dist<float>);
template __global__ void pcf_tiled_kernel<true, false, double, OperationL1Dist<double>, false, true, false, false, true>(
    const TiledBlockArgs<double>, const SimplePoint<double, double>* __restrict__, const OperationL1Dist<double>);
template __global__ void pcf_ring_kernel<false, double, OperationL1Dist<double>>(
    const TiledBlockArgs<double>, const SimplePoint<double, double>* __restrict__, const OperationL1Dist<double>);
}
"""

FP = re.compile(r"\b(FSETP|FSEL|FADD|FFMA|FMUL|FMNMX|DSETP|DADD|DFMA|DMUL)\b")
LOAD = re.compile(r"\b(LDG|LDS|LD)\b")
MOVE = re.compile(r"\b(MOV|IMAD\.MOV)")


def demangle(name):
    try:
        out = subprocess.run(["c++filt", name], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return name
    out = re.sub(r"mpcf::(cuda::)?", "", out)
    return re.sub(r"\(TiledBlockArgs.*", "", out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--min", type=int, default=20, help="shortest loop printed (instructions)")
    ap.add_argument("--show", help="print the whole SASS of the kernels whose name contains this")
    args = ap.parse_args()
    if not shutil.which("cuobjdump"):
        sys.exit("sass_loops.py: no cuobjdump on PATH (see the file's comment)")
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = os.path.join(tmp, "k.cu"), os.path.join(tmp, "k.o")
        with open(src, "w") as f:
            f.write(SOURCE)
        cmd = [args.nvcc, "-I" + os.path.join(ROOT, "cuda/include"), "-I" + os.path.join(ROOT, "core/include"),
               "-O3", "-DNDEBUG", "-arch=sm_90", "-std=c++20", "--expt-relaxed-constexpr",
               "-Xptxas", "-v", "-c", src, "-o", obj]
        built = subprocess.run(cmd, capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(built.stderr)
        registers, current = {}, None
        for line in built.stderr.splitlines():
            m = re.search(r"Compiling entry function '(\S+)'", line)
            if m:
                current = m.group(1)
            m = re.search(r"Used (\d+) registers", line)
            if m and current:
                registers[current] = int(m.group(1))
        sass = subprocess.run(["cuobjdump", "-sass", obj], capture_output=True, text=True, check=True).stdout
    for function in re.split(r"\n\s*Function : ", sass)[1:]:
        mangled = function.split("\n", 1)[0].strip()
        name = demangle(mangled)
        code = re.findall(r"/\*([0-9a-f]{4,5})\*/\s+([^;]*);", function)
        at = {int(a, 16): t for a, t in code}
        print(f"{name}: {registers.get(mangled, '?')} registers, {len(code)} instructions")
        for a, text in code:
            m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
            if not m:
                continue
            source, target = int(a, 16), int(m.group(1), 16)
            if target >= source:
                continue
            body = [at[k] for k in sorted(at) if target <= k <= source]
            if len(body) < args.min:
                continue
            print(f"  loop {target:#06x}-{source:#06x}: {len(body)} instructions, "
                  f"{sum(bool(FP.search(x)) for x in body)} floating-point, "
                  f"{sum(bool(LOAD.search(x)) for x in body)} loads, "
                  f"{sum(bool(MOVE.search(x)) for x in body)} moves")
        if args.show and args.show in name:
            for a, text in code:
                print(f"    {a} {text}")


if __name__ == "__main__":
    main()
