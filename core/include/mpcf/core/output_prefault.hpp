// Gets a caller's output buffer ready while the computation starts, so that
// a result written into freshly allocated memory (np.empty, malloc) is not
// slowed down by the page faults of its first writes: the writes of a
// result fault its pages in one at a time (the kernel zeroes each one), on
// the threads that store the results.
//
// OutputPrefault asks for transparent huge pages on the 2 MiB-aligned
// interior of the buffer (madvise MADV_HUGEPAGE, as NumPy does for its own
// large arrays) and faults the pages in front to back with
// MADV_POPULATE_WRITE (Linux >= 5.14) on background threads, 8 MiB at a
// time. MADV_POPULATE_WRITE never changes what the pages hold, so it runs
// alongside the writes of the results. Pages already there cost a page-table
// walk. Only for private anonymous memory of at least kMinBytes (a file
// mapping, e.g. an np.memmap output, is left alone: populating it would read
// the file); anywhere else (other systems, older kernels) it does nothing
// and the writes fault the pages in as before. Best effort: a failing
// madvise only ends the prefaulting.
//
// OFF by default; the environment variable MPCF_OUTPUT_PREFAULT=1 turns it
// on (read at every start). Measured on a 16-core H100 host (Linux 6.18,
// THP "madvise"), a fresh 763 MiB pdist result from Python took 2.8-3.0x
// the time of a touched one with it, 1.5-1.8x without: the background
// MADV_POPULATE_WRITE slowed the writers (also with 2, 4 or 16 threads,
// without the huge-page advice, or stopped instead of awaited at the end),
// and on that host's CPU path it cost 12% too; only on a 2-core VM did it
// help (1.17x -> 1.06x). See README, "Fresh outputs".
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace mpcf {

class OutputPrefault {
 public:
  // Buffers smaller than this are left alone (their faults cost little).
  static constexpr std::size_t kMinBytes = std::size_t(8) << 20;
  // Bytes per madvise call (four 2 MiB huge pages).
  static constexpr std::size_t kChunkBytes = std::size_t(8) << 20;

  OutputPrefault() = default;
  OutputPrefault(const OutputPrefault&) = delete;
  OutputPrefault& operator=(const OutputPrefault&) = delete;
  ~OutputPrefault() { stop(); }

  // Starts on up to `threads` background threads (at most one per chunk)
  // and returns at once. Does nothing for a small, non-anonymous or
  // already-prefaulting buffer, or where the system has no
  // MADV_POPULATE_WRITE.
  void start(void* p, std::size_t bytes, int threads);
  // Waits for the background threads to finish.
  void wait() noexcept;
  // Makes the background threads stop after their current chunk, and waits.
  void stop() noexcept;
  // Whether start() started threads (for tests).
  bool started() const { return !threads_.empty(); }

 private:
  void run() noexcept;

  std::vector<std::thread> threads_;
  char* begin_ = nullptr;  // page-aligned start
  std::size_t chunks_ = 0;
  std::size_t end_ = 0;    // bytes from begin_
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stop_{false};
};

// True when MPCF_OUTPUT_PREFAULT is "1" (off by default).
bool prefault_enabled();

// Whether [p, p + bytes) lies in private anonymous mappings only (Linux:
// /proc/self/maps; false elsewhere).
bool is_private_anonymous(const void* p, std::size_t bytes);

}  // namespace mpcf
