// The input of `accordctl graph`: a small JSON description of buffers and nodes, parsed
// and checked here (names, view syntax, ranges, lanes, kernel parameters) so that a
// mistake is reported by node and field before anything reaches the daemon, then turned
// into the Allocate, LoadKernel and PrepareGraph requests. No daemon involved.
//
//   {"buffers": {"x": 1024, "y": 1024, "z": 1024},
//    "nodes": [
//      {"fill":   {"dst": "x[0:64]", "value": 1}},
//      {"copy":   {"dst": "y[0:64]", "src": "x[0:64]", "lane": "upload"}},
//      {"kernel": {"name": "accord.add_f32", "count": 16,
//                  "bindings": ["x[0:64]", "y[0:64]", "z[0:64]"]}}]}
//
// Buffers are HostVisible, allocated in file order. A view is "name[begin:end]" (byte
// offsets, end exclusive) or "name" (the whole buffer). Copy lanes: upload, compute,
// download (omitted: the daemon picks by direction). Kernels are the host device's
// built-ins, with the parameters of client/include/accord/builtin_kernels.h:
// accord.add_f32 and accord.relu_f32 (count), accord.saxpy_f32 (count, a),
// accord.matmul_f32 (m, k, n); optional "allow_aliasing": true. Unknown fields are
// errors, so a typo is never silently ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accord/builtin_kernels.h"
#include "accord/status.h"
#include "accord/v1/accord.pb.h"

namespace accord::ctl {

struct BufferDecl {
  std::string name;
  std::uint64_t bytes = 0;  // >= 1
};

// A byte range of a declared buffer, checked to lie inside it and to be non-empty.
struct ViewRef {
  std::size_t buffer = 0;  // index into GraphDescription::buffers
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool whole = false;  // written as the bare name; printed back the same way
};

struct FillNode {
  ViewRef dst;
  std::uint32_t value = 0;  // 0..255
};

struct CopyNode {
  ViewRef dst;
  ViewRef src;  // same length as dst
  v1::Lane lane = v1::LANE_UNSPECIFIED;
};

struct KernelNode {
  std::size_t kernel = 0;  // index into GraphDescription::kernels
  std::vector<ViewRef> bindings;  // exactly as many as the contract has
  bool allow_aliasing = false;
};

using GraphNode = std::variant<FillNode, CopyNode, KernelNode>;

struct GraphDescription {
  std::vector<BufferDecl> buffers;           // allocation order (file order)
  std::vector<builtin::KernelSpec> kernels;  // distinct specializations, first-use order
  std::vector<GraphNode> nodes;              // recording order: node i of the file is node i
};

// Parses and checks `json_text`. Invalid with one line naming the place at fault:
//   not valid JSON: parse error at line 3, column 7: ...
//   field "buffers.x": size must be an integer >= 1
//   node 3, field "copy.src": unknown buffer 'q' (declared: x, y)
//   node 2, field "kernel.bindings[1]": view 'y[0:2048]' ends at byte 2048, past the
//       end of buffer 'y' (1024 bytes)
// Contract checks against views (minimum extent, alignment, aliasing) are left to the
// daemon, which names the node and binding the same way.
Result<GraphDescription> parse_graph_description(std::string_view json_text);

// "x[0:64]", or "x" for a whole-buffer view written that way.
std::string view_text(const GraphDescription& graph, const ViewRef& view);

// One line for node `index`: "fill x[0:64] = 1", "copy y[0:64] <- x[0:64]",
// "accord.add_f32(x[0:64], y[0:64], z[0:64])". Precondition: index < nodes.size().
std::string describe_node(const GraphDescription& graph, std::size_t index);

// The Allocate request for `buffer`: its size, HostVisible.
v1::AllocateRequest allocate_request(const BufferDecl& buffer);

// The LoadKernel request for a built-in: its name and contract, no plugin path.
v1::LoadKernelRequest load_kernel_request(const builtin::KernelSpec& kernel);

// The PrepareGraph request, given the daemon's handles for the buffers and kernels in
// GraphDescription order. Precondition: the spans are as long as those vectors.
v1::PrepareGraphRequest prepare_request(const GraphDescription& graph, std::span<const std::uint64_t> buffer_handles,
                                        std::span<const std::uint64_t> kernel_handles);

}  // namespace accord::ctl
