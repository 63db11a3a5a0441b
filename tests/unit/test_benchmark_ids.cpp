// Every benchmark id the model, the report and the specs read figures from is one the registry
// has: a renamed benchmark cannot silently leave a figure unread or a rule unchecked.
#include <catch2/catch.hpp>

#include "gpubench/acceptance/validate.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/model/hardware.hpp"
#include "gpubench/reports/report.hpp"

using namespace gpubench;

namespace {
bool registered(const std::string& id_or_prefix) {
  for (const benchmark_definition* def : registry::global().all()) {
    if (id_or_prefix.ends_with('.') ? def->id().starts_with(id_or_prefix)
                                    : def->id() == id_or_prefix) {
      return true;
    }
  }
  return false;
}
}  // namespace

TEST_CASE("the model's figure sources name registered benchmarks", "[ids]") {
  const auto ids = model::figure_source_benchmarks();
  CHECK(ids.size() >= 10);
  for (const auto& id : ids) {
    INFO(id);
    CHECK(registered(id));
  }
}

TEST_CASE("the report's percent-of-peak rules name registered benchmarks", "[ids]") {
  const auto ids = reports::peak_rule_benchmarks();
  CHECK_FALSE(ids.empty());
  for (const auto& id : ids) {
    INFO(id);
    CHECK(registered(id));
  }
}

TEST_CASE("every shipped spec's figure rules name registered benchmarks", "[ids]") {
  const auto names = acceptance::spec_names();
  CHECK(names.size() >= 30);
  std::size_t rules = 0;
  for (const auto& name : names) {
    const acceptance::spec s = acceptance::load_spec(name);
    for (const acceptance::figure_rule& rule : s.figures) {
      INFO(name << ": " << rule.name);
      CHECK(registered(rule.benchmark));
      ++rules;
    }
  }
  CHECK(rules > names.size());
}

TEST_CASE("every metric declares its unit and direction, and old files read them the same",
          "[ids]") {
  for (const benchmark_definition* def : registry::global().all()) {
    for (const metric_spec& m : def->metrics()) {
      INFO(def->id() << " " << m.name);
      // Results written before metrics carried units are read through this table: it must say
      // what the benchmarks declare.
      const auto known = known_metric_unit(m.name);
      REQUIRE(known);
      CHECK(known->unit == m.unit.unit);
      CHECK(known->direction == m.unit.direction);
    }
  }
}
