/* The summary of a run (summary.h). Backend, devices, threads, merge steps
 * and compute time are libmpcf's own figures (mpcf_task_info): the tool
 * knows no rule of its own about them. */
#include "summary.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "npy_writer.h"

/* FNV-1a (64 bit) of the result's bytes as written to .npy (little-endian). */
static uint64_t result_hash(const result* r) {
  const size_t elem = r->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  uint64_t h = 0xcbf29ce484222325ull;
  unsigned char chunk[4096];
  const size_t per_chunk = sizeof chunk / elem;
  const unsigned char* src = r->data;
  for (uint64_t done = 0; done < r->count;) {
    const size_t k = (size_t)(r->count - done < per_chunk ? r->count - done : per_chunk);
    npy_copy_little_endian(chunk, src + done * elem, k, elem);
    for (size_t b = 0; b < k * elem; ++b) {
      h ^= chunk[b];
      h *= 0x100000001b3ull;
    }
    done += k;
  }
  return h;
}

static void describe_exponent(char* buf, size_t size, double p) {
  if (isinf(p)) {
    snprintf(buf, size, "L-infinity");
  } else if (p == 1.0) {
    snprintf(buf, size, "L1");
  } else if (p == 2.0) {
    snprintf(buf, size, "L2");
  } else {
    snprintf(buf, size, "Lp (p = %g)", p);
  }
}

/* Why libmpcf ran where it did, as the summary says it. */
static const char* reason_text(mpcf_backend_reason reason) {
  switch (reason) {
    case MPCF_REASON_REQUESTED: return "";
    case MPCF_REASON_AUTO_THRESHOLD_MET: return " (auto: at least the CUDA threshold of merge steps)";
    case MPCF_REASON_AUTO_BELOW_THRESHOLD: return " (auto: below the CUDA threshold)";
    case MPCF_REASON_AUTO_NO_CUDA_BUILD: return " (auto: libmpcf was built without CUDA)";
    case MPCF_REASON_AUTO_NO_DEVICE: return " (auto: no CUDA device)";
    case MPCF_REASON_CPU_ONLY: return " (libmpcf computes this on the CPU only)";
  }
  return "";
}

void print_summary(FILE* f, const cli_args* a, const result* r, const run_info* info) {
  const char* dtype = cli_dtype_name(a->dtype);
  if (info->example) {
    fprintf(f, "mpcf %s on the example dataset (give a FILE to use your own data)\n", a->cmd_name);
  } else {
    fprintf(f, "mpcf %s\n", a->cmd_name);
  }
  const csv_pcfs* sets[2] = {info->x, info->y};
  const int nsets = two_inputs(a) ? 2 : 1;
  for (int s = 0; s < nsets; ++s) {
    const csv_pcfs* c = sets[s];
    const char* label = nsets == 1 ? "input" : (s == 0 ? "input X" : "input Y");
    fprintf(f, "  %-12s %s\n", label, info->input_names[s]);
    fprintf(f, "  %-12s n = %" PRIu64 " functions, %" PRIu64
               " breakpoints (min %" PRIu64 ", mean %.1f, max %" PRIu64 " per function)\n",
            "", c->n, c->total, c->min_m, (double)c->total / (double)c->n, c->max_m);
  }

  char what[96];
  char exponent[32];
  describe_exponent(exponent, sizeof exponent, a->p);
  if (computes_kernel(a)) {
    snprintf(what, sizeof what, "L2 inner products");
  } else if (a->cmd == CMD_NORM) {
    snprintf(what, sizeof what, "%s norms", exponent);
  } else if (a->cmd == CMD_KNN) {
    snprintf(what, sizeof what, "%" PRIu64 " nearest neighbours (%s distance)", a->k, exponent);
  } else {
    snprintf(what, sizeof what, "%s distances", exponent);
  }
  char window[96];
  if (a->window_set) {
    snprintf(window, sizeof window, "window [%g, %g)", a->window_a, a->window_b);
  } else {
    snprintf(window, sizeof window, "whole real line");
  }
  fprintf(f, "  %-12s %s, %s, %s\n", "computed", what, window, dtype);

  const char* layout = "";
  if (a->cmd == CMD_PDIST || a->cmd == CMD_KERNEL) {
    layout = a->layout == MPCF_LAYOUT_DENSE
                 ? ", dense n x n"
                 : (a->layout == MPCF_LAYOUT_CONDENSED ? ", condensed (SciPy pdist order)"
                                                       : ", packed lower triangle");
  }
  char shape[64];
  if (r->ndim == 2) {
    snprintf(shape, sizeof shape, "(%" PRIu64 ", %" PRIu64 ")", r->shape[0], r->shape[1]);
  } else {
    snprintf(shape, sizeof shape, "(%" PRIu64 ",)", r->shape[0]);
  }
  fprintf(f, "  %-12s %" PRIu64 " values, shape %s%s\n", "result", r->count, shape, layout);

  const mpcf_task_info* t = &info->task;
  char backend[512];
  if (t->backend == MPCF_BACKEND_CUDA) {
    int w = snprintf(backend, sizeof backend, "cuda, %d device%s (", t->device_count,
                     t->device_count == 1 ? "" : "s");
    for (int k = 0; k < t->device_count && k < MPCF_TASK_INFO_MAX_DEVICES; ++k) {
      if (w > 0 && (size_t)w < sizeof backend) {
        w += snprintf(backend + w, sizeof backend - (size_t)w, "%s%d", k ? ", " : "", t->devices[k]);
      }
    }
    if (w > 0 && (size_t)w < sizeof backend) snprintf(backend + w, sizeof backend - (size_t)w, ")");
  } else {
    snprintf(backend, sizeof backend, "cpu, %d thread%s", (int)t->threads, t->threads == 1 ? "" : "s");
  }
  fprintf(f, "  %-12s %s%s\n", "backend", backend, reason_text(t->reason));
  fprintf(f, "  %-12s read %.3f s, compute %.3f s\n", "time", info->read_seconds, t->seconds);
  if (t->seconds > 0.0) {
    fprintf(f, "  %-12s %.0f (%.3g merge steps/s)\n", "merge steps", t->merge_steps,
            t->merge_steps / t->seconds);
  } else {
    fprintf(f, "  %-12s %.0f\n", "merge steps", t->merge_steps);
  }
  double sum = 0.0;
  for (uint64_t k = 0; k < r->count; ++k) sum += result_at(r, k);
  fprintf(f, "  %-12s sum = %.17g, fnv1a64 = %016" PRIx64 "\n", "checksum", sum, result_hash(r));
  if (a->output == NULL) {
    fprintf(f, "  %-12s none (write the result with -o FILE.npy or -o FILE.csv)\n", "output");
  } else {
    fprintf(f, "  %-12s %s\n", "output", strcmp(a->output, "-") == 0 ? "<stdout>" : a->output);
  }
}
