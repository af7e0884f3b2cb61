// SystemC's own load-time pools, sized for the model.
#pragma once

#include <cstddef>

namespace rocesim::core {

// libsystemc 2.3.4 sets up, in its static initialisation, a heap of 3 MiB
// (sc_core::sc_temp_heap, sysc/utils/sc_temporary.h) for the temporaries of
// concatenations of arbitrary-precision integers (sc_dt::sc_concatref) and
// zero-fills it, so every process that loads the library carries those
// 3 MiB resident. The model never concatenates sc_dt integers; this gives
// the heap back and keeps `bytes` of it. The heap hands out its storage in
// a ring (an allocation past its end starts again at its beginning), so a
// smaller heap still serves every concatenation whose temporaries fit:
// 64 KiB is 524 288 bits of operands. Call it before any such concatenation
// (rocesim calls it first thing in sc_main).
inline constexpr size_t kSystemcTempHeapBytes = 64 * 1024;
void trim_systemc_temp_heap(size_t bytes = kSystemcTempHeapBytes);

}  // namespace rocesim::core
