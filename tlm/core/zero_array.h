// A fixed-size array of trivially copyable T whose elements start as all
// zero bits and whose pages become resident only where written: the LIFO
// free list keeps reusing the same cells, so an array with an element per
// buffer cell costs resident memory only for the cells in use. Used for
// per-cell state the chip keeps (the queue manager's next-cell pointers, the
// packet buffer's block index).
//
// An array of kMapBytes or more is an anonymous private mapping of its own,
// whose pages the kernel hands out zero on first touch, whatever the
// allocator does: glibc serves a calloc from its heap, and clears it there,
// once its mmap threshold has risen above the size (it rises to the size of
// each mapped block freed, e.g. after core::trim_systemc_temp_heap gave back
// libsystemc's 3 MiB). Smaller arrays come from calloc.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

namespace rocesim::core {

template <typename T>
class ZeroArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "ZeroArray holds plain data only");

 public:
  static constexpr size_t kMapBytes = 64 * 1024;

  ZeroArray() = default;
  explicit ZeroArray(size_t n) : m_n(n) {
    if (n == 0) return;
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    m_bytes = n * sizeof(T);
    void* p;
    if (mapped()) {
      p = ::mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
    } else {
      p = std::calloc(n, sizeof(T));
      if (!p) throw std::bad_alloc();
    }
    m_p = static_cast<T*>(p);
  }
  ZeroArray(ZeroArray&& o) noexcept
      : m_p(std::exchange(o.m_p, nullptr)), m_n(std::exchange(o.m_n, 0)), m_bytes(std::exchange(o.m_bytes, 0)) {}
  ZeroArray& operator=(ZeroArray&& o) noexcept {
    if (this != &o) {
      release();
      m_p = std::exchange(o.m_p, nullptr);
      m_n = std::exchange(o.m_n, 0);
      m_bytes = std::exchange(o.m_bytes, 0);
    }
    return *this;
  }
  ZeroArray(const ZeroArray&) = delete;
  ZeroArray& operator=(const ZeroArray&) = delete;
  ~ZeroArray() { release(); }

  size_t size() const { return m_n; }
  // Whether the storage is a mapping of its own (kMapBytes or more).
  bool mapped() const { return m_bytes >= kMapBytes; }
  T& operator[](size_t i) { return m_p[i]; }
  const T& operator[](size_t i) const { return m_p[i]; }

 private:
  void release() {
    if (!m_p) return;
    if (mapped()) ::munmap(m_p, m_bytes);
    else std::free(m_p);
    m_p = nullptr;
  }
  T* m_p = nullptr;
  size_t m_n = 0;
  size_t m_bytes = 0;
};

}  // namespace rocesim::core
