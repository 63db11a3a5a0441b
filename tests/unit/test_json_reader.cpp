#include <catch2/catch.hpp>

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
