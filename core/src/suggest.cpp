#include "gpubench/core/suggest.hpp"

#include <algorithm>
#include <cctype>

#include "gpubench/core/text.hpp"

namespace gpubench {

namespace {

std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// How far a typo may be from the name it meant: one slip in a short name, more in a long one;
// never all of it ("s" is not a slip of "a").
std::size_t edits_allowed(std::size_t length) {
  if (length <= 1) return 0;
  if (length <= 5) return 1;
  if (length <= 8) return 2;
  return 3;
}

// Nearer in length first, then in alphabetical order: the order a reader scans the suggestions.
void order_by_length(std::vector<std::string>& names, std::size_t length) {
  const auto gap = [length](const std::string& name) {
    return name.size() > length ? name.size() - length : length - name.size();
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return gap(a) != gap(b) ? gap(a) < gap(b) : a < b;
  });
}

}  // namespace

std::size_t edit_distance(std::string_view a_text, std::string_view b_text) {
  const std::string a = lower_case(a_text);
  const std::string b = lower_case(b_text);
  // Three rows of the table: the swap of two neighbours looks two rows back.
  std::vector<std::size_t> before(b.size() + 1);
  std::vector<std::size_t> previous(b.size() + 1);
  std::vector<std::size_t> current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t replace = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::vector<std::string> nearest_names(std::string_view given,
                                       const std::vector<std::string>& known, std::size_t at_most) {
  const std::string typed = lower_case(given);
  if (typed.empty() || at_most == 0) return {};
  for (const std::string& name : known) {
    if (lower_case(name) == typed) return {name};
  }
  // The start of a name ("h100" of "h100-sxm5-80gb", not of "dgx-h100"), when few names start so.
  std::vector<std::string> starting;
  if (typed.size() >= 3) {
    for (const std::string& name : known) {
      if (lower_case(name).starts_with(typed)) starting.push_back(name);
    }
  }
  if (!starting.empty() && starting.size() <= at_most) {
    order_by_length(starting, typed.size());
    return starting;
  }
  // A part of the name ("p5.48xlarge" of "aws-p5.48xlarge"), or the name with something added
  // ("dgx-h100.json"): the added part must not be most of what was typed ("truncate" is not "run").
  std::vector<std::string> holding;
  if (typed.size() >= 3) {
    for (const std::string& name : known) {
      const std::string candidate = lower_case(name);
      const bool part = candidate.find(typed) != std::string::npos;
      const bool added = candidate.size() >= 3 && candidate.size() * 2 >= typed.size() &&
                         typed.find(candidate) != std::string::npos;
      if (part || added) holding.push_back(name);
    }
  }
  if (!holding.empty() && holding.size() <= at_most) {
    order_by_length(holding, typed.size());
    return holding;
  }
  std::vector<std::string> nearest;
  std::size_t best = edits_allowed(typed.size());
  for (const std::string& name : known) {
    const std::size_t distance = edit_distance(typed, name);
    if (distance > best) continue;
    if (distance < best) {
      best = distance;
      nearest.clear();
    }
    if (distance == best) nearest.push_back(name);
  }
  if (nearest.size() > at_most) return {};  // many equally near: none of them is a good guess
  order_by_length(nearest, typed.size());
  return nearest;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& known,
                         std::string_view prefix) {
  const std::vector<std::string> names = nearest_names(given, known);
  if (names.empty()) return {};
  std::string text = "; did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text.append("'").append(prefix).append(names[i]).append("'");
  }
  return text + "?";
}

std::string known_names(const std::vector<std::string>& known, std::string_view listing_command,
                        std::size_t listed_up_to) {
  if (known.size() <= listed_up_to) return join(known);
  return std::to_string(known.size()) + " names: " + std::string(listing_command);
}

}  // namespace gpubench
