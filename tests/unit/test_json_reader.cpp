#include <catch2/catch.hpp>

#include <sstream>
#include <stdexcept>

#include "gpubench/core/json_reader.hpp"
#include "input_error_message.hpp"

using namespace gpubench;
using gpubench::testing::input_error_message;

TEST_CASE("json_reader names the file, the JSON path and what was expected", "[json]") {
  const json doc = json::parse(
      R"({"a": {"b": [1, "x", -3, 1e300]}, "n": 2.5, "s": "t", "big": 18446744073709551615})");
  const json_reader root(doc, "f.json");
  const auto items = root.member("a").elements("b");
  REQUIRE(items.size() == 4);
  CHECK(items[1].path() == "/a/b/1");
  CHECK(input_error_message([&] { (void)root.member("a").member("c"); }) ==
        "f.json: /a/c: expected a value (the field is missing)");
  CHECK(input_error_message([&] { (void)root.get_int("n", 0, 10); }) ==
        "f.json: /n: expected an integer from 0 to 10, got the number 2.5");
  CHECK(input_error_message([&] { (void)root.get_int("big", 0, 10); }) ==
        "f.json: /big: expected an integer from 0 to 10, got the number 18446744073709551615");
  CHECK(input_error_message([&] { (void)root.get_string("n"); }) ==
        "f.json: /n: expected a string, got the number 2.5");
  CHECK(input_error_message([&] { (void)root.get_number("s", 0, 1); }) ==
        "f.json: /s: expected a number from 0 to 1, got the string \"t\"");
  CHECK(input_error_message([&] { (void)root.get_number("n", 0, 1); }) ==
        "f.json: /n: expected a number from 0 to 1, got the number 2.5");
  CHECK(input_error_message([&] {
          (void)root.expect_object({"a", "n"});
        }) == "f.json: /s: expected no member named 's' (known: a, n)");
  CHECK(root.get_number("n", 0, 10) == 2.5);
  CHECK_FALSE(root.find_string("absent"));
  CHECK(json_path("/x", "a/b~c") == "/x/a~1b~0c");
}

TEST_CASE("a JSON parse error names the line and column where the parser stopped", "[json]") {
  CHECK(input_error_message([] {
          (void)parse_json_text("{\n  \"a\": 1,\n  \"b\": ]\n}", "w.json");
        }) == "w.json: expected valid JSON (parse error at line 3, column 8)");
  CHECK(input_error_message([] { (void)parse_json_text("\x01", "w.json"); }) ==
        "w.json: expected valid JSON (parse error at line 1, column 1)");
  CHECK(input_error_message([] { (void)parse_json_text("{\"a\": 1", "w.json"); }) ==
        "w.json: expected valid JSON (parse error at line 1, column 8)");
}

TEST_CASE("write_json_text writes what the whole document's dump gives, an element at a time",
          "[json]") {
  // Elements that are objects, nested arrays, strings holding newlines and the member's own
  // text, and numbers; in batches of 2,048 (each split over the cores), the last one partial.
  const auto element = [](std::size_t i) {
    return json{{"i", i},
                {"text", "line\n  \"rules\": []" + std::to_string(i)},
                {"nested", json::array({i, json::object(), json::array({1.5, nullptr})})},
                {"empty", json::array()}};
  };
  for (const std::size_t count :
       {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{5000}}) {
    json head = {{"schema", "t/1"},
                 {"inner", {{"rules", json::array()}}},
                 {"rules", json::array()},
                 {"after", "x"}};
    json whole = head;
    for (std::size_t i = 0; i < count; ++i) whole["rules"].push_back(element(i));
    for (const int indent : {-1, 0, 2, 4}) {
      json streamed_head = head;
      if (indent <= 0) streamed_head.erase("after");  // the member must come last
      json expected = whole;
      if (indent <= 0) expected.erase("after");
      std::ostringstream out;
      write_json_text(out, streamed_head, "rules", count, element, indent, 2048);
      INFO("count " << count << ", indent " << indent);
      CHECK(out.str() == json_text(expected, indent));
    }
  }
  std::ostringstream out;
  const json no_member = {{"a", 1}};
  CHECK_THROWS_AS(write_json_text(out, no_member, "rules", 1, [](std::size_t) { return json(); }),
                  std::logic_error);
  // Compact, the member must be the last one: elsewhere it is refused, not misplaced.
  const json not_last = {{"rules", json::array()}, {"after", 1}};
  CHECK_THROWS_AS(write_json_text(out, not_last, "rules", 1, [](std::size_t) { return json(); }),
                  std::logic_error);
}
