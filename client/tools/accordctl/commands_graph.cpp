// graph: prepares a graph described in a JSON file and shows what the daemon inferred,
// so an operator or a client author can check the ordering a set of declared accesses
// produces without writing a program.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "client/tools/accordctl/commands.h"
#include "client/tools/accordctl/graph_file.h"
#include "client/tools/accordctl/proto_text.h"
#include "client/tools/accordctl/table.h"

namespace accord::ctl {
namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  if (file) text << file.rdbuf();
  if (!file) return invalid_error("cannot read " + path + ": " + std::strerror(errno));
  return text.str();
}

template <class Numbers>
std::vector<std::string> to_strings(const Numbers& numbers) {
  std::vector<std::string> out;
  for (const auto n : numbers) out.push_back(std::to_string(n));
  return out;
}

void print(const GraphDescription& graph, const v1::PrepareGraphResponse& prepared, bool json) {
  // The lane each node ended up on, from the region that holds it: for a copy without a
  // lane this is the daemon's choice, which is the point of showing it.
  std::vector<std::string> node_lane(graph.nodes.size());
  for (const v1::Region& region : prepared.regions())
    for (std::uint32_t node : region.nodes())
      if (node < node_lane.size()) node_lane[node] = lane_name(region.lane());

  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  std::string text;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    std::vector<std::uint32_t> after;
    if (i < static_cast<std::size_t>(prepared.dependencies_size()))
      after.assign(prepared.dependencies(static_cast<int>(i)).after().begin(),
                   prepared.dependencies(static_cast<int>(i)).after().end());
    const std::string op = describe_node(graph, i);
    nodes.push_back({{"index", i}, {"op", op}, {"lane", node_lane[i]}, {"after", after}});
    text += "node " + std::to_string(i) + " (" + op + (node_lane[i].empty() ? "" : " on " + node_lane[i]) +
            ") after: " + join_or_dash(to_strings(after), " ") + "\n";
  }

  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
  Table table({{"REGION", Align::Right}, {"LANE"}, {"NODES"}, {"PREDECESSORS"}});
  for (int r = 0; r < prepared.regions_size(); ++r) {
    const v1::Region& region = prepared.regions(r);
    const std::vector<std::uint32_t> members(region.nodes().begin(), region.nodes().end());
    const std::vector<std::uint32_t> predecessors(region.predecessors().begin(), region.predecessors().end());
    regions.push_back(
        {{"index", r}, {"lane", lane_name(region.lane())}, {"nodes", members}, {"predecessors", predecessors}});
    table.add_row({std::to_string(r), lane_name(region.lane()), join_or_dash(to_strings(members), " "),
                   join_or_dash(to_strings(predecessors), " ")});
  }

  if (json) print_json({{"nodes", nodes}, {"regions", regions}});
  else std::cout << text << "\n" << table.render();
}

}  // namespace

Status run_graph(Connection& connection, const std::string& path) {
  ACCORD_ASSIGN_OR_RETURN(const std::string text, read_file(path));
  auto parsed = parse_graph_description(text);
  if (!parsed.ok()) return invalid_error(path + ": " + std::string(parsed.status().message()));
  const GraphDescription& graph = parsed.value();

  ACCORD_RETURN_IF_ERROR(connection.open_session("accordctl graph"));
  std::vector<std::uint64_t> buffers;
  for (const BufferDecl& buffer : graph.buffers) {
    ACCORD_ASSIGN_OR_RETURN(const v1::AllocateResponse allocated,
                            connection.call(&v1::Accord::Stub::Allocate, allocate_request(buffer),
                                            "buffer '" + buffer.name + "'"));
    buffers.push_back(allocated.buffer());
  }
  std::vector<std::uint64_t> kernels;
  for (const builtin::KernelSpec& kernel : graph.kernels) {
    ACCORD_ASSIGN_OR_RETURN(const v1::LoadKernelResponse loaded,
                            connection.call(&v1::Accord::Stub::LoadKernel, load_kernel_request(kernel),
                                            "kernel " + kernel.name));
    kernels.push_back(loaded.kernel());
  }
  // The daemon's messages already name the node and binding ("graph node 3 binding 1"),
  // and node i of the request is node i of the file, so no context is added.
  ACCORD_ASSIGN_OR_RETURN(const v1::PrepareGraphResponse prepared,
                          connection.call(&v1::Accord::Stub::PrepareGraph, prepare_request(graph, buffers, kernels)));
  print(graph, prepared, connection.options().json);
  // Nothing to release: closing the session channel on exit releases the session.
  return Status();
}

}  // namespace accord::ctl
