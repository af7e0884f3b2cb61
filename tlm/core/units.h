// Units carried in configuration: rates, sizes, times.
// Values are kept as exact integers: bits/s, bytes, picoseconds.
//
// Accepted text: DIGITS[.DIGITS] then an optional single space then a unit,
// e.g. "100Gbps", "2.5Gbps", "100 Gbps", "0.5us". Unit names are
// case-sensitive exactly as listed ("100gbps" is an error suggesting "Gbps").
// A unit is always required, except for a bare zero ("0"), which is 0 in any
// kind. Rejected: a sign ("-1us", "+1us"), exponents, other whitespace, a
// result that is not a whole number of the base unit ("1.5ps"), and values
// above UINT64_MAX. Every error message lists the accepted units.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rocesim::core {

// "100Gbps" -> 100000000000. Units: bps, Kbps, Mbps, Gbps, Tbps (decimal).
// Decimal mantissas are accepted ("2.5Gbps") if the result is a whole number of bits/s.
// On failure returns false and sets err to a one-line explanation naming the accepted units.
bool parse_rate(std::string_view text, uint64_t& bps, std::string& err);
// "16MiB" -> 16777216. Units: B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024).
// The result must be a whole number of bytes.
bool parse_size(std::string_view text, uint64_t& bytes, std::string& err);
// "2us" -> 2000000 (ps). Units: ps, ns, us, ms, s, h. The result must be a whole number of ps.
bool parse_time(std::string_view text, uint64_t& ps, std::string& err);

// Canonical text that parses back to the same value, using the largest unit that
// keeps the number an integer (100000000000 -> "100Gbps", 1536 -> "1536B" or "1.5KiB"
// is not produced: only integers), e.g. format_time(5000) == "5ns".
std::string format_rate(uint64_t bps);
std::string format_size(uint64_t bytes);
std::string format_time(uint64_t ps);

}  // namespace rocesim::core
