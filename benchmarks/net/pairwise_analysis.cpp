#include "gpubench/benchmarks/net/pairwise_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "gpubench/core/format.hpp"

namespace gpubench::pairwise {

std::vector<std::vector<std::pair<int, int>>> rounds(int nodes) {
  if (nodes < 2) return {};
  // An odd count gets a stand-in node; whoever meets it sits the round out.
  const int n = nodes % 2 == 0 ? nodes : nodes + 1;
  std::vector<std::vector<std::pair<int, int>>> out;
  for (int r = 0; r < n - 1; ++r) {
    std::vector<std::pair<int, int>> pairs;
    // Node n - 1 stays put and meets node r; the others pair up around the circle of n - 1.
    const auto add = [&](int a, int b) {
      if (a >= nodes || b >= nodes) return;
      pairs.emplace_back(std::min(a, b), std::max(a, b));
    };
    add(n - 1, r);
    for (int k = 1; k < n / 2; ++k) {
      add((r + k) % (n - 1), (r - k + (n - 1)) % (n - 1));
    }
    out.push_back(std::move(pairs));
  }
  return out;
}

namespace {

// Linear interpolation between the closest ranks (numpy's default percentile).
double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

double median(std::vector<double> values) {
  return quantile(std::move(values), 0.5);
}

// A link i -> j (or pair {i, j}) is off when `off(value, typical)` says so. Nodes with more than
// half of their links off are named; the off links they do not explain are listed.
struct verdict_parts {
  std::vector<int> nodes;
  std::vector<std::pair<int, int>> links;
};

template <class Off>
verdict_parts read_links(const matrix& m, bool directed, double typical, Off off) {
  const int n = static_cast<int>(m.size());
  std::vector<int> off_count(static_cast<std::size_t>(n), 0);
  std::vector<std::pair<int, int>> off_links;
  for (int i = 0; i < n; ++i) {
    for (int j = directed ? 0 : i + 1; j < n; ++j) {
      if (i == j) continue;
      if (!off(m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)], typical)) continue;
      off_links.emplace_back(i, j);
      ++off_count[static_cast<std::size_t>(i)];
      ++off_count[static_cast<std::size_t>(j)];
    }
  }
  verdict_parts out;
  const int links_per_node = (directed ? 2 : 1) * (n - 1);
  if (n >= 3) {
    for (int i = 0; i < n; ++i) {
      if (2 * off_count[static_cast<std::size_t>(i)] > links_per_node) out.nodes.push_back(i);
    }
  }
  for (const auto& link : off_links) {
    const bool explained = std::find_if(out.nodes.begin(), out.nodes.end(), [&](int node) {
                             return node == link.first || node == link.second;
                           }) != out.nodes.end();
    if (!explained) out.links.push_back(link);
  }
  return out;
}

std::vector<double> off_diagonal(const matrix& m, bool directed) {
  std::vector<double> values;
  for (std::size_t i = 0; i < m.size(); ++i) {
    for (std::size_t j = directed ? 0 : i + 1; j < m.size(); ++j) {
      if (i != j) values.push_back(m[i][j]);
    }
  }
  return values;
}

}  // namespace

json findings(const matrix& GBps, const matrix& latency_us, const std::vector<std::string>& names) {
  const std::size_t n = names.size();
  if (GBps.size() != n || latency_us.size() != n) {
    throw std::invalid_argument("pairwise matrices and node names differ in size");
  }
  // The reference a link is held to: the upper quartile of the rates (lower quartile of the
  // latencies). A bad node touches 2/n of the links, so up to half of them with four nodes and
  // two thirds with three, which would drag a median down with it.
  const double typical_GBps = quantile(off_diagonal(GBps, true), 0.75);
  const double typical_us = quantile(off_diagonal(latency_us, false), 0.25);
  const auto slow = read_links(GBps, true, typical_GBps, [](double v, double typical) {
    return v < slow_link_fraction * typical;
  });
  const auto late = read_links(latency_us, false, typical_us, [](double v, double typical) {
    return v > slow_latency_factor * typical;
  });
  const auto name = [&](int i) { return names.at(static_cast<std::size_t>(i)); };
  const auto at = [](const matrix& m, int i, int j) {
    return m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  };

  json out{{"median_link_GBps", median(off_diagonal(GBps, true))},
           {"median_latency_us", median(off_diagonal(latency_us, false))},
           {"reference_link_GBps", typical_GBps},
           {"reference_latency_us", typical_us},
           {"slow_link_below", slow_link_fraction},
           {"slow_latency_above", slow_latency_factor},
           {"slow_nodes", json::array()},
           {"slow_links", json::array()},
           {"slow_latency_nodes", json::array()},
           {"slow_latency_pairs", json::array()}};
  std::vector<std::string> problems;
  for (const int node : slow.nodes) {
    std::vector<double> own;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == static_cast<std::size_t>(node)) continue;
      own.push_back(at(GBps, node, static_cast<int>(j)));
      own.push_back(at(GBps, static_cast<int>(j), node));
    }
    const double own_median = median(own);
    out["slow_nodes"].push_back({{"node", name(node)}, {"median_GBps", own_median}});
    problems.push_back(name(node) + ": its links run at " + format_number(own_median) +
                       " GB/s, the reference link " + format_number(typical_GBps) +
                       " GB/s (its NIC, cable or switch port)");
  }
  for (const auto& [i, j] : slow.links) {
    const double v = at(GBps, i, j);
    out["slow_links"].push_back(
        {{"from", name(i)}, {"to", name(j)}, {"GBps", v}, {"of_median", v / typical_GBps}});
    problems.push_back(name(i) + " -> " + name(j) + ": " + format_number(v) + " GB/s, " +
                       format_number(100 * v / typical_GBps) + "% of the reference link");
  }
  for (const int node : late.nodes) {
    out["slow_latency_nodes"].push_back(name(node));
    problems.push_back(name(node) + ": round trips more than " +
                       format_number(slow_latency_factor) + "x the reference (" +
                       format_number(typical_us) + " us)");
  }
  for (const auto& [i, j] : late.links) {
    const double v = at(latency_us, i, j);
    out["slow_latency_pairs"].push_back(
        {{"nodes", {name(i), name(j)}}, {"latency_us", v}, {"of_median", v / typical_us}});
    problems.push_back(name(i) + " <-> " + name(j) + ": latency " + format_number(v) + " us, " +
                       format_number(v / typical_us) + "x the reference");
  }
  if (problems.empty()) {
    out["verdict"] = "every link within " + format_number(100 * slow_link_fraction) +
                     "% of the reference link (" + format_number(typical_GBps) + " GB/s, " +
                     format_number(typical_us) + " us)";
  } else {
    std::string text;
    for (const auto& p : problems) text += (text.empty() ? "" : "; ") + p;
    out["verdict"] = text;
  }
  return out;
}

}  // namespace gpubench::pairwise
