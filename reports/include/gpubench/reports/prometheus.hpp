// The node_exporter textfile format (Prometheus text exposition format 0.0.4) of a results file
// or of a fleet check, for the monitoring people already run. Metric names and labels:
// docs/deploy/README.md.
#pragma once

#include <string>

#include "gpubench/acceptance/validate.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/results.hpp"

namespace gpubench::reports {

// Every measured figure (one gauge per benchmark and metric: gpubench_<id>_<metric>), each
// result's status, and the run's build and time; with a validation of it, the verdict, the
// rule counts and every rule that did not pass, by name.
[[nodiscard]] std::string prometheus_text(const results_document& doc,
                                          const acceptance::validation* validation = nullptr);
// A gpubench.fleet/1 document (gpubench fleet --json): the fleet's verdict, each node's, and each
// figure that stands out.
[[nodiscard]] std::string prometheus_fleet_text(const json& fleet);

}  // namespace gpubench::reports
