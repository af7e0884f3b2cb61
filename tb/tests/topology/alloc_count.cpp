// Replaces the global operator new/delete of the test binary with counting
// versions, so a test can prove a code path never allocates. Kept in its own
// file: where the replacement bodies are visible to callers, GCC flags the
// malloc/free pairing behind new/delete (-Wmismatched-new-delete).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace rocesim::topology::test_support {
std::atomic<uint64_t> g_allocations{0};
}  // namespace rocesim::topology::test_support

void* operator new(std::size_t n) {
  rocesim::topology::test_support::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
