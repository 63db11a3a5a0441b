// Every measurement the layers above read (vocabulary/measurements) names a benchmark the registry
// has and a metric that benchmark declares, and every shipped spec's figure rules do too: a
// renamed benchmark or metric cannot silently leave a figure unread or a rule unchecked.
#include <catch2/catch.hpp>

#include "gpubench/acceptance/validate.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/vocabulary/measurements.hpp"

using namespace gpubench;

namespace {
// The definitions a query's id (or family, "nccl.*") names.
std::vector<const benchmark_definition*> named_by(const vocabulary::query& q) {
  std::vector<const benchmark_definition*> out;
  for (const benchmark_definition* def : registry::global().all()) {
    if (q.matches_id(def->id())) out.push_back(def);
  }
  return out;
}

void check_query(const vocabulary::query& q) {
  INFO(q.benchmark << " " << q.metric);
  const auto defs = named_by(q);
  REQUIRE_FALSE(defs.empty());
  // A family's metric need only be declared by one member (nccl.* busbw_GBps); an id's by it.
  bool declared = false;
  for (const benchmark_definition* def : defs) declared |= def->find_metric(q.metric) != nullptr;
  CHECK(declared);
  for (const vocabulary::axis_filter& f : q.where) {
    bool has_axis = false;
    for (const benchmark_definition* def : defs) has_axis |= def->find_axis(f.axis) != nullptr;
    INFO("axis " << f.axis);
    CHECK(has_axis);
  }
}
}  // namespace

TEST_CASE("every named measurement reads a registered benchmark's declared metric", "[ids]") {
  const auto all = vocabulary::measurements::all();
  CHECK(all.size() >= 15);
  for (const vocabulary::query* q : all) check_query(*q);
}

TEST_CASE("every shipped spec's figure rules name registered benchmarks and metrics", "[ids]") {
  const auto names = acceptance::spec_names();
  CHECK(names.size() >= 30);
  std::size_t rules = 0;
  for (const auto& name : names) {
    const acceptance::spec s = acceptance::load_spec(name);
    for (const acceptance::figure_rule& rule : s.figures) {
      INFO(name << ": " << rule.name);
      check_query(rule.measured);
      ++rules;
    }
  }
  CHECK(rules > names.size());
}

TEST_CASE("a query for a benchmark the registry lacks is caught", "[ids]") {
  // The check above can fail: a misspelt id matches no definition.
  CHECK(named_by(vocabulary::query{.benchmark = "hbm.cpy", .metric = "GBps"}).empty());
  CHECK(named_by(vocabulary::query{.benchmark = "nccl.*", .metric = "busbw_GBps"}).size() >= 5);
}
