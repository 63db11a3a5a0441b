// Small benchmark definitions for testing the engine without real hardware.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"

namespace gpubench::testing {

// Counts calls; "sleeps" a fixed manual time per iteration; can fail on demand.
struct fake_behaviour {
  double seconds_per_iteration = 1e-3;
  double bytes_per_iteration = 1e6;
  bool throw_in_constructor = false;
  int throw_on_iteration = -1;  // the call number (0-based) that throws, -1 for none
  bool verification_passes = true;
  std::shared_ptr<int> calls = std::make_shared<int>(0);
};

class fake_instance : public instance {
 public:
  explicit fake_instance(fake_behaviour behaviour) : behaviour_(std::move(behaviour)) {
    if (behaviour_.throw_in_constructor) {
      throw std::runtime_error("fake: constructor failed");
    }
  }
  [[nodiscard]] work work_per_iteration() const override {
    return work{.bytes_read = behaviour_.bytes_per_iteration};
  }
  std::optional<double> run_iteration() override {
    if (*behaviour_.calls == behaviour_.throw_on_iteration) {
      ++*behaviour_.calls;
      throw std::runtime_error("fake: iteration failed");
    }
    ++*behaviour_.calls;
    return behaviour_.seconds_per_iteration;
  }
  [[nodiscard]] verification verify() override {
    return {behaviour_.verification_passes,
            behaviour_.verification_passes ? "all good" : "3 wrong"};
  }

 private:
  fake_behaviour behaviour_;
};

inline benchmark_definition fake_definition(const std::string& id, fake_behaviour behaviour = {}) {
  benchmark_definition def(id);
  def.add_metric("GBps", metric_kind::bandwidth, units::GBps)
      .set_timing(timing::manual)
      .set_factory([behaviour](const context&, const axis_values&) {
        return std::make_unique<fake_instance>(behaviour);
      });
  return def;
}

inline context empty_context() {
  return context(system_info{}, run_options{});
}

}  // namespace gpubench::testing
