// The tests' helper for readers that must refuse their input with a
// core::ConfigError: runs fn and returns the error (a test failure when none
// is thrown), so the test can assert its position, key and reason.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/config.h"

namespace testkit {

inline rocesim::core::ConfigError error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const rocesim::core::ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError thrown";
  return rocesim::core::ConfigError("", "", "");
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace testkit
