#include "core/systemc_pools.h"

#include <systemc>

namespace rocesim::core {

void trim_systemc_temp_heap(size_t bytes) {
  // initialize() deletes the old storage (its own new[]) and takes a new,
  // zero-filled one of `bytes`.
  if (sc_core::sc_temp_heap.length() != bytes) sc_core::sc_temp_heap.initialize(bytes);
}

}  // namespace rocesim::core
