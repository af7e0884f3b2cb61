// A growable FIFO ring buffer. It grows by doubling and never shrinks, so once
// warm a FIFO of packets costs no heap allocation per element (std::deque
// allocates and frees blocks as it moves). Its storage is allocated at the
// first push, `initial` elements (rounded up to a power of two): a model has
// thousands of rings that never hold anything (a MAC's pause updates per
// priority on a port that never receives a PFC frame).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace rocesim::core {

template <typename T>
class Ring {
 public:
  explicit Ring(size_t initial = 16) : m_initial(round_up(initial)) {}

  bool empty() const { return m_size == 0; }
  size_t size() const { return m_size; }
  T& front() { return m_buf[m_head]; }
  const T& front() const { return m_buf[m_head]; }
  T& back() { return m_buf[(m_head + m_size - 1) & (m_buf.size() - 1)]; }
  // i-th element from the front.
  T& operator[](size_t i) { return m_buf[(m_head + i) & (m_buf.size() - 1)]; }
  const T& operator[](size_t i) const { return m_buf[(m_head + i) & (m_buf.size() - 1)]; }

  void push_back(const T& v) {
    if (m_size == m_buf.size()) grow();
    m_buf[(m_head + m_size) & (m_buf.size() - 1)] = v;
    ++m_size;
  }
  void pop_front() {
    m_head = (m_head + 1) & (m_buf.size() - 1);
    --m_size;
  }
  void clear() { m_head = m_size = 0; }
  size_t capacity() const { return m_buf.size(); }  // 0 until the first push

 private:
  static size_t round_up(size_t n) {
    size_t p = 1;
    while (p < n) p <<= 1;
    return p;
  }
  void grow() {
    std::vector<T> next(m_buf.empty() ? m_initial : m_buf.size() * 2);
    for (size_t i = 0; i < m_size; ++i) next[i] = std::move((*this)[i]);
    m_buf.swap(next);
    m_head = 0;
  }
  std::vector<T> m_buf;
  size_t m_head = 0, m_size = 0;
  size_t m_initial;
};

}  // namespace rocesim::core
