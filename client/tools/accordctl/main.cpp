// accordctl: the operator's command-line view of a running accordd (devices, sessions,
// statistics), an end-to-end probe with a trace, and a graph-ordering explainer. This
// file wires the command line to commands_*.cpp; exit status 0 ok, 1 failure, 2 usage.
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "client/tools/accordctl/commands.h"
#include "client/tools/accordctl/connection.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr const char* kTraceHelp =
    "A trace is per session, so other clients' work is not recorded: the probe allocates two "
    "HostVisible buffers, loads accord.add_f32 and submits a 3-node graph (fill a, fill b, "
    "add -> out) and waits for it, over and over for --seconds. Useful to check the daemon end "
    "to end and to see lane timings (host-observed).";

constexpr const char* kGraphHelp =
    "Nothing is submitted; the session closes when accordctl exits. FILE: {\"buffers\": {\"x\": 1024, \"y\": 1024}, \"nodes\": [{\"fill\": {\"dst\": \"x[0:64]\", "
    "\"value\": 1}}, {\"copy\": {\"dst\": \"y[0:64]\", \"src\": \"x[0:64]\", \"lane\": \"upload\"}}, "
    "{\"kernel\": {\"name\": \"accord.add_f32\", \"count\": 16, \"bindings\": [\"x[0:64]\", "
    "\"y[0:64]\", \"y[64:128]\"]}}]}. Views are name[begin:end] in bytes or a bare name (whole "
    "buffer); copy lanes upload|compute|download; kernels accord.add_f32 and accord.relu_f32 "
    "(count), accord.saxpy_f32 (count, a), accord.matmul_f32 (m, k, n).";

// CLI::PositiveNumber's message prints DBL_MAX in full; this one says what is wanted.
const CLI::Validator kPositiveSeconds(
    [](std::string& text) -> std::string {
      double value = 0;
      if (CLI::detail::lexical_cast(text, value) && value > 0 && value <= 1e6) return {};
      return "expected a positive number of seconds (at most 1000000), got " + text;
    },
    "SECONDS");

// The session channel sits beside the gRPC socket unless told otherwise, as accordd's
// defaults (/run/accord/accord.sock, /run/accord/session.sock) have it.
std::string default_session_socket(const std::string& grpc_socket) {
  const std::filesystem::path directory = std::filesystem::path(grpc_socket).parent_path();
  return (directory.empty() ? std::filesystem::path("session.sock") : directory / "session.sock").string();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace accord::ctl;
  CLI::App app("accordctl: inspect and probe a running accordd over its Unix sockets.", "accordctl");
  app.footer("Exit status: 0 success; 1 failure (an error from accordd, accordd unreachable, a bad graph "
             "file); 2 usage error.");
  app.require_subcommand(1);
  // Global options may come before or after the subcommand ("accordctl devices --json").
  app.fallthrough();
  app.set_version_flag("--version", ACCORD_VERSION);

  GlobalOptions options;
  options.socket = "/run/accord/accord.sock";
  app.add_option("--socket", options.socket, "accordd's gRPC socket")
      ->envname("ACCORD_SOCKET")
      ->capture_default_str();
  app.add_option("--session-socket", options.session_socket,
                 "accordd's session channel (default: session.sock beside --socket)")
      ->envname("ACCORD_SESSION_SOCKET");
  app.add_flag("--json", options.json, "machine-readable JSON output");
  app.add_option("--timeout", options.timeout_seconds, "deadline of each call to accordd, in seconds")
      ->check(kPositiveSeconds)
      ->capture_default_str();

  CLI::App* devices = app.add_subcommand(
      "devices", "List accordd's devices, present or lost, and the backends that found none, with the "
                 "reason (no session needed).");
  CLI::App* sessions = app.add_subcommand(
      "sessions", "List live sessions: id, pid, uid, label, buffers, graphs, pending, live bytes, age. "
                  "Root and accordd's own user see all sessions; others see their own.");
  CLI::App* stats = app.add_subcommand(
      "stats", "Print accordd's daemon-wide statistics: the 13 cumulative host-observed counters, "
               "devices_lost, and how many ring pollers serve now of the most.");

  TraceOptions trace_options;
  CLI::App* trace = app.add_subcommand(
      "trace", "Trace a probe workload of accordctl's own session (checks the daemon end to end, shows lane "
               "timings) and write it as Chrome/Perfetto JSON.");
  trace->footer(kTraceHelp);
  trace->add_option("--out", trace_options.out, "where to write the trace JSON (FILE.json)")->required();
  trace->add_option("--seconds", trace_options.seconds, "how long to run the probe workload")
      ->check(kPositiveSeconds)
      ->capture_default_str();
  trace->add_option("--capacity", trace_options.capacity, "trace events kept; the oldest are dropped beyond it")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();

  std::string graph_path;
  CLI::App* graph = app.add_subcommand(
      "graph", "Prepare the graph described in a JSON file and print each node's inferred predecessors and "
               "the regions it was lowered to.");
  graph->footer(kGraphHelp);
  graph->add_option("FILE", graph_path, "the graph description (JSON)")->required()->check(CLI::ExistingFile);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints help, the version or the parse error; only --help/--version succeed.
    return app.exit(e) == 0 ? EXIT_SUCCESS : kExitUsage;
  }
  if (options.session_socket.empty()) options.session_socket = default_session_socket(options.socket);

  accord::Status status;
  try {
    Connection connection(options);
    if (*devices) status = run_devices(connection);
    else if (*sessions) status = run_sessions(connection);
    else if (*stats) status = run_stats(connection);
    else if (*trace) status = run_trace(connection, trace_options);
    else if (*graph) status = run_graph(connection, graph_path);
  } catch (const std::exception& e) {
    // Nothing here is expected to throw (parsing and JSON output are wrapped where they
    // are called); this keeps a surprise from ending as std::terminate.
    std::cerr << "accordctl: internal error: " << e.what() << '\n';
    return kExitFailure;
  }
  if (!status.ok()) {
    std::cerr << status.message() << '\n';
    return kExitFailure;
  }
  return EXIT_SUCCESS;
}
