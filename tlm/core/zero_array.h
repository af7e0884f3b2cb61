// A fixed-size array of trivially copyable T whose elements start as all
// zero bits, backed by calloc: the OS hands out zero pages lazily, so an
// array with an element per buffer cell costs resident memory only for the
// pages written (the LIFO free list keeps reusing the same cells). Used for
// per-cell state the chip keeps (packet descriptors at head cells).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace rocesim::core {

template <typename T>
class ZeroArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "ZeroArray holds plain data only");

 public:
  ZeroArray() = default;
  explicit ZeroArray(size_t n) : m_p(n ? static_cast<T*>(std::calloc(n, sizeof(T))) : nullptr), m_n(n) {
    if (n && !m_p) throw std::bad_alloc();
  }
  size_t size() const { return m_n; }
  T& operator[](size_t i) { return m_p.get()[i]; }
  const T& operator[](size_t i) const { return m_p.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> m_p;
  size_t m_n = 0;
};

}  // namespace rocesim::core
