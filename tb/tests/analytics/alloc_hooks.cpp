// Counting replacements of the global operator new/delete for test_analytics
// (the steady-state test proves the analyzer allocates nothing per packet).
// Kept in their own file, as tb/tests/topology/alloc_count.cpp is: where the
// bodies are visible to callers, GCC flags the malloc/free pairing behind
// new/delete (-Wmismatched-new-delete).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

std::atomic<bool> g_count_allocs{false};
std::atomic<uint64_t> g_allocs{0};

void* operator new(std::size_t n) {
  if (g_count_allocs) ++g_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
