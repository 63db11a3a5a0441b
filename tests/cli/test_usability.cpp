// The command line knows what was meant: `help COMMAND`, the nearest name for a misspelt one,
// shell completion from the binary's own lists, one line per reason for benchmarks that cannot run
// here, and a training budget per workload in compare.
#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "one_line_error.hpp"
#include "process.hpp"

using namespace gpubench::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A shell word in single quotes.
std::string quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What bash's completion function offers for `words` (words[0] is gpubench; the last word is the
// one under the cursor), the words split at ':' and '=' as bash splits them (COMP_WORDBREAKS).
std::vector<std::string> bash_complete(const std::vector<std::string>& typed,
                                       const std::vector<std::string>& env = {}) {
  std::vector<std::string> words{gpubench_path()};
  for (const std::string& word : typed) {
    std::string part;
    for (const char c : word) {
      if (c == ':' || c == '=') {
        if (!part.empty()) words.push_back(part);
        words.emplace_back(1, c);
        part.clear();
      } else {
        part += c;
      }
    }
    if (!part.empty() || word.empty()) words.push_back(part);
  }
  // A word that ends in ':' or '=' leaves the cursor on that ':' or '=', as bash does.
  std::string script = "source " +
                       quoted(std::string(GPUBENCH_SOURCE_DIR) + "/app/completion/gpubench.bash") +
                       "\nCOMP_WORDS=(";
  for (const auto& w : words) script += quoted(w) + " ";
  script += ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) +
            "\n_gpubench\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const process_result r = run_program({"/bin/bash", "--norc", "-c", script}, env);
  INFO("bash: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  std::vector<std::string> replies = lines_of(r.out);
  std::sort(replies.begin(), replies.end());
  return replies;
}

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

}  // namespace

TEST_CASE("help COMMAND prints that command's help, help alone gpubench's", "[cli]") {
  const process_result size = run_gpubench({"help", "size"});
  INFO(size.err);
  CHECK(size.exit_code == 0);
  CHECK_THAT(size.out, Catch::Contains("Usage: gpubench size") && Catch::Contains("--workload") &&
                           Catch::Contains("--hardware"));
  // The same text as `size --help`.
  CHECK(size.out == run_gpubench({"size", "--help"}).out);
  const process_result top = run_gpubench({"help"});
  CHECK(top.exit_code == 0);
  CHECK(top.out == run_gpubench({"--help"}).out);
  CHECK_THAT(top.out, Catch::Contains("compare") && Catch::Contains("help"));
  // A name that is no command: one line, exit 2, the nearest command when one is near.
  check_one_line_error(run_gpubench({"help", "nosuch"}), "help nosuch: expected a command (run, ");
  check_one_line_error(run_gpubench({"help", "siz"}), "did you mean 'size'?");
}

TEST_CASE("a misspelt name is refused with the nearest one", "[cli]") {
  // A command, and a flag of a command (asked before "--workload is required").
  check_one_line_error(run_gpubench({"siz", "--workload", "resnet50"}),
                       "got 'siz'; did you mean 'size'?");
  check_one_line_error(run_gpubench({"size", "--workoad", "resnet50"}),
                       "size --workoad: expected a flag of size (see gpubench help size); did you "
                       "mean '--workload'?");
  check_one_line_error(run_gpubench({"size", "extra", "--workoad", "resnet50"}),
                       "did you mean '--workload'?");
  check_one_line_error(run_gpubench({"compare", "catalog:t4", "catalog:l4", "--token", "1e9"}),
                       "did you mean '--tokens'?");
  // A catalog entry by the end of its name: the suggestion, not the 45 names.
  const process_result catalog =
      run_gpubench({"size", "--workload", "resnet50", "--hardware", "catalog:p5.48xlarge"});
  check_one_line_error(catalog, "did you mean 'catalog:aws-p5.48xlarge'?");
  CHECK_THAT(catalog.err,
             Catch::Contains("gpubench list --names catalog") && !Catch::Contains("dgx1-v100"));
  check_one_line_error(run_gpubench({"size", "--workload", "resnet50", "--set", "gpu.model=t5"}),
                       "did you mean 't4'?");
  check_one_line_error(run_gpubench({"size", "--workload", "resnet50", "--set", "cpu.core=4"}),
                       "did you mean 'cpu.cores'?");
  // A workload, a model preset in a workload file, a benchmark id, an axis, a spec.
  check_one_line_error(run_gpubench({"size", "--workload", "resnet5O"}),
                       "did you mean 'resnet50'?");
  temp_dir dir;
  const fs::path workload = dir.path / "w.json";
  json doc = json::parse(
      read_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/workloads/llama3-8b.json"));
  doc["model"]["preset"] = "llama3-8B";
  write_file(workload, doc.dump());
  check_one_line_error(run_gpubench({"size", "--workload", workload.string()}),
                       "/model/preset: expected one of");
  check_one_line_error(run_gpubench({"size", "--workload", workload.string()}),
                       "did you mean 'llama3-8b'?");
  check_one_line_error(run_gpubench({"run", "--only", "hbm.cpy"}), "did you mean 'hbm.copy'?");
  check_one_line_error(run_gpubench({"run", "--axis", "host.membw:thread=2"}),
                       "did you mean 'threads'?");
  check_one_line_error(
      run_gpubench({"validate", std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json",
                    "--spec", "h100-sxm5"}),
      "did you mean 'h100-sxm5-80gb'?");
  // Nothing near: no guess.
  const process_result far = run_gpubench({"run", "--only", "gpu.teleport"});
  check_one_line_error(far, "got 'gpu.teleport'");
  CHECK_THAT(far.err, !Catch::Contains("did you mean"));
}

TEST_CASE("list --names: the names completion offers, one a line", "[cli]") {
  const process_result commands = run_gpubench({"list", "--names", "commands"});
  CHECK(commands.exit_code == 0);
  const auto names = lines_of(commands.out);
  CHECK(has(names, "size"));
  CHECK(has(names, "help"));
  const auto flags = lines_of(run_gpubench({"list", "--names", "flags:compare"}).out);
  CHECK(has(flags, "--tokens"));
  CHECK(has(flags, "--samples"));
  const auto catalog = lines_of(run_gpubench({"list", "--names", "catalog"}).out);
  CHECK(has(catalog, "aws-p5.48xlarge"));
  CHECK(has(catalog, "t4"));
  CHECK(has(lines_of(run_gpubench({"list", "--names", "benchmarks"}).out), "host.membw"));
  CHECK(has(lines_of(run_gpubench({"list", "--names", "presets"}).out), "resnet50"));
  check_one_line_error(run_gpubench({"list", "--names", "benchmark"}),
                       "did you mean 'benchmarks'?");
  check_one_line_error(run_gpubench({"list", "--names", "flags:siz"}), "did you mean 'size'?");
}

TEST_CASE("bash completion: commands, flags, and the names each flag takes", "[cli]") {
  CHECK(bash_complete({"si"}) == std::vector<std::string>{"size"});
  CHECK(has(bash_complete({""}), "compare"));
  CHECK(has(bash_complete({"help", "com"}), "compare"));
  CHECK(bash_complete({"size", "--wor"}) == std::vector<std::string>{"--workload"});
  CHECK(has(bash_complete({"compare", "a.json", "--to"}), "--tokens"));
  CHECK(bash_complete({"size", "--workload", "resn"}) == std::vector<std::string>{"resnet50"});
  // bash puts a reply in place of what follows the last ':' or '='.
  CHECK(bash_complete({"size", "--hardware", "catalog:aws-p5."}) ==
        std::vector<std::string>{"aws-p5.48xlarge"});
  CHECK(has(bash_complete({"size", "--hardware", "catalog:aws-p5"}), "aws-p5en.48xlarge"));
  CHECK(has(bash_complete({"size", "--hardware", "catalog:"}), "dgx-h100"));
  CHECK(bash_complete({"size", "--hardware=catalog:dgx-h1"}) ==
        std::vector<std::string>{"dgx-h100"});
  CHECK(has(bash_complete({"compare", "catalog:dgx-"}), "dgx-h100"));
  CHECK(bash_complete({"run", "--only", "gemm,host.m"}) ==
        std::vector<std::string>{"gemm,host.membw"});
  CHECK(bash_complete({"run", "--axis", "host.me"}) == std::vector<std::string>{"host.membw:"});
  CHECK(bash_complete({"size", "--set", "cpu.cor"}) == std::vector<std::string>{"cpu.cores="});
  CHECK(bash_complete({"size", "--set", "gpu.model=t"}) == std::vector<std::string>{"t4"});
  CHECK(has(bash_complete({"compare", "x", "--tokens", "llama"}), "llama3-8b="));
  CHECK(has(bash_complete({"validate", "r.json", "--spec", "h100-s"}), "h100-sxm5-80gb"));
  CHECK(bash_complete({"size", "--precision", "fp"}) == std::vector<std::string>{"fp32", "fp8"});

  // The lists come from the binary: a catalog entry added to the configs is offered as it is.
  temp_dir dir;
  const fs::path configs = dir.path / "configs";
  fs::copy(std::string(GPUBENCH_SOURCE_DIR) + "/configs", configs, fs::copy_options::recursive);
  fs::copy_file(configs / "hardware/gpus/t4.json", configs / "hardware/gpus/zz-new-gpu.json");
  CHECK(bash_complete({"size", "--hardware", "catalog:zz"},
                      {"GPUBENCH_CONFIG_DIR=" + configs.string()}) ==
        std::vector<std::string>{"zz-new-gpu"});
}

TEST_CASE("zsh completion parses and offers the same names", "[cli]") {
  const std::string zsh = "/usr/bin/zsh";
  if (!fs::exists(zsh)) {
    WARN("zsh is not installed (make test installs it): the zsh completion is not checked");
    return;
  }
  const std::string file = std::string(GPUBENCH_SOURCE_DIR) + "/app/completion/_gpubench";
  const process_result parsed = run_program({zsh, "-n", file});
  INFO(parsed.err);
  CHECK(parsed.exit_code == 0);
  // Outside a completion widget, compadd and _files are stand-ins that print what they are given.
  const auto complete = [&](const std::string& words) {
    const std::string script =
        "compadd() { local array=0; while (( $# )); do case $1 in -a) array=1;; -S|-P) shift;; "
        "--) shift; print -rl -- \"$@\"; return;; -*) ;; *) if (( array )); then print -rl -- "
        "\"${(@P)1}\"; else print -r -- $1; fi;; esac; shift; done }\n"
        "_files() { print -r -- '<files>' }\ncompset() { return 1 }\n"
        "words=(" +
        quoted(gpubench_path()) + " " + words +
        ")\nCURRENT=${#words}\n"
        "source " +
        quoted(file) + "\n";
    const process_result r = run_program({zsh, "-f", "-c", script});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    return lines_of(r.out);
  };
  CHECK(has(complete("si"), "size"));
  CHECK(has(complete("size --"), "--workload"));
  const auto hardware = complete("size --hardware ''");
  CHECK(has(hardware, "catalog:aws-p5.48xlarge"));
  CHECK(has(hardware, "<files>"));
  CHECK(has(complete("run --only ''"), "host.membw"));
  CHECK(has(complete("help ''"), "compare"));
}

TEST_CASE("benchmarks that cannot run here are one line per reason, each still in the results",
          "[cli]") {
  temp_dir dir;
  const fs::path out = dir.path / "out";
  // CUDA_VISIBLE_DEVICES hides any GPU: gemm and the hbm benchmarks cannot run, whatever the build.
  const process_result r = run_gpubench(
      {"run", "--only", "gemm,hbm.*,host.membw", "--axis", "host.membw:array_bytes=16MiB", "--axis",
       "host.membw:kernel=copy", "--axis", "host.membw:threads=1", "--out", out.string()},
      {}, {"CUDA_VISIBLE_DEVICES="});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string ids = "gemm, hbm.add, hbm.copy, hbm.read, hbm.scale, hbm.triad, hbm.write (7)";
  std::size_t grouped = 0;
  for (const std::string& line : lines_of(r.err)) {
    CHECK_THAT(line, !Catch::Contains("hbm.copy: skipped"));  // not a line each
    if (line.starts_with("skipped, ")) {
      CHECK_THAT(line, Catch::EndsWith(": " + ids));
      ++grouped;
    }
  }
  CHECK(grouped == 1);
  CHECK_THAT(r.err, Catch::Contains("host.membw kernel=copy"));
  // The summary on stdout: the same line after the table.
  CHECK_THAT(r.out, Catch::Contains(": " + ids + "\n"));
  // One record per benchmark, as before.
  const json results = json::parse(read_file(out / "results.json"));
  std::size_t skipped = 0;
  for (const json& result : results.at("results")) {
    if (result.at("status") == "skipped") ++skipped;
  }
  CHECK(skipped == 7);
  CHECK(results.at("results").size() == 8);
}

TEST_CASE("compare: a budget per workload, tokens only for workloads that count them", "[cli]") {
  const std::vector<std::string> machines{"compare", "catalog:aws-p5.48xlarge",
                                          "catalog:aws-p4d.24xlarge"};
  const auto compare = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args = machines;
    args.insert(args.end(), more.begin(), more.end());
    return run_gpubench(args);
  };
  const auto workload = [](const json& doc, const std::string& name) {
    for (const json& w : doc.at("workloads")) {
      if (w.at("workload") == name) return w;
    }
    FAIL("no workload " << name);
    return json();
  };
  const double tokens_per_sequence = 4096;  // llama2-7b's sequence length
  // Each workload its own budget, in its own unit; one without a budget has none.
  process_result r = compare({"--workload", "llama2-7b,resnet50,bert-large", "--tokens",
                              "llama2-7b=1e12", "--samples", "resnet50=1.2e8", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json doc = json::parse(r.out);
  const json llama = workload(doc, "llama2-7b");
  CHECK(llama.at("budget_samples").get<double>() == Approx(1e12 / tokens_per_sequence));
  CHECK(llama.at("budget").at("unit") == "tokens");
  CHECK(llama.at("budget").at("given") == "--tokens llama2-7b=1e12");
  const json resnet = workload(doc, "resnet50");
  CHECK(resnet.at("budget_samples").get<double>() == Approx(1.2e8));
  const double rate = resnet.at("machines").at(0).at("predicted_samples_per_s").get<double>();
  CHECK(resnet.at("machines").at(0).at("budget_hours").get<double>() ==
        Approx(1.2e8 / rate / 3600));
  CHECK(workload(doc, "bert-large").at("budget").is_null());
  CHECK(workload(doc, "bert-large").at("budget_samples").is_null());
  CHECK(doc.at("options").at("budgets").size() == 2);

  // A budget for every workload counts tokens only where the workload does, and a workload's own
  // budget takes over from it.
  r = compare({"--workload", "llama2-7b,resnet50,bert-large", "--tokens", "2e12", "--tokens",
               "llama2-7b=1e12", "--json"});
  REQUIRE(r.exit_code == 0);
  doc = json::parse(r.out);
  CHECK(doc.at("options").at("tokens") == 2e12);
  CHECK(workload(doc, "llama2-7b").at("budget_samples").get<double>() ==
        Approx(1e12 / tokens_per_sequence));
  CHECK(workload(doc, "bert-large").at("budget").at("amount") == 2e12);
  CHECK(workload(doc, "resnet50").at("budget").is_null());
  CHECK_THAT(workload(doc, "resnet50").at("budget_note").get<std::string>(),
             Catch::Contains("--samples resnet50=N"));
  r = compare({"--workload", "llama2-7b", "--tokens", "llama2-7b=1e12"});
  CHECK_THAT(r.out, Catch::Contains("(--tokens llama2-7b=1e12)"));

  // Refused, one line: tokens of an image model, a budget for no workload here, two for one.
  check_one_line_error(compare({"--workload", "resnet50,llama2-7b", "--tokens", "resnet50=1e12"}),
                       "--tokens resnet50=1e12: expected a workload that counts tokens, but "
                       "resnet50 counts images");
  check_one_line_error(compare({"--workload", "resnet50", "--tokens", "1e12"}),
                       "--tokens 1e12: expected a workload that counts tokens");
  check_one_line_error(compare({"--workload", "llama2-7b", "--tokens", "llama2-7=1e12"}),
                       "did you mean 'llama2-7b'?");
  check_one_line_error(
      compare({"--workload", "llama2-7b", "--tokens", "llama2-7b=1e12", "--epochs", "llama2-7b=1"}),
      "expected one budget per workload");
  check_one_line_error(compare({"--tokens", "llama2-7b=lots"}), "N a positive number");
}
