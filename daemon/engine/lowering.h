// Prepare: validates a GraphSpec at record granularity, infers operation dependencies
// with the interval frontier, groups consecutive same-lane operations into regions,
// asks each device to lower its runs, and builds the union summary (engine item 3).
#pragma once

#include "accord/status.h"
#include "daemon/engine/graph_spec.h"
#include "daemon/engine/prepared_graph.h"
#include "daemon/engine/ref.h"

namespace accord::engine {

class Session;

class GraphLowering {
 public:
  // All inference happens here; a submit of the result does none. Invalid/Unsupported
  // messages name "graph node N binding M".
  static Result<Ref<PreparedGraph>> prepare(Session& session, GraphSpec spec);
};

}  // namespace accord::engine
