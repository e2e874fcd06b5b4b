// Parser and CPU interpreter of the emulator's program format. The parser is the trust
// boundary: a blob comes from a client, so every number is range-checked before it is
// used in a size, and every shape relation an operation relies on is checked here, so
// the interpreter needs no checks of its own.
#include "daemon/devices/npu_emulator/npu_program.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

namespace accord::npu_emulator {
namespace {

constexpr std::string_view kMagic = "accord-npu-program";

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

std::string shape_text(const Tensor& t) {
  std::string s = "[";
  for (std::size_t i = 0; i < t.dims.size(); ++i) s += (i ? "," : "") + std::to_string(t.dims[i]);
  return s + "]";
}

class Parser {
 public:
  explicit Parser(std::string& error) : error_(error) {}

  bool fail(std::string message) {
    error_ = "line " + std::to_string(line_) + ": " + std::move(message);
    return false;
  }

  std::optional<std::uint32_t> find(std::string_view name) const {
    for (std::size_t i = 0; i < program_.tensors.size(); ++i)
      if (program_.tensors[i].name == name) return static_cast<std::uint32_t>(i);
    return std::nullopt;
  }

  bool declare(TensorRole role, const std::vector<std::string_view>& w) {
    if (w.size() < 4) return fail("'" + std::string(w[0]) + "' needs a name, a type and at least one dimension");
    if (w.size() > 3 + kMaxRank) return fail("tensor '" + std::string(w[1]) + "' has more than 4 dimensions");
    if (!valid_name(w[1])) return fail("'" + std::string(w[1]) + "' is not a valid name ([A-Za-z0-9_.-], 1..64)");
    if (find(w[1])) return fail("tensor '" + std::string(w[1]) + "' is declared twice");
    if (w[2] != "f32") return fail("tensor '" + std::string(w[1]) + "': type '" + std::string(w[2]) + "' is not f32");
    if (program_.tensors.size() >= kMaxTensors) return fail("more than 256 tensors");
    Tensor t;
    t.name = std::string(w[1]);
    t.role = role;
    t.elements = 1;
    for (std::size_t i = 3; i < w.size(); ++i) {
      std::uint64_t d = 0;
      const auto [end, ec] = std::from_chars(w[i].data(), w[i].data() + w[i].size(), d);
      if (ec != std::errc() || end != w[i].data() + w[i].size() || d == 0 || d > kMaxDim)
        return fail("tensor '" + t.name + "': dimension '" + std::string(w[i]) + "' is not in 1..16777216");
      // Both factors are <= 2^26 and 2^24 here, so the product cannot overflow.
      t.elements *= d;
      if (t.elements > kMaxTensorElements) return fail("tensor '" + t.name + "' has more than 2^26 elements");
      t.dims.push_back(static_cast<std::uint32_t>(d));
    }
    if (role == TensorRole::Intermediate) {
      t.scratch_offset = program_.scratch_elements;
      program_.scratch_elements += t.elements;
      if (program_.scratch_elements > kMaxScratchElements)
        return fail("intermediate tensors hold more than 2^27 elements together");
    } else {
      if (program_.arguments.size() >= kMaxArguments) return fail("more than 64 arguments");
      t.argument = static_cast<std::uint32_t>(program_.arguments.size());
      program_.arguments.push_back(static_cast<std::uint32_t>(program_.tensors.size()));
    }
    program_.tensors.push_back(std::move(t));
    return true;
  }

  bool operand(std::string_view name, std::uint32_t& index) {
    auto found = find(name);
    if (!found) return fail("tensor '" + std::string(name) + "' is not declared");
    index = *found;
    return true;
  }

  bool operation(const std::vector<std::string_view>& w) {
    static constexpr struct {
      std::string_view word;
      OpCode code;
      std::size_t operands;
    } kOps[] = {{"matmul", OpCode::MatMul, 3}, {"add", OpCode::Add, 3},   {"relu", OpCode::Relu, 2},
                {"softmax", OpCode::Softmax, 2}, {"copy", OpCode::Copy, 2}, {"stall", OpCode::Stall, 0}};
    const auto* op = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& o) { return o.word == w[0]; });
    if (op == std::end(kOps)) return fail("unknown operation '" + std::string(w[0]) + "'");
    if (w.size() != op->operands + 1)
      return fail("'" + std::string(w[0]) + "' takes " + std::to_string(op->operands) + " tensors, not " +
                  std::to_string(w.size() - 1));
    if (program_.operations.size() >= kMaxOperations) return fail("more than 1024 operations");
    Operation o;
    o.code = op->code;
    o.line = line_;
    if (o.code == OpCode::Stall) {
      program_.stalls = true;
      program_.operations.push_back(o);
      return true;
    }
    if (!operand(w[1], o.out) || !operand(w[2], o.a)) return false;
    if (op->operands == 3 && !operand(w[3], o.b)) return false;
    const auto& ts = program_.tensors;
    const Tensor& out = ts[o.out];
    const Tensor& a = ts[o.a];
    const Tensor& b = ts[o.b];
    if (out.role == TensorRole::Input)
      return fail("'" + std::string(w[0]) + "' writes input '" + out.name + "'; inputs are read-only");
    switch (o.code) {
      case OpCode::MatMul:
        if (a.dims.size() != 2 || b.dims.size() != 2 || out.dims.size() != 2)
          return fail("matmul needs 2-D tensors: " + out.name + shape_text(out) + " = " + a.name + shape_text(a) +
                      " x " + b.name + shape_text(b));
        if (a.dims[1] != b.dims[0] || out.dims[0] != a.dims[0] || out.dims[1] != b.dims[1])
          return fail("matmul shapes do not match: " + out.name + shape_text(out) + " = " + a.name + shape_text(a) +
                      " x " + b.name + shape_text(b));
        if (o.out == o.a || o.out == o.b) return fail("matmul output '" + out.name + "' is also an operand");
        break;
      case OpCode::Add:
        if (a.dims != out.dims || b.dims != out.dims)
          return fail("add needs equal shapes: " + out.name + shape_text(out) + " = " + a.name + shape_text(a) +
                      " + " + b.name + shape_text(b));
        break;
      case OpCode::Relu:
      case OpCode::Softmax:
        if (a.dims != out.dims)
          return fail(std::string(w[0]) + " needs equal shapes: " + out.name + shape_text(out) + " from " + a.name +
                      shape_text(a));
        break;
      case OpCode::Copy:
        if (a.elements != out.elements)
          return fail("copy needs equal element counts: " + out.name + shape_text(out) + " from " + a.name +
                      shape_text(a));
        break;
      case OpCode::Stall: break;
    }
    program_.operations.push_back(o);
    return true;
  }

  std::optional<Program> parse(std::span<const std::uint8_t> blob) {
    if (blob.empty()) return fail("the blob is empty"), std::nullopt;
    if (blob.size() > kMaxBlobBytes) return fail("the blob is larger than 1 MiB"), std::nullopt;
    for (std::size_t i = 0; i < blob.size(); ++i) {
      const std::uint8_t c = blob[i];
      if (c != '\n' && c != '\t' && c != '\r' && (c < 0x20 || c > 0x7e)) {
        error_ = "byte " + std::to_string(i) + " (value " + std::to_string(c) + ") is not printable ASCII text";
        return std::nullopt;
      }
    }
    const std::string_view text(reinterpret_cast<const char*>(blob.data()), blob.size());
    bool seen_magic = false;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_;
      if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      const auto w = split(line);
      if (w.empty()) continue;
      if (!seen_magic) {
        if (w.size() != 2 || w[0] != kMagic)
          return fail("the first line must be 'accord-npu-program 1'"), std::nullopt;
        if (w[1] != "1") return fail("program format version '" + std::string(w[1]) + "' is not 1"), std::nullopt;
        seen_magic = true;
        continue;
      }
      bool ok = false;
      if (w[0] == "input") ok = declare(TensorRole::Input, w);
      else if (w[0] == "output") ok = declare(TensorRole::Output, w);
      else if (w[0] == "tensor") ok = declare(TensorRole::Intermediate, w);
      else ok = operation(w);
      if (!ok) return std::nullopt;
    }
    if (!seen_magic) return fail("the blob has no 'accord-npu-program 1' line"), std::nullopt;
    const bool has_output = std::any_of(program_.tensors.begin(), program_.tensors.end(),
                                        [](const Tensor& t) { return t.role == TensorRole::Output; });
    if (!has_output) return fail("the program declares no output"), std::nullopt;
    return std::move(program_);
  }

 private:
  std::string& error_;
  Program program_;
  std::uint32_t line_ = 0;
};

void softmax_rows(const float* in, float* out, std::uint64_t rows, std::uint64_t cols) {
  for (std::uint64_t r = 0; r < rows; ++r) {
    const float* x = in + r * cols;
    float* y = out + r * cols;
    float max = -std::numeric_limits<float>::infinity();
    for (std::uint64_t c = 0; c < cols; ++c) max = std::max(max, x[c]);
    float sum = 0;
    for (std::uint64_t c = 0; c < cols; ++c) {
      y[c] = std::exp(x[c] - max);  // in place is fine: x[c] is read before y[c] is written
      sum += y[c];
    }
    for (std::uint64_t c = 0; c < cols; ++c) y[c] /= sum;
  }
}

}  // namespace

std::optional<Program> parse_program(std::span<const std::uint8_t> blob, std::string& error) {
  return Parser(error).parse(blob);
}

bool run_program(const Program& program, std::span<void* const> arguments, const std::function<bool()>& stall) {
  // Intermediates live for one execution only, so concurrent executions of one graph on
  // two queues never share scratch.
  std::vector<float> scratch(program.scratch_elements);
  auto data = [&](std::uint32_t index) -> float* {
    const Tensor& t = program.tensors[index];
    if (t.role == TensorRole::Intermediate) return scratch.data() + t.scratch_offset;
    return static_cast<float*>(arguments[t.argument]);
  };
  for (const Operation& op : program.operations) {
    if (op.code == OpCode::Stall) {
      if (!stall()) return false;
      continue;
    }
    const Tensor& out_t = program.tensors[op.out];
    const Tensor& a_t = program.tensors[op.a];
    float* out = data(op.out);
    const float* a = data(op.a);
    const float* b = data(op.b);
    const std::uint64_t n = out_t.elements;
    switch (op.code) {
      case OpCode::MatMul: {
        const std::uint64_t rows = a_t.dims[0], inner = a_t.dims[1], cols = out_t.dims[1];
        for (std::uint64_t i = 0; i < rows; ++i)
          for (std::uint64_t j = 0; j < cols; ++j) {
            float sum = 0;
            for (std::uint64_t k = 0; k < inner; ++k) sum += a[i * inner + k] * b[k * cols + j];
            out[i * cols + j] = sum;
          }
        break;
      }
      case OpCode::Add:
        for (std::uint64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
        break;
      case OpCode::Relu:
        for (std::uint64_t i = 0; i < n; ++i) out[i] = a[i] > 0 ? a[i] : 0.0f;
        break;
      case OpCode::Softmax: {
        const std::uint64_t cols = out_t.dims.back();
        softmax_rows(a, out, n / cols, cols);
        break;
      }
      case OpCode::Copy:
        if (out != a) std::memmove(out, a, n * sizeof(float));
        break;
      case OpCode::Stall: break;
    }
  }
  return true;
}

}  // namespace accord::npu_emulator
