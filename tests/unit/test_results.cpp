#include <catch2/catch.hpp>

#include <filesystem>

#include "gpubench/core/detail/results_fast.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/format.hpp"
#include "gpubench/core/json.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/results.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/reports/run_time.hpp"
#include "temp_dir.hpp"

using namespace gpubench;
using gpubench::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

results_document sample_document() {
  results_document doc;
  doc.meta.version = "0.1.0";
  doc.meta.git = "abc123";
  doc.meta.argv = {"gpubench", "run"};
  doc.meta.started = "2026-11-22T10:00:00Z";
  doc.meta.finished = "2026-11-22T10:05:00Z";
  doc.meta.build_type = "Release";
  doc.meta.warnings = {"test warning"};
  doc.system.host = "node-1";
  doc.system.cpu.model = "Test CPU";
  doc.system.cpu.cores = 64;
  doc.system.cpu.caches.push_back({3, "unified", 32u << 20, 2});
  doc.system.memory_bytes = 1ULL << 40;
  gpu_info gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.sm_count = 132;
  gpu.compute_capability = "9.0";
  gpu.pcie = pcie_link_info{5, 16, 5, 16};
  gpu.throttle_reasons = {"gpu_idle"};
  doc.system.gpus.push_back(gpu);
  result ok;
  ok.id = "hbm.copy";
  ok.axes = json{{"gpu", 0}, {"bytes", 1073741824}};
  ok.metrics.emplace_back(
      "GBps", metric_summary(summary{2900.5, 2890, 2910, 0.002, 10}, {"GB/s", better::higher}));
  ok.verified = true;
  ok.info = json{{"timing", "manual"}};
  result skipped;
  skipped.id = "nccl.all_reduce";
  skipped.status = result_status::skipped;
  skipped.reason = "needs 2 or more GPUs; found 1";
  result failed;
  failed.id = "gemm";
  failed.status = result_status::failed;
  failed.error = "CUDA call cudaMalloc failed with cudaErrorMemoryAllocation";
  doc.results = {ok, skipped, failed};
  return doc;
}

}  // namespace

TEST_CASE("a results document survives a JSON round trip unchanged", "[results]") {
  const results_document doc = sample_document();
  const json first = doc;
  const auto back = first.get<results_document>();
  const json second = back;
  CHECK(first == second);
  CHECK(first["schema"] == "gpubench.results/1");
  // The shape docs/schema.md gives gpubench.results/1.
  CHECK(first["results"][0]["metrics"]["GBps"]["median"] == 2900.5);
  CHECK(first["results"][0]["metrics"]["GBps"]["n"] == 10);
  // Each metric carries its unit and which way is better.
  CHECK(first["results"][0]["metrics"]["GBps"]["unit"] == "GB/s");
  CHECK(first["results"][0]["metrics"]["GBps"]["better"] == "higher");
  CHECK(back.results[0].metrics[0].second.unit.unit == "GB/s");
  CHECK(first["results"][1]["status"] == "skipped");
  CHECK(first["results"][1]["reason"] == "needs 2 or more GPUs; found 1");
  CHECK_FALSE(first["results"][1].contains("metrics"));
  CHECK(first["results"][2]["error"].get<std::string>().find("cudaErrorMemoryAllocation") !=
        std::string::npos);
  CHECK(first["system"]["gpus"][0]["pcie"]["max_gen"] == 5);
  CHECK(first["system"]["gpus"][0]["numa_node"].is_null());
  CHECK(first.begin().key() == "schema");  // written first, as documented
}

TEST_CASE("read_results reads what was written and names what is wrong", "[results]") {
  temp_dir dir;
  const fs::path good = dir.path / "good.json";
  write_file_atomically(good, json(sample_document()).dump(1));
  const results_document back = read_results(good);
  CHECK(back.results.size() == 3);
  CHECK(back.system.gpus.at(0).sm_count == 132);

  const auto message_for = [&](const std::string& content) -> std::string {
    const fs::path bad = dir.path / "bad.json";
    write_file_atomically(bad, content);
    try {
      (void)read_results(bad);
    } catch (const input_error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  json doc = sample_document();
  doc["schema"] = "gpubench.results/0";
  CHECK_THAT(message_for(doc.dump()), Catch::EndsWith("/schema: expected \"gpubench.results/1\""));
  doc = sample_document();
  doc["results"][0]["status"] = "great";
  CHECK_THAT(message_for(doc.dump()),
             Catch::Contains("/results/0/status: expected one of ok, skipped, failed"));
  doc = sample_document();
  doc["results"][0]["metrics"]["GBps"]["median"] = "fast";
  CHECK_THAT(message_for(doc.dump()),
             Catch::Contains("/results/0/metrics/GBps/median: expected a number"));
  CHECK_THAT(message_for(""), Catch::Contains("the file is empty"));
  CHECK_THAT(message_for("{\"schema\": "), Catch::Contains("valid JSON"));
  CHECK_THAT(message_for(std::string("\x7f\x45\x4c\x46\x00\x01", 6)),
             Catch::Contains("valid JSON"));
  CHECK_THROWS_AS(read_results(dir.path / "absent.json"), input_error);
  CHECK_THROWS_AS(read_results(dir.path), input_error);
}

TEST_CASE("a results file of megabytes is read into memory mapped for it, as its text reads",
          "[results]") {
  temp_dir dir;
  json doc = sample_document();
  const json one = doc["results"][0];
  // From 4 MiB a file is read into a mapping of its own (core/src/json_file.cpp).
  std::string text;
  while ((text = doc.dump()).size() < (std::size_t{5} << 20)) {
    for (int i = 0; i < 4000; ++i) doc["results"].push_back(one);
  }
  // Ending on a page's last byte: the mapping then has a page of zeroes past the text, where a
  // string read would have exactly the padding and the byte the read that found the end used.
  text.append((4096 - text.size() % 4096) % 4096, ' ');
  REQUIRE(text.size() % 4096 == 0);
  const fs::path big = dir.path / "big.json";
  write_file_atomically(big, text);
  json_file_bytes bytes = read_json_file_bytes(big);
  CHECK(bytes.text() == text);
  CHECK(bytes.room() > json_text_padding + 1);  // mapped, not read into a string
  const results_document read = read_results(big);
  CHECK(read.results.size() == doc["results"].size());
  CHECK(json(read) == json(parse_results(parse_json_text(text, "big.json"), "big.json")));
  json_file_bytes moved = std::move(bytes);
  CHECK(moved.text() == text);
  moved.release();
  CHECK(moved.text().empty());
  // Parsed, its text let go, then declined (another schema): read again for the checked reader,
  // which names what is wrong.
  doc["schema"] = "gpubench.results/0";
  write_file_atomically(big, doc.dump());
  CHECK_THROWS_WITH(read_results(big), Catch::EndsWith("/schema: expected \"gpubench.results/1\""));
  // Not JSON, declined before the text was let go: the checked reader reads that text.
  write_file_atomically(big, text.substr(0, text.size() - 4096));
  CHECK_THROWS_WITH(read_results(big), Catch::Contains("valid JSON"));
}

TEST_CASE("a metric must say its unit and which way is better", "[results]") {
  json doc = sample_document();
  CHECK(parse_results(doc, "new.json").results[0].metrics[0].second.unit.unit == "GB/s");
  // A file from before gpubench recorded units is refused, not read with a guessed direction
  // (a latency read as higher-is-better would be judged backwards).
  json old = doc;
  old["results"][0]["metrics"]["GBps"].erase("better");
  CHECK_THROWS_WITH(parse_results(old, "old.json"),
                    Catch::Contains("/results/0/metrics/GBps") &&
                        Catch::Contains("\"unit\" and \"better\"") &&
                        Catch::Contains("run the benchmarks again"));
  old = doc;
  old["results"][0]["metrics"]["GBps"].erase("unit");
  CHECK_THROWS_AS(parse_results(old, "old.json"), input_error);
  // A direction other than higher or lower is bad input.
  doc["results"][0]["metrics"]["GBps"]["better"] = "sideways";
  CHECK_THROWS_WITH(parse_results(doc, "bad.json"),
                    Catch::Contains("/results/0/metrics/GBps/better"));
}

TEST_CASE("printable shows control characters instead of sending them to the terminal", "[text]") {
  CHECK(printable("plain text, tabs\tand\nlines") == "plain text, tabs\tand\nlines");
  CHECK(printable("a\x1b]0;title\x07z") == "a\\x1b]0;title\\x07z");
  CHECK(printable("carriage\rreturn\x7f") == "carriage\\x0dreturn\\x7f");
  CHECK(printable("C1 \xc2\x9b"
                  "2J") == "C1 \\u009b2J");
  // A lead byte at the very end, and one before a byte that makes no C1 control, stay as they are.
  CHECK(printable("end \xc2") == "end \xc2");
  CHECK(printable("\xc2\xa9\x01") == "\xc2\xa9\\x01");
  // Other UTF-8 stays as it is: a non-breaking space (C2 A0), an accent, a CJK name.
  CHECK(printable("A\xc2\xa0"
                  "caf\xc3\xa9 \xe5\x90\x8d") ==
        "A\xc2\xa0"
        "caf\xc3\xa9 \xe5\x90\x8d");
}

TEST_CASE("a run's times as Unix seconds and its length", "[results]") {
  using reports::unix_seconds;
  CHECK(unix_seconds("1970-01-01T00:00:00Z") == 0);
  CHECK(unix_seconds("2026-01-01T00:10:00Z") == 1767226200);
  CHECK(unix_seconds("2024-02-29T23:59:59.5Z") == Approx(1709251199.5));
  CHECK(unix_seconds("2026-01-01T00:10:00") == 1767226200);
  for (const char* bad : {"", "yesterday", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z",
                          "2026-01-01T00:10:00+02:00", "2026-01-01"}) {
    INFO(bad);
    CHECK_FALSE(unix_seconds(bad));
  }
  run_meta meta;
  meta.started = "2026-01-01T00:00:00Z";
  meta.finished = "2026-01-01T00:10:00Z";
  CHECK(reports::run_seconds(meta) == 600);
  CHECK(reports::run_end_seconds(meta) == 1767226200);
  meta.finished = "";  // interrupted before it could say
  CHECK_FALSE(reports::run_seconds(meta));
  CHECK(reports::run_end_seconds(meta) == 1767225600);
}

namespace {

// Reads `text` with both readers; the fast one may decline, but what it reads the checked one
// reads alike. True when the fast one read it.
bool fast_reader_agrees(const std::string& text) {
  std::optional<json> checked;
  try {
    checked = json(parse_results(parse_json_text(text, "t.json"), "t.json"));
  } catch (const input_error&) {
  }
  const auto fast = detail::parse_results_fast(text, "t.json");
  if (!fast) return false;
  REQUIRE(checked.has_value());
  CHECK(json(*fast) == *checked);
  // What to_json leaves out is read alike too.
  REQUIRE(fast->results.size() == checked->at("results").size());
  const results_document slow = parse_results(parse_json_text(text, "t.json"), "t.json");
  for (std::size_t i = 0; i < slow.results.size(); ++i) {
    CHECK(fast->results[i].reason == slow.results[i].reason);
    CHECK(fast->results[i].error == slow.results[i].error);
    CHECK(fast->results[i].host == slow.results[i].host);
  }
  return true;
}

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

}  // namespace

TEST_CASE("the fast results reader reads what the checked reader reads, and declines the rest",
          "[results]") {
  json doc = sample_document();
  doc["nodes"] = json::array({json{{"host", "n1"}, {"ranks", {0, 1}}, {"system", doc["system"]}}});
  doc["results"][0]["host"] = "n1";
  doc["results"][0]["rank"] = 1;
  doc["results"][0]["wall_s"] = 2.5;
  doc["results"][0]["info"]["name"] = "caf\u00e9 \u2603 \"quoted\" \\ tab\t";
  doc["results"][0]["axes"]["ratio"] = -1.25e-7;
  doc["results"][0]["axes"]["offset"] = -3;
  doc["results"][1]["info"]["big"] = 18446744073709551615ULL;  // unsigned past int64
  // gpubench's own output, compact and indented, is read by the fast reader.
  CHECK(fast_reader_agrees(doc.dump()));
  CHECK(fast_reader_agrees(doc.dump(1)));
  CHECK(fast_reader_agrees(json_text(doc, 2)));

  const std::string text = doc.dump();
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    const auto at = changed.find(from);
    REQUIRE(at != std::string::npos);
    return changed.replace(at, from.size(), to);
  };
  // What nlohmann reads differently, or only the checked reader names: declined.
  CHECK_FALSE(fast_reader_agrees(with("\"id\":\"hbm.copy\"", "\"id\":\"a\",\"id\":\"hbm.copy\"")));
  CHECK_FALSE(fast_reader_agrees(with("\"offset\":-3", "\"offset\":123456789012345678901234")));
  CHECK_FALSE(fast_reader_agrees(with("\"offset\":-3", "\"offset\":1e999")));
  CHECK_FALSE(fast_reader_agrees(with("\"offset\":-3", "\"offset\":\"\\udc00\"")));
  CHECK_FALSE(fast_reader_agrees(with("\"offset\":-3", "\"offset\":\"\\ud800x\"")));
  CHECK_FALSE(fast_reader_agrees(with("\"status\":\"ok\"", "\"status\":\"great\"")));
  CHECK_FALSE(fast_reader_agrees(with("\"median\":2900.5", "\"median\":1e301")));
  CHECK_FALSE(fast_reader_agrees(with("\"n\":10", "\"n\":10.0")));
  CHECK_FALSE(fast_reader_agrees(with("\"rank\":1", "\"rank\":1.5")));
  CHECK_FALSE(fast_reader_agrees(with("\"wall_s\":2.5", "\"wall_s\":-1")));
  CHECK_FALSE(fast_reader_agrees(with("\"verified\":true", "\"verified\":1")));
  CHECK_FALSE(fast_reader_agrees(text + "x"));
  CHECK_FALSE(fast_reader_agrees("\xef\xbb\xbf" + text));  // a byte-order mark
  CHECK_FALSE(fast_reader_agrees("  "));
  // A repeated key inside axes or info is read as nlohmann reads it: first place, last value.
  CHECK(fast_reader_agrees(with("\"offset\":-3", "\"offset\":-3,\"ratio\":7")));
  CHECK(fast_reader_agrees(with("\"offset\":-3", "\"offset\":-0,\"z\":-0.0,\"e\":1E-400")));
  // Nesting: as deep as check_json_depth allows is read alike; one more is refused by the
  // checked reader with its message, and declined here.
  // The top level, results, a result and info are 4 levels.
  CHECK(
      fast_reader_agrees(with("\"offset\":-3", "\"offset\":" + nested_arrays(max_json_depth - 4))));
  const std::string too_deep =
      with("\"offset\":-3", "\"offset\":" + nested_arrays(max_json_depth - 3));
  CHECK_FALSE(fast_reader_agrees(too_deep));
  CHECK_THROWS_WITH(parse_results_text(too_deep, "deep.json"), Catch::Contains("nested at most"));
  // parse_results_text names what is wrong as the checked reader does.
  CHECK_THROWS_WITH(parse_results_text(with("\"status\":\"ok\"", "\"status\":\"great\""), "t.json"),
                    Catch::Contains("/results/0/status: expected one of ok, skipped, failed"));
}

TEST_CASE("a result's info read from its file is viewed where it lies, as if converted",
          "[results]") {
  // The same info built in memory and read back by the fast reader: the two views answer alike.
  const std::string info_text =
      R"({"m": 8192, "big": 18446744073709551615, "neg": -3, "half": 2.5, "whole": 4.0,
          "name": "bf16", "on": true, "none": null, "list": [1, "two", {"x": 3}],
          "twice": 1, "twice": 2})";
  const json built = json::parse(info_text);
  results_document doc = sample_document();
  const std::string text = json(doc).dump();
  const std::string with_info = text.substr(0, text.rfind("\"id\"")) + R"("info": )" + info_text +
                                ", " + text.substr(text.rfind("\"id\""));
  // The fast reader's, where info stays in its document (the checked reader's is converted).
  const auto fast = detail::parse_results_fast(with_info, "info.json");
  REQUIRE(fast);
  const results_document& read = *fast;
  const result_info& stored = read.results.back().info;
  const result_info in_memory(built);
  CHECK(stored.get() == built);
  for (const json_view v : {stored.view(), in_memory.view()}) {
    CHECK(v.is_object());
    CHECK(v.size() == 10);
    CHECK(v["m"].integer() == 8192);
    CHECK(v["m"].number() == 8192.0);
    CHECK_FALSE(v["big"].integer());  // past int64
    CHECK(v["neg"].integer() == -3);
    CHECK_FALSE(v["half"].integer());
    CHECK(v["whole"].integer() == 4);
    CHECK(v["name"].text() == "bf16");
    CHECK_FALSE(v["name"].number());
    CHECK(v["on"].boolean() == true);
    CHECK(v["none"].exists());
    CHECK_FALSE(v["none"].number());
    CHECK_FALSE(v["absent"].exists());
    CHECK_FALSE(v["m"]["deeper"].exists());
    CHECK(v["twice"].integer() == 2);  // nlohmann keeps a repeated key's last value
    const std::vector<json_view> items = v["list"].items();
    REQUIRE(items.size() == 3);
    CHECK(items[1].text() == "two");
    CHECK(items[2]["x"].integer() == 3);
    CHECK(items[2].to_json() == json{{"x", 3}});
    CHECK(v.value("name", std::string("?")) == "bf16");
    CHECK(v.value("name", 1.5) == 1.5);  // not a number: the fallback, not a throw
  }
  // Changing a stored info makes it the result's own; the file's document is not touched.
  result copy = read.results.back();
  copy.info.edit()["m"] = 1;
  CHECK(copy.info.view()["m"].integer() == 1);
  CHECK(stored.view()["m"].integer() == 8192);
  // An unchanged copy shares the stored conversion: the info is the document's, not converted.
  const result shared = read.results.back();
  CHECK(&shared.info.get() == &stored.get());
}

TEST_CASE("a CSV cell: quoted where it must be, a formula shown as text", "[unit][results]") {
  CHECK(csv_field("gemm") == "gemm");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  // A formula gets a leading ', inside the quotes where the cell needs them; a number stays one.
  CHECK(csv_field("=1+1") == "'=1+1");
  CHECK(csv_field("=SUM(A1,B1)") == "\"'=SUM(A1,B1)\"");
  CHECK(csv_field("-3.5") == "-3.5");
  CHECK(csv_field("-x") == "'-x");
  // Appended cells are the same text.
  std::string row = "x,";
  append_csv_field(row, "=SUM(A1,B1)");
  CHECK(row == "x,\"'=SUM(A1,B1)\"");
}

TEST_CASE("a GPU pair axis is two different indices, anything else is refused", "[unit][results]") {
  CHECK(parse_gpu_pair("0>1") == std::pair{0, 1});
  CHECK(parse_gpu_pair("7>12") == std::pair{7, 12});
  // Read from results files, which are input: none of these may throw (fuzz.results found
  // "0>G" ending validate through std::stoi).
  for (const char* bad : {"0>G", "0>0", ">1", "1>", "-1>2", "1>2>3", "1 >2", "01x>2", "", "1"}) {
    INFO(bad);
    CHECK_FALSE(parse_gpu_pair(bad));
  }
}
