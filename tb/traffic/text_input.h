// Internal: line/field splitting and exact number parsing for the CDF and
// flow-file readers, so both report errors at the same FILE:LINE:COL.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rocesim::traffic::detail {

struct Field {
  std::string_view text;
  uint32_t col;  // 1-based byte column
};

struct Line {
  uint32_t number;              // 1-based physical line
  std::vector<Field> fields;
  uint32_t end_col;             // column just after the last field
};

// Whole file; throws core::ConfigError(path, key_path, "cannot open file: ...").
std::string read_whole_file(const std::string& path, const std::string& key_path);
// Lines with at least one field: '\r' and '#' comments removed, fields
// separated by spaces or tabs. The views point into `text`.
std::vector<Line> split_lines(std::string_view text);
std::string where(const std::string& file, uint32_t line, uint32_t col);

// Each returns "" on success, else the reason (without the field name).
// Decimal number: [-](digits[.digits]|.digits)[(e|E)[+-]digits]; "-" is reported as negative.
std::string parse_nonneg_real(std::string_view t, double& v);
// Non-negative integer (digits only).
std::string parse_u64(std::string_view t, uint64_t& v);
// Non-negative decimal seconds -> ps, exact, rounded half up.
std::string parse_seconds_ps(std::string_view t, uint64_t& ps);

}  // namespace rocesim::traffic::detail
