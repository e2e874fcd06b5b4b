#include "client/tools/accordctl/graph_file.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "client/tools/accordctl/proto_text.h"

namespace accord::ctl {
namespace {

// ordered_json keeps the file's key order, so buffers are allocated as written.
using Json = nlohmann::ordered_json;

// Where a value sits in the file: "field \"buffers.x\"" or "node 3, field \"copy.src\"".
struct Place {
  std::optional<std::size_t> node;
  std::string field;

  std::string text() const {
    std::string out = node ? "node " + std::to_string(*node) + ", " : "";
    return out + "field \"" + field + "\"";
  }
  Place child(std::string_view name) const {
    return {node, field.empty() ? std::string(name) : field + "." + std::string(name)};
  }
  Place item(std::size_t i) const { return {node, field + "[" + std::to_string(i) + "]"}; }
};

// A JSON value quoted in an error message, cut short so a large node does not flood
// the terminal. Parsed input is valid UTF-8, so dump() cannot throw here.
std::string brief(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

Status error_at(const Place& place, const std::string& what) { return invalid_error(place.text() + ": " + what); }

std::string quoted_list(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i > 0 ? ", " : "") + std::string(names[i]);
  return out;
}

// Every key of `object` must be one of `allowed`: a misspelt optional field would
// otherwise be ignored and the graph silently differ from what was meant.
Status check_fields(const Json& object, const Place& place, std::span<const std::string_view> allowed) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it.key() == a;
    if (!known) return error_at(place.child(it.key()), "unknown field (expected " + quoted_list(allowed) + ")");
  }
  return Status();
}

Result<std::uint64_t> unsigned_field(const Json& object, std::string_view key, const Place& place,
                                     std::uint64_t min, std::uint64_t max) {
  const Place at = place.child(key);
  const auto it = object.find(key);
  if (it == object.end()) return error_at(at, "missing");
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() < min || it->get<std::uint64_t>() > max)
    return error_at(at, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                            ", got " + brief(*it));
  return it->get<std::uint64_t>();
}

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '-') return false;
  return true;
}

std::optional<std::uint64_t> parse_offset(std::string_view digits) {
  std::uint64_t value = 0;
  if (digits.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

class Parser {
 public:
  Result<GraphDescription> parse(const Json& root);

 private:
  Status parse_buffers(const Json& buffers);
  Result<ViewRef> parse_view(const Json& value, const Place& place) const;
  Result<ViewRef> view_field(const Json& object, std::string_view key, const Place& place) const;
  Result<GraphNode> parse_node(const Json& node, std::size_t index);
  Result<GraphNode> parse_fill(const Json& op, const Place& place) const;
  Result<GraphNode> parse_copy(const Json& op, const Place& place) const;
  Result<GraphNode> parse_kernel(const Json& op, const Place& place);
  std::size_t intern_kernel(builtin::KernelSpec spec);

  GraphDescription graph_;
};

Result<GraphDescription> Parser::parse(const Json& root) {
  if (!root.is_object()) return invalid_error("the graph file must hold a JSON object with \"buffers\" and \"nodes\"");
  static constexpr std::string_view kTop[] = {"buffers", "nodes"};
  ACCORD_RETURN_IF_ERROR(check_fields(root, Place{std::nullopt, ""}, kTop));
  const auto buffers = root.find("buffers");
  if (buffers == root.end()) return error_at({std::nullopt, "buffers"}, "missing");
  ACCORD_RETURN_IF_ERROR(parse_buffers(*buffers));
  const auto nodes = root.find("nodes");
  if (nodes == root.end()) return error_at({std::nullopt, "nodes"}, "missing");
  if (!nodes->is_array() || nodes->empty())
    return error_at({std::nullopt, "nodes"}, "must be a non-empty array of {\"fill\"|\"copy\"|\"kernel\": {...}}");
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    ACCORD_ASSIGN_OR_RETURN(GraphNode node, parse_node((*nodes)[i], i));
    graph_.nodes.push_back(std::move(node));
  }
  return std::move(graph_);
}

Status Parser::parse_buffers(const Json& buffers) {
  const Place place{std::nullopt, "buffers"};
  if (!buffers.is_object() || buffers.empty())
    return error_at(place, "must be a non-empty object of name: size in bytes");
  for (auto it = buffers.begin(); it != buffers.end(); ++it) {
    const std::string& name = it.key();
    const Json& size = it.value();
    const Place at = place.child(name);
    if (!valid_name(name))
      return error_at(at, "a buffer name is letters, digits, '_', '.' and '-', starting with a letter or '_'");
    if (!size.is_number_unsigned() || size.get<std::uint64_t>() == 0)
      return error_at(at, "size must be an integer >= 1 (bytes), got " + brief(size));
    graph_.buffers.push_back({name, size.get<std::uint64_t>()});
  }
  return Status();
}

Result<ViewRef> Parser::parse_view(const Json& value, const Place& place) const {
  if (!value.is_string()) return error_at(place, "a view must be a string \"name\" or \"name[begin:end]\", got " + brief(value));
  const std::string& text = value.get_ref<const std::string&>();
  const std::string_view view = text;
  const std::size_t open = view.find('[');
  const std::string_view name = view.substr(0, open);
  ViewRef out;
  std::optional<std::uint64_t> begin;
  std::optional<std::uint64_t> end;
  if (open != std::string_view::npos) {
    const std::size_t colon = view.find(':', open);
    if (view.back() == ']' && colon != std::string_view::npos) {
      begin = parse_offset(view.substr(open + 1, colon - open - 1));
      end = parse_offset(view.substr(colon + 1, view.size() - colon - 2));
    }
    if (!begin || !end)
      return error_at(place, "bad view '" + text + "': expected name or name[begin:end] with byte offsets");
  }
  if (!valid_name(name))
    return error_at(place, "bad view '" + text + "': expected name or name[begin:end] with byte offsets");
  std::vector<std::string_view> declared;
  for (const BufferDecl& b : graph_.buffers) declared.push_back(b.name);
  out.buffer = graph_.buffers.size();
  for (std::size_t i = 0; i < graph_.buffers.size(); ++i)
    if (graph_.buffers[i].name == name) out.buffer = i;
  if (out.buffer == graph_.buffers.size())
    return error_at(place, "unknown buffer '" + std::string(name) + "' (declared: " + quoted_list(declared) + ")");
  const BufferDecl& buffer = graph_.buffers[out.buffer];
  if (!begin) {
    out.whole = true;
    out.length = buffer.bytes;
    return out;
  }
  if (*end <= *begin)
    return error_at(place, "view '" + text + "' is empty or reversed (end must be greater than begin)");
  if (*end > buffer.bytes)
    return error_at(place, "view '" + text + "' ends at byte " + std::to_string(*end) + ", past the end of buffer '" +
                               buffer.name + "' (" + std::to_string(buffer.bytes) + " bytes)");
  out.offset = *begin;
  out.length = *end - *begin;
  return out;
}

Result<ViewRef> Parser::view_field(const Json& object, std::string_view key, const Place& place) const {
  const auto it = object.find(key);
  if (it == object.end()) return error_at(place.child(key), "missing");
  return parse_view(*it, place.child(key));
}

Result<GraphNode> Parser::parse_node(const Json& node, std::size_t index) {
  const std::string shape = "expected an object with exactly one of \"fill\", \"copy\", \"kernel\"";
  if (!node.is_object() || node.size() != 1)
    return invalid_error("node " + std::to_string(index) + ": " + shape + ", got " + brief(node));
  const std::string& kind = node.begin().key();
  const Json& op = node.begin().value();
  const Place place{index, kind};
  if (kind != "fill" && kind != "copy" && kind != "kernel")
    return invalid_error("node " + std::to_string(index) + ": unknown operation \"" + kind + "\" (" + shape + ")");
  if (!op.is_object()) return error_at(place, "must be an object, got " + brief(op));
  if (kind == "fill") return parse_fill(op, place);
  if (kind == "copy") return parse_copy(op, place);
  return parse_kernel(op, place);
}

Result<GraphNode> Parser::parse_fill(const Json& op, const Place& place) const {
  static constexpr std::string_view kFields[] = {"dst", "value"};
  ACCORD_RETURN_IF_ERROR(check_fields(op, place, kFields));
  FillNode fill;
  ACCORD_ASSIGN_OR_RETURN(fill.dst, view_field(op, "dst", place));
  ACCORD_ASSIGN_OR_RETURN(const std::uint64_t value, unsigned_field(op, "value", place, 0, 255));
  fill.value = static_cast<std::uint32_t>(value);
  return GraphNode(fill);
}

Result<GraphNode> Parser::parse_copy(const Json& op, const Place& place) const {
  static constexpr std::string_view kFields[] = {"dst", "src", "lane"};
  ACCORD_RETURN_IF_ERROR(check_fields(op, place, kFields));
  CopyNode copy;
  ACCORD_ASSIGN_OR_RETURN(copy.dst, view_field(op, "dst", place));
  ACCORD_ASSIGN_OR_RETURN(copy.src, view_field(op, "src", place));
  if (copy.src.length != copy.dst.length)
    return error_at(place.child("src"), "length " + std::to_string(copy.src.length) + " differs from dst length " +
                                            std::to_string(copy.dst.length));
  if (const auto lane = op.find("lane"); lane != op.end()) {
    const auto parsed = lane->is_string() ? copy_lane_from_name(lane->get_ref<const std::string&>()) : std::nullopt;
    if (!parsed) return error_at(place.child("lane"), "unknown lane " + brief(*lane) + " (expected upload, compute or download)");
    copy.lane = *parsed;
  }
  return GraphNode(copy);
}

Result<GraphNode> Parser::parse_kernel(const Json& op, const Place& place) {
  const auto name_it = op.find("name");
  if (name_it == op.end()) return error_at(place.child("name"), "missing");
  const std::string name = name_it->is_string() ? name_it->get<std::string>() : brief(*name_it);
  static constexpr std::uint64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();
  const auto u32 = [&](std::string_view key) -> Result<std::uint32_t> {
    ACCORD_ASSIGN_OR_RETURN(const std::uint64_t v, unsigned_field(op, key, place, 1, kMaxU32));
    return static_cast<std::uint32_t>(v);
  };
  builtin::KernelSpec spec;
  if (name == builtin::kAddF32 || name == builtin::kReluF32) {
    static constexpr std::string_view kFields[] = {"name", "bindings", "allow_aliasing", "count"};
    ACCORD_RETURN_IF_ERROR(check_fields(op, place, kFields));
    ACCORD_ASSIGN_OR_RETURN(const std::uint32_t count, u32("count"));
    spec = name == builtin::kAddF32 ? builtin::add_f32(count) : builtin::relu_f32(count);
  } else if (name == builtin::kSaxpyF32) {
    static constexpr std::string_view kFields[] = {"name", "bindings", "allow_aliasing", "count", "a"};
    ACCORD_RETURN_IF_ERROR(check_fields(op, place, kFields));
    ACCORD_ASSIGN_OR_RETURN(const std::uint32_t count, u32("count"));
    const auto a = op.find("a");
    if (a == op.end()) return error_at(place.child("a"), "missing");
    if (!a->is_number() || !std::isfinite(static_cast<float>(a->get<double>())))
      return error_at(place.child("a"), "must be a finite number, got " + brief(*a));
    spec = builtin::saxpy_f32(count, static_cast<float>(a->get<double>()));
  } else if (name == builtin::kMatmulF32) {
    static constexpr std::string_view kFields[] = {"name", "bindings", "allow_aliasing", "m", "k", "n"};
    ACCORD_RETURN_IF_ERROR(check_fields(op, place, kFields));
    ACCORD_ASSIGN_OR_RETURN(const std::uint32_t m, u32("m"));
    ACCORD_ASSIGN_OR_RETURN(const std::uint32_t k, u32("k"));
    ACCORD_ASSIGN_OR_RETURN(const std::uint32_t n, u32("n"));
    spec = builtin::matmul_f32(m, k, n);
  } else {
    static constexpr std::string_view kBuiltins[] = {builtin::kAddF32, builtin::kReluF32, builtin::kSaxpyF32,
                                                     builtin::kMatmulF32};
    return error_at(place.child("name"), "unknown kernel '" + name + "' (built-ins: " + quoted_list(kBuiltins) + ")");
  }

  KernelNode node;
  const Place bindings_at = place.child("bindings");
  const auto bindings = op.find("bindings");
  if (bindings == op.end()) return error_at(bindings_at, "missing");
  const std::size_t expected = spec.contract.bindings.size();
  if (!bindings->is_array() || bindings->size() != expected) {
    std::vector<std::string_view> roles;
    for (const BindingContract& b : spec.contract.bindings)
      roles.push_back(std::string_view(b.layout).substr(0, b.layout.find(' ')));
    return error_at(bindings_at, name + " takes an array of " + std::to_string(expected) + " views (" +
                                     quoted_list(roles) + "), got " + brief(*bindings));
  }
  for (std::size_t i = 0; i < expected; ++i) {
    ACCORD_ASSIGN_OR_RETURN(ViewRef view, parse_view((*bindings)[i], bindings_at.item(i)));
    node.bindings.push_back(view);
  }
  if (const auto alias = op.find("allow_aliasing"); alias != op.end()) {
    if (!alias->is_boolean()) return error_at(place.child("allow_aliasing"), "must be true or false, got " + brief(*alias));
    node.allow_aliasing = alias->get<bool>();
  }
  node.kernel = intern_kernel(std::move(spec));
  return GraphNode(std::move(node));
}

// One LoadKernel per distinct specialization: nodes that name the same kernel with the
// same parameters share a handle, as a client program would.
std::size_t Parser::intern_kernel(builtin::KernelSpec spec) {
  for (std::size_t i = 0; i < graph_.kernels.size(); ++i)
    if (graph_.kernels[i].name == spec.name && graph_.kernels[i].contract.constants == spec.contract.constants) return i;
  graph_.kernels.push_back(std::move(spec));
  return graph_.kernels.size() - 1;
}

v1::BufferView to_proto(const ViewRef& view, std::span<const std::uint64_t> buffer_handles) {
  v1::BufferView out;
  out.set_buffer(buffer_handles[view.buffer]);
  out.set_offset(view.offset);
  out.set_length(view.length);
  return out;
}

}  // namespace

Result<GraphDescription> parse_graph_description(std::string_view json_text) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    // what() reads "[json.exception.parse_error.101] parse error at line 3, ..."; the
    // bracketed id means nothing to an operator.
    std::string_view what = e.what();
    if (const std::size_t close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
    return invalid_error("not valid JSON: " + std::string(what));
  }
  return Parser().parse(root);
}

std::string view_text(const GraphDescription& graph, const ViewRef& view) {
  const std::string& name = graph.buffers.at(view.buffer).name;
  if (view.whole) return name;
  return name + "[" + std::to_string(view.offset) + ":" + std::to_string(view.offset + view.length) + "]";
}

std::string describe_node(const GraphDescription& graph, std::size_t index) {
  const GraphNode& node = graph.nodes.at(index);
  if (const auto* fill = std::get_if<FillNode>(&node))
    return "fill " + view_text(graph, fill->dst) + " = " + std::to_string(fill->value);
  if (const auto* copy = std::get_if<CopyNode>(&node))
    return "copy " + view_text(graph, copy->dst) + " <- " + view_text(graph, copy->src);
  const auto& kernel = std::get<KernelNode>(node);
  std::string out = graph.kernels.at(kernel.kernel).name + "(";
  for (std::size_t i = 0; i < kernel.bindings.size(); ++i)
    out += (i > 0 ? ", " : "") + view_text(graph, kernel.bindings[i]);
  return out + ")";
}

v1::AllocateRequest allocate_request(const BufferDecl& buffer) {
  v1::AllocateRequest request;
  request.set_bytes(buffer.bytes);
  request.mutable_placement()->set_kind(v1::PLACEMENT_KIND_HOST_VISIBLE);
  return request;
}

v1::LoadKernelRequest load_kernel_request(const builtin::KernelSpec& kernel) {
  v1::LoadKernelRequest request;
  request.set_name(kernel.name);
  *request.mutable_contract() = to_proto(kernel.contract);
  return request;
}

v1::PrepareGraphRequest prepare_request(const GraphDescription& graph, std::span<const std::uint64_t> buffer_handles,
                                        std::span<const std::uint64_t> kernel_handles) {
  v1::PrepareGraphRequest request;
  for (const GraphNode& node : graph.nodes) {
    v1::Node* out = request.add_nodes();
    if (const auto* fill = std::get_if<FillNode>(&node)) {
      *out->mutable_fill()->mutable_destination() = to_proto(fill->dst, buffer_handles);
      out->mutable_fill()->set_value(fill->value);
    } else if (const auto* copy = std::get_if<CopyNode>(&node)) {
      *out->mutable_copy()->mutable_destination() = to_proto(copy->dst, buffer_handles);
      *out->mutable_copy()->mutable_source() = to_proto(copy->src, buffer_handles);
      out->mutable_copy()->set_lane(copy->lane);
    } else {
      const auto& kernel = std::get<KernelNode>(node);
      v1::KernelOp* op = out->mutable_host_kernel();
      op->set_kernel(kernel_handles[kernel.kernel]);
      for (const ViewRef& view : kernel.bindings) *op->add_bindings() = to_proto(view, buffer_handles);
      op->set_allow_aliasing(kernel.allow_aliasing);
    }
  }
  return request;
}

}  // namespace accord::ctl
