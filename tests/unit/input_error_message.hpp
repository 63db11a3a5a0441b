// What an action says when it refuses its input: the input_error's message, or "(accepted)".
#pragma once

#include <functional>
#include <string>

#include "gpubench/core/errors.hpp"

namespace gpubench::testing {

inline std::string input_error_message(const std::function<void()>& action) {
  try {
    action();
  } catch (const input_error& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace gpubench::testing
