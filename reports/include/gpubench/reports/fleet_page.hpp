// fleet.html (`gpubench fleet --html`): the fleet check as one self-contained page.
#pragma once

#include <string>

#include "gpubench/acceptance/fleet.hpp"

namespace gpubench::reports {

[[nodiscard]] std::string render_fleet_page(const acceptance::fleet_report& fleet);

}  // namespace gpubench::reports
