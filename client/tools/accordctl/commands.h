// The accordctl subcommands. Each one prints its result on stdout (an aligned table, or
// JSON with --json) and returns OK, or a Status whose message is the one line main()
// prints on stderr before exiting 1 (see connection.h).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "accord/status.h"
#include "client/tools/accordctl/connection.h"

namespace accord::ctl {

// Prints `value` indented on stdout. Strings from the daemon (session labels) may hold
// invalid UTF-8, e.g. a label cut mid-character at 63 bytes; those bytes print as U+FFFD
// instead of making dump() throw.
void print_json(const nlohmann::ordered_json& value);

// ListDevices: every device, present or lost, and every backend that opened none, with
// index, id, backend, name, target, state and reason (device_view.h). No session.
Status run_devices(Connection& connection);

// ListSessions: id, pid, uid, label, buffers, graphs, pending, live bytes, age. No
// session, so the tool does not list itself. Root and accordd's own uid see every
// session; other users see their own.
Status run_sessions(Connection& connection);

// GetStatistics in a session of its own: the daemon-wide 13 counters (host-observed)
// and devices_lost.
Status run_stats(Connection& connection);

struct TraceOptions {
  std::string out;                 // where the Chrome/Perfetto JSON goes
  double seconds = 1;              // how long the probe workload runs
  std::uint64_t capacity = 65536;  // trace events kept; older ones are dropped
};

// A trace is per session, so this traces a probe workload in its own session: two
// HostVisible buffers, a 3-node graph (fill a, fill b, accord.add_f32 -> out) submitted
// and waited for repeatedly for `options.seconds`, then writes the Chrome JSON.
Status run_trace(Connection& connection, const TraceOptions& options);

// Parses the graph file at `path` (graph_file.h), allocates its buffers and loads its
// kernels in a session of its own, prepares it and prints each node's inferred
// predecessors and the regions. Nothing is submitted.
Status run_graph(Connection& connection, const std::string& path);

}  // namespace accord::ctl
