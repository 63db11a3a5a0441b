// Bad input, tried on the real binary: every file gpubench reads and every command-line value,
// each wrong in the ways users and scripts get them wrong. Each must give exit 2 and one line
// naming the file or flag (and the JSON path, for a field). The cases and what gpubench said
// become docs/reliability.md, which must match what this test sees today.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "doc_table.hpp"
#include "process.hpp"

using namespace gpubench::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct bad_case {
  std::string input;              // what is wrong, in words
  std::vector<std::string> args;  // "{f}" stands for the file the case writes
  std::string file_text;          // written to {f} when not empty
  std::string needle;             // the message must contain it (a JSON path, a flag)
  bool directory = false;         // {f} is a folder
  bool binary = false;            // {f} holds non-text bytes
  bool symlink_loop = false;      // {f} is a symlink to itself
};

json config(const std::string& relative) {
  return json::parse(read_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/" + relative));
}

std::string with_change(json doc, const std::string& pointer, const json& value) {
  doc[json::json_pointer(pointer)] = value;
  return doc.dump();
}

std::string without(json doc, const std::string& pointer) {
  const json::json_pointer p(pointer);
  doc[p.parent_pointer()].erase(p.back());
  return doc.dump();
}

std::vector<bad_case> cases() {
  const json workload = config("workloads/resnet50.json");
  const json hardware = config("hardware/gpus/t4.json");
  const json suite = config("suites/quick.json");
  const json spec = config("specs/t4.json");
  const json results =
      json::parse(read_file(std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json"));
  const std::string ok_results = std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-healthy.json";
  std::vector<bad_case> c;
  // Any file: the same checks before its schema is looked at.
  for (const auto& [flag, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"workload", {"size", "--workload", "{f}"}},
           {"suite", {"run", "--suite", "{f}"}},
           {"hardware", {"size", "--workload", "resnet50", "--hardware", "{f}"}},
           {"results", {"report", "{f}"}},
           {"spec", {"validate", ok_results, "--spec", "{f}"}}}) {
    c.push_back({flag + " file that does not exist", args, "", "does not exist"});
    c.push_back({flag + " file that is empty", args, " \n", "empty"});
    c.push_back({flag + " file that is a folder", args, "", "a folder", true});
    c.push_back({flag + " file of binary bytes", args, "", "valid JSON", false, true});
    c.push_back(
        {flag + " file that is a symlink loop", args, "", "symlink loop", false, false, true});
    c.push_back({flag + " file with broken JSON", args, "{\"schema\": ", "valid JSON"});
    c.push_back(
        {flag + " file with a number no double holds", args, "{\"a\": 1e999}", "too large"});
    // 200,000 nested arrays (400 KB) under a field: parsed, it would overflow the stack of
    // whatever walks it.
    c.push_back({flag + " file nested 200,000 deep", args,
                 "{\"a\": " + std::string(200000, '[') + std::string(200000, ']') + "}",
                 "nested at most"});
  }
  const std::vector<std::string> size_w{"size", "--workload", "{f}"};
  c.push_back({"workload: wrong type", size_w, with_change(workload, "/batch_per_gpu", "big"),
               "/batch_per_gpu"});
  c.push_back({"workload: missing field", size_w, without(workload, "/model"), "/model"});
  c.push_back({"workload: zero batch", size_w, with_change(workload, "/batch_per_gpu", 0),
               "/batch_per_gpu"});
  c.push_back({"workload: zero gradient accumulation", size_w,
               with_change(workload, "/gradient_accumulation", 0), "/gradient_accumulation"});
  c.push_back({"workload: negative size", size_w,
               with_change(workload, "/data/bytes_per_sample_stored", -1),
               "/data/bytes_per_sample_stored"});
  c.push_back({"workload: a 10^30-byte dataset", size_w,
               with_change(workload, "/data/dataset_bytes", 1e30), "/data/dataset_bytes"});
  c.push_back({"workload: unknown preset", size_w,
               with_change(workload, "/model/preset", "resnet5000"), "/model/preset"});
  c.push_back({"workload: unknown precision", size_w, with_change(workload, "/precision", "fp7"),
               "/precision"});
  c.push_back({"workload: a ViT with patch 0", size_w,
               json{{"schema", "gpubench.workload/1"},
                    {"name", "vit"},
                    {"model", {{"preset", "vit-b16"}, {"patch", 0}}},
                    {"batch_per_gpu", 8},
                    {"data", {{"source", "synthetic"}}}}
                   .dump(),
               "/model/patch"});
  c.push_back({"workload: no loader workers", size_w,
               with_change(workload, "/data/loader_workers_per_gpu", 0),
               "/data/loader_workers_per_gpu"});
  const std::vector<std::string> size_h{"size", "--workload", "resnet50", "--hardware", "{f}"};
  c.push_back({"hardware: 10^6 GPUs per node", size_h,
               with_change(hardware, "/gpus_per_node", 1000000), "/gpus_per_node"});
  c.push_back({"hardware: negative peak", size_h,
               with_change(hardware, "/figures/gpu.peak_tflops.fp16/value", -5),
               "/figures/gpu.peak_tflops.fp16"});
  c.push_back({"hardware: unknown figure", size_h,
               with_change(hardware, "/figures/gpu.warp_speed", 9), "/figures/gpu.warp_speed"});
  const std::vector<std::string> run_s{"run", "--suite", "{f}"};
  c.push_back({"suite: unknown benchmark id", run_s,
               with_change(suite, "/benchmarks/0/id", "hbm.teleport"), "/benchmarks/0/id"});
  c.push_back({"suite: unknown dtype", run_s, with_change(suite, "/benchmarks/2/axes/dtype", "fp7"),
               "/benchmarks/2/axes/dtype"});
  c.push_back({"suite: zero repetitions", run_s, with_change(suite, "/defaults/repetitions", 0),
               "/defaults/repetitions"});
  c.push_back(
      {"suite: wrong type", run_s, with_change(suite, "/benchmarks", "all"), "/benchmarks"});
  const std::vector<std::string> report_r{"report", "{f}"};
  c.push_back({"results: wrong schema", report_r,
               with_change(results, "/schema", "gpubench.results/9"), "/schema"});
  c.push_back({"results: unknown status", report_r,
               with_change(results, "/results/0/status", "great"), "/results/0/status"});
  c.push_back({"results: metric of the wrong type", report_r,
               with_change(results, "/results/0/metrics/GBps/median", "fast"),
               "/results/0/metrics/GBps/median"});
  c.push_back(
      {"results: missing results list", report_r, without(results, "/results"), "/results"});
  const std::vector<std::string> validate_s{"validate", ok_results, "--spec", "{f}"};
  c.push_back({"spec: floor above 1", validate_s, with_change(spec, "/figures/0/floor", 1.5),
               "/figures/0/floor"});
  c.push_back({"spec: unknown catalog figure", validate_s,
               with_change(spec, "/figures/0/expected/catalog/0", "gpu.nope"),
               "/figures/0/expected/catalog/0"});
  c.push_back({"spec: unknown health rule", validate_s,
               with_change(spec, "/health/ecc_strict", true), "/health/ecc_strict"});
  // Command-line values.
  c.push_back({"--duration 0", {"run", "--duration", "0"}, "", "--duration"});
  c.push_back({"--timeout -1", {"run", "--timeout", "-1"}, "", "--timeout"});
  c.push_back(
      {"--axis with an unknown axis", {"run", "--axis", "host.membw:colour=red"}, "", "colour"});
  c.push_back(
      {"--axis with a negative count", {"run", "--axis", "host.membw:threads=-1"}, "", "threads"});
  c.push_back({"--only an unknown id", {"run", "--only", "gpu.teleport"}, "", "gpu.teleport"});
  c.push_back({"run --workload with a typo (checked before the first case)",
               {"run", "--only", "host.membw", "--workload", "resnet5O"},
               "",
               "resnet5O"});
  c.push_back({"run --workload, a broken workload file",
               {"run", "--only", "host.membw", "--workload", "{f}"},
               with_change(workload, "/batch_per_gpu", 0),
               "/batch_per_gpu"});
  for (const auto& [axis, needle] : std::vector<std::pair<std::string, std::string>>{
           {"cpu.augment:threads=0", "from 1 to 4096"},
           {"nvme.seq_read:queue_depth=0", "from 1 to 1024"},
           {"nvme.seq_read:block_size=1", "a multiple of 4 KiB"},
           {"nvme.rand_read:file_bytes=1", "from 64 MiB"},
           {"gpu.burn:duration_s=0", "from 1 to 604800"},
           {"pcie.h2d:bytes=8", "from 16 B"}}) {
    c.push_back(
        {"--axis " + axis + " (outside the axis's range)", {"run", "--axis", axis}, "", needle});
  }
  c.push_back({"suite: an axis value outside its range", run_s,
               with_change(suite, "/benchmarks/0/axes/threads", 0), "/benchmarks/0/axes/threads"});
  c.push_back({"--scratch a folder that does not exist",
               {"run", "--scratch", "/nonexistent"},
               "",
               "--scratch"});
  c.push_back({"--scratch the same folder twice",
               {"run", "--scratch", ".", "--scratch", "./"},
               "",
               "expected each folder once"});
  c.push_back({"--python a file that is not there",
               {"run", "--python", "/nonexistent/python3"},
               "",
               "--python /nonexistent/python3: expected an executable python3"});
  c.push_back({"--gpus not a list of indices", {"run", "--gpus", "all-of-them"}, "", "--gpus"});
  c.push_back(
      {"size --batch 0", {"size", "--workload", "resnet50", "--batch", "0"}, "", "--batch"});
  c.push_back(
      {"size --batch 2.5", {"size", "--workload", "resnet50", "--batch", "2.5"}, "", "--batch"});
  c.push_back({"size --gpus 10^8",
               {"size", "--workload", "resnet50", "--gpus", "100000000"},
               "",
               "--gpus"});
  // size --serve (docs/serving.md): every flag a user can get wrong, one line naming it.
  const std::vector<std::string> serve{
      "size",           "--serve", "--workload",      "llama3.1-8b",
      "--input-tokens", "128",     "--output-tokens", "128"};
  const auto serve_with = [&serve](std::vector<std::string> extra) {
    std::vector<std::string> args = serve;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  c.push_back({"size --serve --tensor 3 (not a divisor of the heads)",
               serve_with({"--tensor", "3"}), "", "--tensor 3"});
  c.push_back({"size --serve --weights fp4 on a GPU without fp4 GEMMs",
               serve_with({"--hardware", "catalog:h100-sxm5-80gb", "--weights", "fp4"}), "",
               "--weights fp4"});
  c.push_back({"size --serve --rate 0", serve_with({"--rate", "0"}), "", "--rate"});
  c.push_back({"size --serve --rate on an engine of static batches",
               serve_with({"--rate", "2", "--stack", "pytorch"}), "", "--rate needs"});
  c.push_back({"size --serve --output-tokens 0",
               {"size", "--serve", "--workload", "llama3.1-8b", "--input-tokens", "8",
                "--output-tokens", "0"},
               "",
               "--output-tokens"});
  c.push_back({"size --serve of a model that is not a decoder",
               {"size", "--serve", "--workload", "bert-large", "--input-tokens", "8",
                "--output-tokens", "8"},
               "",
               "decoder language model"});
  c.push_back({"size --tensor without --serve",
               {"size", "--workload", "llama3.1-8b", "--tensor", "2"},
               "",
               "--serve"});
  c.push_back({"compare --serve without the lengths",
               {"compare", "catalog:dgx-h100", "--serve", "--workload", "llama3.1-8b"},
               "",
               "--input-tokens and --output-tokens are required"});
  c.push_back({"report --serve with an unknown --weights",
               {"report", std::string(GPUBENCH_TEST_DATA_DIR) + "/validate-8gpu.json", "--serve",
                "llama3.1-8b", "--input-tokens", "8", "--output-tokens", "8", "--weights", "fp6"},
               "",
               "--weights"});
  const json gpt_workload = config("workloads/gpt2-large.json");
  c.push_back({"workload: a tensor split that does not divide the heads",
               {"size", "--workload", "{f}"},
               with_change(gpt_workload, "/parallel", json{{"tensor", 3}}),
               "/parallel/tensor"});
  const json llama3_workload = config("workloads/llama3-8b.json");
  c.push_back({"workload: kv_heads that do not divide the heads",
               {"size", "--workload", "{f}"},
               with_change(llama3_workload, "/model/kv_heads", 5),
               "/model/kv_heads"});
  c.push_back({"workload: a tensor split that does not divide the key/value heads",
               {"size", "--workload", "{f}"},
               with_change(llama3_workload, "/parallel/tensor", 16),
               "/parallel/tensor"});
  c.push_back({"workload: a pipeline of more stages than the layers allow",
               {"size", "--workload", "{f}"},
               with_change(gpt_workload, "/parallel", json{{"pipeline", 24}}),
               "/parallel/pipeline"});
  c.push_back({"workload: a tensor x pipeline split that does not divide the GPUs",
               {"size", "--workload", "{f}", "--hardware", "catalog:dgx-h100"},
               with_change(gpt_workload, "/parallel", json{{"tensor", 4}, {"pipeline", 4}}),
               "parallel.tensor x parallel.pipeline"});
  c.push_back({"watch --interval 0", {"watch", "--interval", "0", "--", "true"}, "", "--interval"});
  // nan passes every range comparison: number flags refuse it and the infinities by name.
  c.push_back(
      {"watch --interval nan", {"watch", "--interval", "nan", "--", "true"}, "", "--interval"});
  c.push_back(
      {"watch --duration inf", {"watch", "--duration", "inf", "--", "true"}, "", "--duration"});
  c.push_back({"compare --dataset-samples nan",
               {"compare", ok_results, "--epochs", "1", "--dataset-samples", "nan"},
               "",
               "--dataset-samples"});
  json calibration = json::parse(
      read_file(std::string(GPUBENCH_SOURCE_DIR) + "/configs/calibration/calibration.json"));
  calibration["rows"] = json::array({calibration["rows"][0]});
  // An output never replaces what it is made from, nor another output.
  c.push_back({"export --out the results file it reads",
               {"export", "--prometheus", "{f}", "--out", "{f}"},
               results.dump(),
               "expected a file other than the input"});
  c.push_back({"fleet --csv the results file it reads",
               {"fleet", "{f}", "--csv", "{f}"},
               results.dump(),
               "expected a file other than the input"});
  c.push_back({"fleet --csv and --html the same file",
               {"fleet", ok_results, "--csv", "{f}.out", "--html", "{f}.out"},
               "",
               "both would write the same file"});
  c.push_back({"calibration file: a published throughput of 0",
               {"calibrate", "{f}"},
               with_change(calibration, "/rows/0/throughput", 0),
               "/rows/0/throughput"});
  c.push_back({"watch with no command", {"watch", "--"}, "", "--"});
  c.push_back(
      {"watch --pid of no process", {"watch", "--pid", "999999999"}, "", "no process 999999999"});
  c.push_back({"size --set an unknown key",
               {"size", "--workload", "resnet50", "--set", "a.b=1"},
               "",
               "a.b"});
  // Catalog names name catalog files only: a path in one would load any JSON on the machine.
  c.push_back({"catalog:NAME with a path in it",
               {"size", "--workload", "resnet50", "--hardware", "catalog:../gpus/t4"},
               "",
               "catalog:../gpus/t4: expected a catalog name"});
  c.push_back({"catalog:NAME, an absolute path",
               {"compare", "catalog:dgx-h100", "catalog:/etc/hostname"},
               "",
               "catalog:/etc/hostname: expected a catalog name"});
  c.push_back({"--set gpu.model with a path in it",
               {"size", "--workload", "resnet50", "--set", "gpu.model=../gpus/t4"},
               "",
               "--set gpu.model: expected a catalog GPU"});
  c.push_back({"validate --baseline-tolerance 500",
               {"validate", ok_results, "--baseline-tolerance", "500"},
               "",
               "--baseline-tolerance"});
  // Output paths: gpubench writes only over a regular file, never over what it reads.
  const std::string results_text = results.dump();
  c.push_back({"report --html onto a device (as root it would become a regular file)",
               {"report", ok_results, "--html", "/dev/null"},
               "",
               "character device"});
  c.push_back({"report --md into a folder that does not exist",
               {"report", ok_results, "--md", "/nonexistent/report.md"},
               "",
               "--md /nonexistent/report.md"});
  c.push_back({"report writing over its own input",
               {"report", "{f}", "--html", "{f}"},
               results_text,
               "writing it would replace what it is made from"});
  c.push_back({"compare --html writing over one of the machines",
               {"compare", "{f}", "catalog:dgx-h100", "--html", "{f}"},
               results_text,
               "writing it would replace what it is made from"});
  c.push_back({"report --html and --md naming one new file, spelt two ways",
               {"report", ok_results, "--html", "out.html", "--md", "./out.html"},
               "",
               "both would write the same file"});
  c.push_back({"validate --spec an unknown name",
               {"validate", ok_results, "--spec", "h99"},
               "",
               "--spec h99"});
  // A misspelt name: the nearest known one (core/suggest.hpp), not every name.
  c.push_back({"a misspelt command", {"siz", "--workload", "resnet50"}, "", "did you mean 'size'"});
  c.push_back({"a misspelt flag (not \"--workload is required\")",
               {"size", "--workoad", "resnet50"},
               "",
               "did you mean '--workload'"});
  c.push_back({"help of no command", {"help", "nosuch"}, "", "help nosuch: expected a command"});
  c.push_back({"catalog:NAME, the end of a catalog name",
               {"size", "--workload", "resnet50", "--hardware", "catalog:p5.48xlarge"},
               "",
               "did you mean 'catalog:aws-p5.48xlarge'"});
  c.push_back({"compare --tokens for an image workload",
               {"compare", "catalog:dgx-h100", "catalog:t4", "--workload", "resnet50", "--tokens",
                "resnet50=1e12"},
               "",
               "resnet50 counts images"});
  return c;
}

}  // namespace

TEST_CASE(
    "every bad input is exit 2 with one line naming the file or flag, as docs/reliability.md "
    "lists",
    "[cli][reliability]") {
  temp_dir dir;
  std::string table = "| bad input | command | exit | what gpubench said |\n|---|---|---|---|\n";
  int n = 0;
  for (const bad_case& c : cases()) {
    const fs::path file = dir.path / ("case" + std::to_string(n++) + ".json");
    if (c.directory) {
      fs::create_directories(file);
    } else if (c.symlink_loop) {
      fs::create_symlink(file.filename(), file);
    } else if (c.binary) {
      // An ELF header with NUL and invalid UTF-8 bytes; sizeof counts the NULs.
      static constexpr char elf_header[] =
          "\x7f"
          "ELF\x02\x01\x01\0\0\0\xff\xfe";
      write_file(file, std::string(elf_header, sizeof elf_header - 1));
    } else if (!c.file_text.empty()) {
      write_file(file, c.file_text);
    }
    std::vector<std::string> args;
    std::string shown = "gpubench";
    for (const auto& a : c.args) {
      args.push_back(replace_all(a, "{f}", file.string()));
      shown.append(" ").append(replace_all(
          replace_all(a, "{f}", "FILE"), std::string(GPUBENCH_TEST_DATA_DIR) + "/", "tests/data/"));
    }
    const auto r = run_gpubench(args, dir.path);
    INFO(c.input << ": " << shown << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("gpubench: ") && Catch::Contains(c.needle));
    if (std::find(c.args.begin(), c.args.end(), "{f}") != c.args.end()) {
      CHECK_THAT(r.err, Catch::Contains(file.string()));
    }
    // Refused before anything ran: no results folder was made.
    CHECK_FALSE(fs::exists(dir.path / "gpubench-results"));
    std::string said = replace_all(r.err, file.string(), "FILE");
    said = replace_all(said, std::string(GPUBENCH_TEST_DATA_DIR) + "/", "tests/data/");
    table += "| " + md_cell(c.input) + " | `" + md_cell(shown) + "` | " +
             std::to_string(r.exit_code) + " | " + md_cell(said) + " |\n";
  }
  check_docs_table("bad-input", "tests/cli/test_reliability.cpp", table);
  // The device case above left the device alone (the old rename made it a regular file).
  CHECK(fs::is_character_file("/dev/null"));
}
