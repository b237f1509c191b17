// OutputPrefault: faults a fresh anonymous buffer in without changing a
// byte of it, also while another thread writes into it; leaves small
// buffers and file mappings alone; it is off unless MPCF_OUTPUT_PREFAULT=1.
// (Linux; where the kernel lacks MADV_POPULATE_WRITE, before 5.14, the
// residency checks are reported as skipped.)
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

extern "C" {
#include <cmocka.h>
}

#include "mpcf/core/output_prefault.hpp"

using namespace mpcf;

namespace {

constexpr std::size_t kBytes = std::size_t(40) << 20;  // 40 MiB: 5 chunks

char* fresh_buffer(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  return static_cast<char*>(p);
}

// Pages of [p, p + bytes) that are resident.
std::size_t resident_pages(char* p, std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((bytes + page - 1) / page);
  assert_int_equal(mincore(p, bytes, v.data()), 0);
  std::size_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

bool kernel_populates() {
  char* p = fresh_buffer(1 << 16);
  const bool ok = madvise(p, 1 << 16, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(p, 1 << 16);
  return ok;
}

void test_prefaults_without_changing_content(void**) {
  char* p = fresh_buffer(kBytes);
  // Written before: the first page, one in the middle, the last byte.
  std::memset(p, 0x5a, 4096);
  p[kBytes / 2] = 7;
  p[kBytes - 1] = 9;
  OutputPrefault pf;
  pf.start(p + 100, kBytes - 100, 3);  // an unaligned start
  assert_true(pf.started());
  pf.wait();
  for (std::size_t k = 0; k < 4096; ++k) assert_int_equal(p[k], 0x5a);
  assert_int_equal(p[kBytes / 2], 7);
  assert_int_equal(p[kBytes - 1], 9);
  std::size_t zeros = 0;
  for (std::size_t k = 4096; k < kBytes - 1; ++k) zeros += p[k] == 0;
  assert_int_equal(zeros, kBytes - 4096 - 2);
  if (kernel_populates()) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    assert_int_equal(resident_pages(p, kBytes), kBytes / page);
  } else {
    std::printf("[ SKIPPED  ] residency: this kernel has no MADV_POPULATE_WRITE\n");
  }
  munmap(p, kBytes);
}

void test_concurrent_writes_survive(void**) {
  char* p = fresh_buffer(kBytes);
  OutputPrefault pf;
  pf.start(p, kBytes, 4);
  // Meanwhile, every 64th byte written from here (front to back, as a
  // writer would).
  std::thread writer([p] {
    for (std::size_t k = 0; k < kBytes; k += 64) p[k] = static_cast<char>(1 + (k / 64) % 100);
  });
  writer.join();
  pf.wait();
  for (std::size_t k = 0; k < kBytes; k += 64) {
    if (p[k] != static_cast<char>(1 + (k / 64) % 100)) fail_msg("byte %zu lost its value", k);
  }
  munmap(p, kBytes);
}

void test_left_alone(void**) {
  // Small buffers.
  char* small = fresh_buffer(OutputPrefault::kMinBytes - 4096);
  OutputPrefault a;
  a.start(small, OutputPrefault::kMinBytes - 4096, 2);
  assert_false(a.started());
  munmap(small, OutputPrefault::kMinBytes - 4096);
  // A file mapping (an np.memmap output): populating it would read the file.
  std::FILE* f = std::tmpfile();
  assert_non_null(f);
  assert_int_equal(ftruncate(fileno(f), static_cast<off_t>(kBytes)), 0);
  void* m = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
  assert_true(m != MAP_FAILED);
  assert_false(is_private_anonymous(m, kBytes));
  OutputPrefault b;
  b.start(m, kBytes, 2);
  assert_false(b.started());
  munmap(m, kBytes);
  std::fclose(f);
  // A range that runs past its mapping.
  char* p = fresh_buffer(kBytes);
  assert_true(is_private_anonymous(p, kBytes));
  munmap(p + kBytes / 2, kBytes / 2);
  assert_false(is_private_anonymous(p, kBytes));
  munmap(p, kBytes / 2);
  // Off by default and with any value but "1".
  char* q = fresh_buffer(kBytes);
  unsetenv("MPCF_OUTPUT_PREFAULT");
  OutputPrefault c;
  c.start(q, kBytes, 2);
  assert_false(c.started());
  setenv("MPCF_OUTPUT_PREFAULT", "0", 1);
  OutputPrefault d;
  d.start(q, kBytes, 2);
  assert_false(d.started());
  setenv("MPCF_OUTPUT_PREFAULT", "1", 1);
  munmap(q, kBytes);
}

}  // namespace

int main() {
  setenv("MPCF_OUTPUT_PREFAULT", "1", 1);  // off by default; these test it switched on
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prefaults_without_changing_content),
      cmocka_unit_test(test_concurrent_writes_survive),
      cmocka_unit_test(test_left_alone),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
