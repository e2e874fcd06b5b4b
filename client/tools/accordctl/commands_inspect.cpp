// devices, sessions and stats: read-only views of the daemon.
#include <iostream>

#include "client/tools/accordctl/commands.h"
#include "client/tools/accordctl/device_view.h"
#include "client/tools/accordctl/proto_text.h"
#include "client/tools/accordctl/table.h"

namespace accord::ctl {
namespace {

using nlohmann::ordered_json;

ordered_json counters_json(const v1::Statistics& statistics) {
  ordered_json out = ordered_json::object();
  for (const auto& [name, value] : statistics_counters(statistics)) out[name] = value;
  return out;
}

}  // namespace

void print_json(const nlohmann::ordered_json& value) {
  std::cout << value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

Status run_devices(Connection& connection) {
  ACCORD_ASSIGN_OR_RETURN(const v1::ListDevicesResponse response,
                          connection.call(&v1::Accord::Stub::ListDevices, v1::ListDevicesRequest()));
  if (connection.options().json) print_json(devices_json(response));
  else std::cout << devices_table(response).render();
  return Status();
}

Status run_sessions(Connection& connection) {
  ACCORD_ASSIGN_OR_RETURN(const v1::ListSessionsResponse response,
                          connection.call(&v1::Accord::Stub::ListSessions, v1::ListSessionsRequest()));
  ordered_json json = ordered_json::array();
  Table table({{"ID", Align::Right},
               {"PID", Align::Right},
               {"UID", Align::Right},
               {"LABEL"},
               {"PRIORITY", Align::Right},
               {"BUFFERS", Align::Right},
               {"GRAPHS", Align::Right},
               {"PENDING", Align::Right},
               {"LIVE BYTES", Align::Right},
               {"AGE", Align::Right}});
  for (const v1::SessionSummary& s : response.sessions()) {
    const v1::SessionInfo& info = s.info();
    json.push_back({{"id", info.session_id()},
                    {"pid", info.pid()},
                    {"uid", info.uid()},
                    {"gid", info.gid()},
                    {"label", info.label()},
                    {"priority", info.priority()},
                    {"buffers", s.buffers()},
                    {"graphs", s.graphs()},
                    {"pending", s.pending()},
                    {"live_bytes", s.statistics().live_bytes()},
                    {"age_seconds", s.age_seconds()},
                    {"limits",
                     {{"max_submissions", info.limits().max_submissions()},
                      {"graph_slots", info.limits().graph_slots()},
                      {"memory_budget", info.limits().memory_budget()},
                      {"max_objects", info.limits().max_objects()}}},
                    {"statistics", counters_json(s.statistics())}});
    table.add_row({std::to_string(info.session_id()), std::to_string(info.pid()), std::to_string(info.uid()),
                   info.label().empty() ? "-" : info.label(), std::to_string(info.priority()),
                   std::to_string(s.buffers()), std::to_string(s.graphs()),
                   std::to_string(s.pending()), format_bytes(s.statistics().live_bytes()),
                   format_age(s.age_seconds())});
  }
  if (connection.options().json) print_json({{"sessions", json}});
  else if (table.row_count() == 0) std::cout << "no sessions\n";
  else std::cout << table.render();
  return Status();
}

Status run_stats(Connection& connection) {
  // GetStatistics needs a session even though only the daemon-wide half is shown; the
  // session's own counters would only describe this call.
  ACCORD_RETURN_IF_ERROR(connection.open_session("accordctl stats"));
  ACCORD_ASSIGN_OR_RETURN(const v1::GetStatisticsResponse response,
                          connection.call(&v1::Accord::Stub::GetStatistics, v1::GetStatisticsRequest()));
  if (connection.options().json) {
    print_json({{"host_observed", true},
                {"daemon", counters_json(response.daemon())},
                {"ring_pollers", {{"serving", response.ring_pollers_serving()}, {"most", response.ring_pollers_most()}}}});
    return Status();
  }
  Table table({{"COUNTER"}, {"VALUE", Align::Right}});
  for (const auto& [name, value] : statistics_counters(response.daemon())) {
    const bool bytes = name.ends_with("_bytes");
    table.add_row({name, std::to_string(value) + (bytes && value >= 1024 ? " (" + format_bytes(value) + ")" : "")});
  }
  std::cout << "daemon-wide statistics (host-observed; cumulative since accordd started)\n"
            << table.render() << "ring pollers: " << response.ring_pollers_serving() << " of "
            << response.ring_pollers_most() << " serving the sessions' rings (as many as the work keeps busy)\n";
  return Status();
}

}  // namespace accord::ctl
