#include "mpcf/core/output_prefault.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace mpcf {

bool prefault_enabled() {
  const char* v = std::getenv("MPCF_OUTPUT_PREFAULT");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

#if defined(__linux__)

namespace {
#ifndef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = 23;  // Linux 5.14 uapi value
#else
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#endif
constexpr std::uintptr_t kHugePage = std::uintptr_t(2) << 20;

std::uintptr_t page_size() {
  static const std::uintptr_t size = [] {
    const long s = sysconf(_SC_PAGESIZE);
    return s > 0 ? static_cast<std::uintptr_t>(s) : std::uintptr_t(4096);
  }();
  return size;
}
}  // namespace

bool is_private_anonymous(const void* p, std::size_t bytes) {
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t end = at + bytes;
  char line[4096];
  bool ok = false;
  // Mappings are listed in address order: walk them while they cover `at`.
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    std::uintptr_t lo = 0, hi = 0;
    char perms[8] = {0};
    unsigned long long offset = 0, inode = 0;
    char dev[32] = {0};
    int pathStart = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %31s %llu %n", &lo, &hi, perms,
                    &offset, dev, &inode, &pathStart) < 6) {
      break;
    }
    if (hi <= at) continue;
    if (lo > at) break;  // a hole
    const char* path = line + pathStart;
    const bool anonymous = inode == 0 && (path[0] == '\n' || path[0] == '\0' ||
                                          std::strncmp(path, "[heap]", 6) == 0 ||
                                          std::strncmp(path, "[anon:", 6) == 0);
    if (!anonymous || perms[1] != 'w' || perms[3] != 'p') break;
    at = hi;
    if (at >= end) {
      ok = true;
      break;
    }
  }
  std::fclose(maps);
  return ok;
}

void OutputPrefault::start(void* p, std::size_t bytes, int threads) {
  if (!threads_.empty() || p == nullptr || bytes < kMinBytes || threads < 1) return;
  if (!prefault_enabled()) return;
  if (!is_private_anonymous(p, bytes)) return;
  // Whole pages inside the buffer (a partial first or last page is left to
  // the writes).
  const std::uintptr_t page = page_size();
  const std::uintptr_t a = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
  if (e <= a) return;
  // Transparent huge pages on the 2 MiB-aligned interior (the system's
  // setting decides whether they are used).
  const std::uintptr_t ha = (a + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t he = e & ~(kHugePage - 1);
  if (he > ha) madvise(reinterpret_cast<void*>(ha), he - ha, MADV_HUGEPAGE);
  begin_ = reinterpret_cast<char*>(a);
  end_ = e - a;
  chunks_ = (end_ + kChunkBytes - 1) / kChunkBytes;
  next_.store(0);
  stop_.store(false);
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(threads), chunks_);
  try {
    for (std::size_t k = 0; k < n; ++k) threads_.emplace_back([this] { run(); });
  } catch (...) {
    stop();  // no thread for it: the writes fault the pages in
  }
}

void OutputPrefault::run() noexcept {
  for (;;) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const std::size_t k = next_.fetch_add(1, std::memory_order_relaxed);
    if (k >= chunks_) return;
    const std::size_t from = k * kChunkBytes;
    const std::size_t len = std::min(kChunkBytes, end_ - from);
    if (madvise(begin_ + from, len, kPopulateWrite) != 0) {
      // EINVAL before Linux 5.14, or out of memory: the writes fault the
      // rest in.
      stop_.store(true, std::memory_order_relaxed);
      return;
    }
  }
}

#else  // not Linux

bool is_private_anonymous(const void*, std::size_t) { return false; }
void OutputPrefault::start(void*, std::size_t, int) {}
void OutputPrefault::run() noexcept {}

#endif

void OutputPrefault::wait() noexcept {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void OutputPrefault::stop() noexcept {
  stop_.store(true, std::memory_order_relaxed);
  wait();
}

}  // namespace mpcf
