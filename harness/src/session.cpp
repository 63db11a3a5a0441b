// gpubench run, as the harness runs it (gpubench/session.hpp).
#include "gpubench/harness/session.hpp"
#include "gpubench/core/json.hpp"

#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/output_file.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/build_info.hpp"
#include "gpubench/harness/discovery.hpp"
#include "gpubench/harness/gpu_assignment.hpp"
#include "gpubench/harness/job.hpp"
#include "gpubench/harness/thread_pool.hpp"

namespace gpubench {

namespace fs = std::filesystem;

namespace {

std::vector<int> parse_gpu_list(const std::string& text, const system_info& system) {
  std::vector<int> out;
  if (text.empty()) {
    return out;
  }
  for (const std::string& part : split(text, ',')) {
    std::size_t used = 0;
    int index = -1;
    try {
      index = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || index < 0) {
      throw input_error("--gpus: expected GPU indices like 0,1,3, got '" + text + "'");
    }
    const bool present = std::any_of(system.gpus.begin(), system.gpus.end(),
                                     [&](const gpu_info& g) { return g.index == index; });
    if (!present) {
      throw input_error("--gpus: expected an index of a GPU on this machine (" +
                        std::to_string(system.gpus.size()) + " found), got " +
                        std::to_string(index));
    }
    out.push_back(index);
  }
  return out;
}

// --scratch DIR[,DIR...], repeatable: existing, writable folders, each named once (one per
// device to read at once).
std::vector<fs::path> parse_scratch_dirs(const std::vector<std::string>& values) {
  std::vector<fs::path> dirs;
  for (const std::string& value : values) {
    std::error_code ec;
    // A folder whose name has a comma in it is still one folder.
    const std::vector<std::string> parts =
        fs::is_directory(value, ec) ? std::vector<std::string>{value} : split(value, ',');
    for (const std::string& part : parts) {
      if (part.empty()) {
        throw input_error("--scratch: expected folders separated by commas, got '" + value + "'");
      }
      if (!fs::exists(part, ec)) {
        throw input_error("--scratch " + part +
                          ": expected an existing folder (it does not exist)");
      }
      if (!fs::is_directory(part, ec)) {
        throw input_error("--scratch " + part + ": expected a folder, got a file");
      }
      if (::access(part.c_str(), W_OK | X_OK) != 0) {
        throw input_error("--scratch " + part + ": expected a folder gpubench may write to");
      }
      for (const auto& earlier : dirs) {
        if (fs::equivalent(earlier, part, ec)) {
          throw input_error("--scratch " + part + ": expected each folder once (it is " +
                            earlier.string() + " again)");
        }
      }
      dirs.emplace_back(part);
    }
  }
  return dirs;
}

// A host name as part of a folder name: only letters, digits, '.', '_' and '-', never '.' or
// '..' alone, so $GPUBENCH_NODE_NAME or a strange host name cannot point a path elsewhere.
std::string folder_safe(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const bool plain =
        std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
    out += plain ? c : '_';
  }
  if (out.empty() || out.find_first_not_of('.') == std::string::npos) out = "host" + out;
  return out.substr(0, 64);
}

// --out, or a new folder under gpubench-results/: a run never writes over earlier results or
// into a folder of the user's (claim_results_folder says how it tells).
claimed_folder make_output_folder(const std::string& requested, const std::string& host) {
  if (!requested.empty()) return claim_results_folder(requested, "--out " + requested);
  return claim_new_folder("gpubench-results", folder_safe(host) + "-" + folder_timestamp());
}

std::vector<std::string> build_warnings() {
  std::vector<std::string> warnings;
  if (build_type() != "Release") {
    warnings.push_back("gpubench was built as " + build_type() +
                       ", not Release: host-side figures may be low");
  }
  if (benchmark::CPUInfo::Get().scaling == benchmark::CPUInfo::Scaling::ENABLED) {
    warnings.emplace_back("CPU frequency scaling is enabled: host-side figures may vary");
  }
  return warnings;
}

// A session that ended before rank 0 held merged results.
session_result ended(exit_code code) {
  session_result out;
  out.code = code;
  return out;
}

// What every rank must agree on before a multi-rank run starts.
struct job_identity {
  std::string build;
  std::string suite;
  std::string gpu_count;
};

job_identity identity_of(const session_request& args, const suite& s, const system_info& system) {
  std::string build = version() + " (" + git_describe() + ")";
  for (const auto& feature : build_features()) build += " " + feature;
  std::string options = s.name + " [" + s.source.filename().string() + "]";
  for (const auto& list : {args.only, args.skip, args.axes}) {
    for (const auto& item : list) options += " " + item;
  }
  options += args.skip_verify ? " skip-verify" : "";
  return {build, options, std::to_string(system.gpus.size())};
}

// Sets options.gpus to the one GPU this rank drives. Returns why the job cannot run one rank per
// GPU on this rank's node (empty when it can, and on nodes without GPUs, whose ranks run the
// host benchmarks and skip the GPU ones). Collective.
std::string assign_this_rank_gpu(const job& the_job, const system_info& system,
                                 run_options& options) {
  const job_layout& layout = the_job.layout();
  // Every GPU the node shows this rank (of --gpus), whether or not CUDA can drive it: where it
  // cannot, the GPU benchmarks skip with that reason, but ranks still must not share a GPU.
  std::vector<int> listed;
  json mine{{"node", layout.node}, {"gpus", json::array()}};
  for (const auto& gpu : system.gpus) {
    if (!options.gpus.empty() &&
        std::find(options.gpus.begin(), options.gpus.end(), gpu.index) == options.gpus.end()) {
      continue;
    }
    listed.push_back(gpu.index);
    mine["gpus"].push_back(gpu.uuid.empty() ? "GPU index " + std::to_string(gpu.index) : gpu.uuid);
  }
  std::vector<std::vector<std::string>> node_lists;  // this node's ranks, in local-rank order
  for (const std::string& text : the_job.all_gather(json_text(mine))) {
    const json other = json::parse(text);
    if (other.at("node") == layout.node) {
      node_lists.push_back(other.at("gpus").get<std::vector<std::string>>());
    }
  }
  const rank_gpu choice =
      assign_rank_gpus(node_lists).at(static_cast<std::size_t>(layout.local_rank));
  options.gpus.clear();
  if (choice.position) {
    options.gpus.push_back(listed.at(*choice.position));
    return {};
  }
  if (system.gpus.empty()) return {};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return "node " + layout.node + ", rank " + std::to_string(layout.rank) + ": " + choice.problem +
         (visible != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "");
}

// Rank r's results, tagged with where they were measured, for the gather to rank 0.
std::string rank_report(const job_layout& layout, const results_document& doc) {
  json report{{"rank", layout.rank}, {"host", layout.node}, {"leader", layout.node_leader}};
  if (layout.node_leader) report["system"] = doc.system;
  report["results"] = doc.results;
  return json_text(report);
}

// Rank 0: every rank's results in rank order, each tagged with host and rank; one entry per node.
void merge_rank_reports(const std::vector<std::string>& reports, results_document& doc) {
  doc.results.clear();
  doc.nodes.clear();
  for (const auto& text : reports) {
    const json report = json::parse(text);
    const int rank = report.at("rank").get<int>();
    const std::string host = report.at("host").get<std::string>();
    for (result r : report.at("results").get<std::vector<result>>()) {
      r.host = host;
      r.rank = rank;
      doc.results.push_back(std::move(r));
    }
    auto node = std::find_if(doc.nodes.begin(), doc.nodes.end(),
                             [&](const node_entry& n) { return n.host == host; });
    if (node == doc.nodes.end()) {
      doc.nodes.push_back(node_entry{host, {}, system_info{}});
      node = doc.nodes.end() - 1;
    }
    node->ranks.push_back(rank);
    if (report.value("leader", false)) node->system = report.at("system").get<system_info>();
  }
}

// The ranks of one job acting as one. An input error on any rank stops every rank (each sees all
// errors through one collective, so none waits on a rank that already left).
class rank_group {
 public:
  explicit rank_group(job& the_job) : job_(the_job), root_(the_job.layout().rank == 0) {}

  [[nodiscard]] job& the_job() const { return job_; }
  [[nodiscard]] const job_layout& layout() const { return job_.layout(); }
  [[nodiscard]] bool root() const { return root_; }
  [[nodiscard]] bool distributed() const { return job_.distributed(); }

  // The first rank's error, named by its rank in a multi-rank job; nullopt when none has one.
  [[nodiscard]] std::optional<std::string> first_error(const std::string& mine) const {
    const auto errors = job_.all_gather(mine);
    for (std::size_t r = 0; r < errors.size(); ++r) {
      if (errors[r].empty()) continue;
      return job_.distributed() ? "rank " + std::to_string(r) + ": " + errors[r] : errors[r];
    }
    return std::nullopt;
  }
  // Rank 0 says why before any rank exits: a rank that left at once could have the launcher kill
  // rank 0 before it printed a word.
  [[nodiscard]] session_result stop(const std::string& message) const {
    if (root_) std::cerr << "gpubench: " << message << std::endl;
    if (job_.distributed()) job_.barrier();
    return ended(exit_bad_input);
  }

 private:
  job& job_;
  bool root_;
};

// What the command line asks for, read before anything is measured or created.
struct session_inputs {
  std::optional<suite> chosen;
  plan_request request;
  std::vector<fs::path> scratch;
};

// Inputs first: a bad flag or file costs nothing and touches nothing. Returns the error, or "".
std::string read_inputs(const session_request& args, session_inputs& in) {
  try {
    in.chosen = load_suite(args.suite);
    in.request.only = args.only;
    in.request.skip = args.skip;
    for (const auto& text : args.axes) {
      in.request.axis_overrides.push_back(parse_axis_override(text));
    }
    if (args.duration_s) {
      in.request.axis_overrides.push_back({"*", "duration_s", {std::to_string(*args.duration_s)}});
    }
    in.scratch = parse_scratch_dirs(args.scratch);
    std::error_code ec;
    if (!args.python.empty() &&
        (!fs::is_regular_file(args.python, ec) || ::access(args.python.c_str(), X_OK) != 0)) {
      throw input_error("--python " + args.python + ": expected an executable python3");
    }
    if (args.check_other_inputs) args.check_other_inputs();
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

// Every rank runs the same build and suite on nodes with as many GPUs; throws input_error where
// they differ (every rank sees the same disagreement).
void require_same_job(const rank_group& ranks, const session_request& args, const suite& chosen,
                      const system_info& system) {
  const job_identity mine = identity_of(args, chosen, system);
  require_agreement("the gpubench build", ranks.the_job().all_gather(mine.build));
  require_agreement("the suite and its options", ranks.the_job().all_gather(mine.suite));
  require_agreement("the GPU count per node", ranks.the_job().all_gather(mine.gpu_count));
}

// The GPUs --gpus names. Returns the error, or "".
std::string parse_gpus(const session_request& args, const system_info& system,
                       run_options& options) {
  try {
    options.gpus = parse_gpu_list(args.gpus, system);
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

// The results file's header: this build, the run's arguments and the machine.
results_document new_document(const session_request& args, const job_layout& layout,
                              const std::string& suite_name, const std::string& driver,
                              const system_info& system) {
  results_document doc;
  doc.meta.version = version();
  doc.meta.git = git_describe();
  doc.meta.argv = args.argv;
  doc.meta.started = iso8601_now();
  doc.meta.build_type = build_type();
  doc.meta.compiler = compiler();
  doc.meta.cuda = cuda_runtime_version();
  doc.meta.driver = driver;
  doc.meta.nccl = nccl_version();
  doc.meta.mpi_ranks = layout.size;
  doc.meta.suite = suite_name;
  doc.meta.warnings = build_warnings();
  doc.system = system;
  return doc;
}

// Rank 0 says what runs and where its results go, after the build's warnings.
void announce(const rank_group& ranks, const results_document& doc, std::size_t cases,
              const fs::path& results_path) {
  for (const auto& warning : doc.meta.warnings) {
    std::cerr << "gpubench: warning: " << warning << "\n";
  }
  const job_layout& layout = ranks.layout();
  std::cerr << "gpubench: suite '" << doc.meta.suite << "', " << cases << " cases"
            << (ranks.distributed() ? " per rank, " + std::to_string(layout.size) + " ranks on " +
                                          std::to_string(layout.node_count) + " node(s)"
                                    : std::string())
            << ", results in " << results_path.string() << "\n";
}

// A multi-rank run's end: every rank's results gathered into rank 0's file. Returns the ended
// session of every other rank; rank 0's outcome counts the whole job's results.
std::optional<session_result> gather_ranks(const rank_group& ranks, const fs::path& results_path,
                                           results_document& doc, run_outcome& outcome) {
  if (outcome.interrupted) {
    // No gather: a rank may be gone (a launcher signals the others when one dies). Rank 0's
    // results.json keeps what rank 0 finished, marked interrupted; the other ranks' are lost.
    if (ranks.root()) {
      std::cerr << "gpubench: interrupted: " << results_path.string()
                << " holds rank 0's finished results only (the ranks' results are gathered at "
                   "the end of a run)\n";
    }
    return ended(exit_interrupted);
  }
  const auto reports = ranks.the_job().gather_to_root(rank_report(ranks.layout(), doc));
  if (!ranks.root()) {
    return ended(outcome.interrupted  ? exit_interrupted
                 : outcome.failed > 0 ? exit_failure
                                      : exit_ok);
  }
  merge_rank_reports(reports, doc);
  outcome = {};
  for (const auto& r : doc.results) {
    outcome.ok += r.status == result_status::ok ? 1 : 0;
    outcome.skipped += r.status == result_status::skipped ? 1 : 0;
    outcome.failed += r.status == result_status::failed ? 1 : 0;
  }
  outcome.interrupted = doc.meta.interrupted = interrupt_requested();
  doc.meta.finished = iso8601_now();
  save_results(results_path, doc, outcome);
  return std::nullopt;
}

}  // namespace

session_result run_session(const session_request& args, const session_environment& environment) {
  if (!GPUBENCH_HAVE_MPI) {
    if (const auto launcher = mpi_launcher_detected()) {
      throw input_error("gpubench was built without MPI but was started by an MPI launcher (" +
                        *launcher +
                        "): rebuild with -DGPUBENCH_MPI=ON, or start one gpubench process");
    }
  }
  const std::unique_ptr<job> the_job = job::start();
  const rank_group ranks(*the_job);
  const job_layout& layout = ranks.layout();
  const bool root = ranks.root();
  if (ranks.distributed() && layout.node_leader && !widen_affinity_to_all_cpus()) {
    std::cerr << "gpubench: warning: rank " << layout.rank
              << " could not widen its CPU binding; host benchmarks on " << layout.node
              << " see only the cores the launcher gave it\n";
  }

  session_inputs in;
  if (const auto error = ranks.first_error(read_inputs(args, in))) return ranks.stop(*error);
  system_info system = environment.discover ? environment.discover() : discover_system();
  if (ranks.distributed()) {
    try {
      require_same_job(ranks, args, *in.chosen, system);
    } catch (const input_error& e) {
      return ranks.stop(e.what());
    }
  }
  run_options options;
  std::string problem = parse_gpus(args, system, options);
  if (const auto error = ranks.first_error(problem)) return ranks.stop(*error);
  if (ranks.distributed()) {
    // One rank per GPU, whether the ranks all see the node's GPUs (mpirun) or each sees its own
    // (srun --gpus-per-task=1): assign_rank_gpus decides from what every rank on the node sees.
    problem = assign_this_rank_gpu(*the_job, system, options);
  }
  if (const auto error = ranks.first_error(problem)) return ranks.stop(*error);
  options.verify = !args.skip_verify;
  options.timeout_s = args.timeout_s;
  options.python = args.python;
  const std::string driver = system.gpu_status.driver_version;

  // The plan, checked on every rank before anything is created.
  std::vector<planned_benchmark> plan;
  try {
    plan = make_plan(*in.chosen, in.request, *environment.benchmarks,
                     context(system, options, the_job.get()));
  } catch (const input_error& e) {
    problem = e.what();
  }
  if (const auto error = ranks.first_error(problem)) return ranks.stop(*error);

  // Rank 0 makes the results folder; the others learn where it is.
  claimed_folder claim;  // held until the run's results are saved
  if (root) {
    try {
      claim = make_output_folder(args.out, layout.node);
    } catch (const input_error& e) {
      problem = e.what();
    }
  }
  if (const auto error = ranks.first_error(problem)) return ranks.stop(*error);
  const fs::path out = the_job->all_gather(claim.path().string()).front();

  const bool default_scratch = in.scratch.empty();
  if (default_scratch) {
    // Inside the results folder (one per node in a multi-node job); removed at the end if the
    // benchmarks left it empty.
    in.scratch.push_back(out / (ranks.distributed() ? "scratch-" + folder_safe(layout.node)
                                                    : std::string("scratch")));
    if (layout.node_leader) fs::create_directories(in.scratch.back());
  }
  options.scratch_dirs = in.scratch;
  const context ctx(std::move(system), options, the_job.get());
  results_document doc = new_document(args, layout, in.chosen->name, driver, ctx.system());
  const fs::path results_path = root ? out / "results.json" : fs::path();
  install_interrupt_handlers();
  if (root) announce(ranks, doc, count_cases(plan), results_path);
  run_hooks hooks;
  if (ranks.distributed()) {
    hooks.runs_here = [&](const benchmark_definition& def) {
      return def.scope() == run_scope::per_rank || layout.node_leader;
    };
    hooks.after_benchmark = [&] { the_job->barrier(); };
  }
  run_outcome outcome = run_plan(plan, ctx, doc, results_path,
                                 root ? environment.progress : progress_listener{}, hooks);

  if (default_scratch && layout.node_leader) {
    std::error_code ec;
    fs::remove(in.scratch.front(), ec);  // only if empty
  }
  if (ranks.distributed()) {
    if (auto ended_here = gather_ranks(ranks, results_path, doc, outcome)) return *ended_here;
  }
  session_result session;
  session.holds_results = true;
  session.idle_gpus = idle_gpus_problem(plan, doc);
  session.document = std::move(doc);
  session.results_path = results_path;
  session.outcome = outcome;
  session.code = exit_code_of(session);
  return session;
}

exit_code exit_code_of(const session_result& session) {
  if (!session.outcome.save_error.empty()) return exit_failure;
  if (session.outcome.interrupted) return exit_interrupted;
  if (session.idle_gpus) return exit_failure;
  return session.outcome.failed > 0 ? exit_failure : exit_ok;
}

}  // namespace gpubench
