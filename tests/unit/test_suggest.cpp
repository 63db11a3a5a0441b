// "Did you mean": the nearest known names to a typed one (core/suggest.hpp).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpubench/core/suggest.hpp"

using gpubench::did_you_mean;
using gpubench::edit_distance;
using gpubench::known_names;
using gpubench::nearest_names;
using names = std::vector<std::string>;

TEST_CASE("edit distance counts inserts, deletes, replacements and neighbour swaps", "[suggest]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("size", "size") == 0);
  CHECK(edit_distance("siz", "size") == 1);    // insert
  CHECK(edit_distance("sizee", "size") == 1);  // delete
  CHECK(edit_distance("sise", "size") == 1);   // replace
  CHECK(edit_distance("siez", "size") == 1);   // swap of neighbours
  CHECK(edit_distance("SIZE", "size") == 0);   // case ignored
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
}

TEST_CASE("nearest names: case, a part of the name, then a few edits", "[suggest]") {
  const names commands{"run", "list", "info", "size", "calibrate", "report", "compare"};
  CHECK(nearest_names("siz", commands) == names{"size"});
  CHECK(nearest_names("comapre", commands) == names{"compare"});
  CHECK(nearest_names("SIZE", commands) == names{"size"});
  CHECK(nearest_names("listing", commands) == names{"list"});  // the name with something added
  CHECK(nearest_names("nosuch", commands).empty());
  CHECK(nearest_names("", commands).empty());
  CHECK(nearest_names("size", {}).empty());
  // "truncate" holds "run", but most of it is something else.
  CHECK(nearest_names("truncate", commands).empty());

  const names catalog{"aws-p4d.24xlarge",  "aws-p5.48xlarge", "dgx-h100",           "h100-nvl-94gb",
                      "h100-pcie-80gb",    "h100-sxm5-80gb",  "lambda-1x-h100-sxm", "t4",
                      "lambda-8x-h100-sxm"};
  CHECK(nearest_names("p5.48xlarge", catalog) == names{"aws-p5.48xlarge"});
  CHECK(nearest_names("dgx-h100.json", catalog) == names{"dgx-h100"});
  CHECK(nearest_names("dgx-h10", catalog) == names{"dgx-h100"});
  // The start of a name comes before a part of one.
  CHECK(nearest_names("h100-sxm", catalog) == names{"h100-sxm5-80gb"});
  CHECK(nearest_names("h100", catalog) ==
        names{"h100-nvl-94gb", "h100-pcie-80gb", "h100-sxm5-80gb"});
  // Three names hold it: all three, nearest in length first.
  CHECK(nearest_names("100-sxm", catalog) ==
        names{"h100-sxm5-80gb", "lambda-1x-h100-sxm", "lambda-8x-h100-sxm"});
  // More names start with it, and hold it, than are offered: none is a good guess, and none is a
  // few edits away.
  CHECK(nearest_names("h100", catalog, 2).empty());
  // A short typed name is not looked for inside others ("t4" in "aws-p4d...": no).
  CHECK(nearest_names("t5", catalog) == names{"t4"});

  const names presets{"resnet50", "llama2-7b", "llama3-8b", "gpt2-small", "gpt2-large"};
  CHECK(nearest_names("resnet5O", presets) == names{"resnet50"});
  CHECK(nearest_names("resnet5000", presets) == names{"resnet50"});
  CHECK(nearest_names("llama3-7b", presets) == names{"llama2-7b", "llama3-8b"});
  CHECK(nearest_names("bert", presets).empty());
}

TEST_CASE("the allowed edits grow with the length of the name", "[suggest]") {
  // None for one character (any other is one edit away), 1 edit up to 5 characters, 2 up to 8,
  // 3 beyond.
  CHECK(nearest_names("s", {"a", "n"}).empty());
  CHECK(nearest_names("A", {"a", "n"}) == names{"a"});
  CHECK(nearest_names("abxde", {"abcde"}) == names{"abcde"});
  CHECK(nearest_names("axxde", {"abcde"}).empty());
  CHECK(nearest_names("abxxefgh", {"abcdefgh"}) == names{"abcdefgh"});
  CHECK(nearest_names("axxxefgh", {"abcdefgh"}).empty());
  CHECK(nearest_names("abcxxxghij", {"abcdefghij"}) == names{"abcdefghij"});
  CHECK(nearest_names("axxxxfghij", {"abcdefghij"}).empty());
}

TEST_CASE("did you mean: the end of a refusal, with the prefix the user types", "[suggest]") {
  CHECK(did_you_mean("siz", {"size", "run"}) == "; did you mean 'size'?");
  CHECK(did_you_mean("p5.48xlarge", {"aws-p5.48xlarge", "dgx-h100"}, "catalog:") ==
        "; did you mean 'catalog:aws-p5.48xlarge'?");
  CHECK(did_you_mean("ab", {"aa", "ac"}) == "; did you mean 'aa' or 'ac'?");
  CHECK(did_you_mean("abc-x", {"abc-xa", "abc-xb", "abc-xc"}) ==
        "; did you mean 'abc-xa', 'abc-xb' or 'abc-xc'?");
  CHECK(did_you_mean("nosuch", {"size", "run"}).empty());
}

TEST_CASE("known names: listed when few, else how to list them", "[suggest]") {
  CHECK(known_names({"a", "b", "c"}, "gpubench list --names x") == "a, b, c");
  const names many(13, "n");
  CHECK(known_names(many, "gpubench list --names x") == "13 names: gpubench list --names x");
  CHECK(known_names(many, "gpubench list --names x", 13).size() > 13);
}
