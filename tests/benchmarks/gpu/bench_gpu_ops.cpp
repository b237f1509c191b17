// The operations on the GPU through the public C API only, end to end:
// pdist with p = 1, 2 and 3 (condensed) and l2_kernel (packed), float32 and
// float64, n = 20000, m = 128 (t_0 = 0, gaps uniform(0.05, 1), values
// uniform(0, 10), last value 0). Because it uses nothing but mpcf.h it also
// builds against an older libmpcf, so that two versions are timed side by
// side on one machine:
//
//   c++ -O2 -std=c++20 bench_gpu_ops.cpp -I<include> -L<lib> -lmpcf -lbenchmark -lpthread
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "mpcf/mpcf.h"

namespace {

struct Input {
  std::vector<std::uint64_t> offsets{0};
  std::vector<double> t, v;
  std::vector<float> t32, v32;
};

const Input& input() {
  static const Input in = [] {
    Input r;
    std::mt19937_64 rng(99);
    std::uniform_real_distribution<double> gap(0.05, 1.0), val(0.0, 10.0);
    for (int i = 0; i < 20000; ++i) {
      double t = 0;
      for (int k = 0; k < 128; ++k) {
        const float tf = static_cast<float>(t), vf = k == 127 ? 0.0f : static_cast<float>(val(rng));
        r.t.push_back(tf);
        r.v.push_back(vf);
        r.t32.push_back(tf);
        r.v32.push_back(vf);
        t = static_cast<float>(t + gap(rng));
      }
      r.offsets.push_back(r.t.size());
    }
    return r;
  }();
  return in;
}

void run(benchmark::State& state, mpcf_dtype dtype, double p) {
  const Input& in = input();
  const std::uint64_t n = in.offsets.size() - 1;
  mpcf_pcfs* X = nullptr;
  mpcf_status st = dtype == MPCF_FLOAT32
                       ? mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t32.data(), in.v32.data(), &X)
                       : mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t.data(), in.v.data(), &X);
  mpcf_options* o = nullptr;
  mpcf_options_create(&o);
  mpcf_options_set_backend(o, MPCF_BACKEND_CUDA);
  const bool kernel = p == 0;  // p = 0 stands for the L2 kernel
  std::uint64_t size = 0;
  if (kernel) {
    mpcf_l2_kernel_size(X, MPCF_LAYOUT_PACKED_LOWER, &size);
  } else {
    mpcf_pdist_size(X, MPCF_LAYOUT_CONDENSED, &size);
  }
  std::vector<unsigned char> out(size * (dtype == MPCF_FLOAT32 ? 4 : 8), 1);  // touched
  // One call outside the timing (the first call of a kind loads its kernels).
  if (kernel) {
    mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, out.data(), size, o);
  } else {
    mpcf_pdist(X, p, MPCF_LAYOUT_CONDENSED, out.data(), size, o);
  }
  for (auto _ : state) {
    st = kernel ? mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, out.data(), size, o)
                : mpcf_pdist(X, p, MPCF_LAYOUT_CONDENSED, out.data(), size, o);
    if (st != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
  }
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

}  // namespace

BENCHMARK_CAPTURE(run, pdist_p1_f32, MPCF_FLOAT32, 1.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, pdist_p2_f32, MPCF_FLOAT32, 2.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, pdist_p3_f32, MPCF_FLOAT32, 3.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, l2_kernel_f32, MPCF_FLOAT32, 0.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, pdist_p1_f64, MPCF_FLOAT64, 1.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, pdist_p2_f64, MPCF_FLOAT64, 2.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, pdist_p3_f64, MPCF_FLOAT64, 3.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, l2_kernel_f64, MPCF_FLOAT64, 0.0)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  std::printf("%s\n", mpcf_build_info());
  // Warm-up: CUDA context, modules, pinned chunks.
  {
    std::vector<double> out(300 * 299 / 2);
    const std::uint64_t offs[3] = {0, 2, 4};
    const double t[4] = {0, 1, 0, 2}, v[4] = {1, 0, 2, 0};
    mpcf_pcfs* X = nullptr;
    mpcf_pcfs_create(MPCF_FLOAT64, 2, offs, t, v, &X);
    mpcf_options* o = nullptr;
    mpcf_options_create(&o);
    mpcf_options_set_backend(o, MPCF_BACKEND_CUDA);
    mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out.data(), 1, o);
    mpcf_options_destroy(o);
    mpcf_pcfs_destroy(X);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
