// The frame of every HTML page gpubench writes (report and compare): head, style, escaping tables.
#pragma once

#include <string>
#include <vector>

namespace gpubench::reports {

// A table whose every cell is escaped text.
class html_table {
 public:
  html_table(std::vector<std::string> header, std::string id);
  // `emphasis`: 1 for a cell drawn bold (the limit, the best choice).
  void row(const std::vector<std::string>& cells, const std::vector<int>& emphasis = {});
  [[nodiscard]] std::string render() const;

 private:
  std::string id_;
  std::vector<std::string> header_;
  std::string body_;
};

class html_page {
 public:
  explicit html_page(const std::string& title);
  void heading(int level, const std::string& text);
  void raw(const std::string& html);  // already-escaped markup
  [[nodiscard]] std::string finish() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace gpubench::reports
