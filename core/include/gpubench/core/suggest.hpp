// "Did you mean": the known names nearest to one a user typed, for the errors that refuse a name
// (a command, a flag, a catalog entry, a workload, a benchmark id, a spec, a --set key).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

// The names of `known` a user most likely meant by `given`, best first, at most `at_most`; none
// when nothing is near. Letter case is ignored. In order of preference:
//  1. a name equal to `given` but for case ("DGX-H100" -> "dgx-h100");
//  2. the names that start with `given`, when it is 3 or more characters and few do ("h100" ->
//     "h100-nvl-94gb", "h100-pcie-80gb", "h100-sxm5-80gb"), nearest in length first;
//  3. the names that hold `given` whole, or that `given` holds with less than as much again
//     added, when it is 3 or more characters and few do ("p5.48xlarge" -> "aws-p5.48xlarge",
//     "dgx-h100.json" -> "dgx-h100");
//  4. the names within a few edits (insert, delete, replace, swap two neighbours) of `given`:
//     none for 1 character, 1 edit up to 5 characters, 2 up to 8, else 3 ("siz" -> "size",
//     "resnet5O" -> "resnet50"), all those at the least distance.
[[nodiscard]] std::vector<std::string> nearest_names(std::string_view given,
                                                     const std::vector<std::string>& known,
                                                     std::size_t at_most = 3);

// The end of a refusal: "; did you mean 'size'?", "; did you mean 'a' or 'b'?", or "" when no name
// is near. `prefix` goes before each name as the user would type it ("catalog:").
[[nodiscard]] std::string did_you_mean(std::string_view given,
                                       const std::vector<std::string>& known,
                                       std::string_view prefix = {});

// The known names for a refusal: all of them, comma-separated, when there are at most
// `listed_up_to`; else how to list them ("45 names: gpubench list --names catalog"), so that a
// refusal stays one readable line.
[[nodiscard]] std::string known_names(const std::vector<std::string>& known,
                                      std::string_view listing_command,
                                      std::size_t listed_up_to = 12);

// Damerau-Levenshtein distance (optimal string alignment), ignoring ASCII case: the edits that
// turn `a` into `b`, a swap of two neighbouring characters counting one.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace gpubench
