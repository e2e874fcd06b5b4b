// The emulator's program format, parsed directly (no loader): what is accepted, every
// refusal names its line and reason, and no blob, however mangled, makes the parser
// read outside it or accept an inconsistent program. The neighbouring graph tests run
// programs through the real loader.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "daemon/devices/npu_emulator/npu_program.h"
#include "tests/unit/devices/npu_emulator/npu_reference.h"

namespace accord::npu_emulator {
namespace {

std::optional<Program> parse(const std::string& text, std::string& error) {
  return parse_program(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), error);
}

}  // namespace

TEST_CASE("every reference program parses, with its arguments in declaration order", "[npu][npu_emulator]") {
  for (const auto& c : npu_testing::program_cases()) {
    INFO(c.name);
    std::string error;
    auto program = parse(c.text, error);
    REQUIRE(program);
    REQUIRE(program->arguments.size() == c.elements.size());
    for (std::size_t i = 0; i < c.elements.size(); ++i) {
      const Tensor& t = program->tensors[program->arguments[i]];
      CHECK(t.elements == c.elements[i]);
      CHECK((t.role == TensorRole::Output) == c.output[i]);
    }
  }
}

TEST_CASE("a bad program is refused with a message naming what is wrong", "[npu][npu_emulator]") {
  const std::string h = "accord-npu-program 1\n";
  const struct {
    std::string text;
    const char* message;
  } cases[] = {
      {"", "empty"},
      {"hello 1\n", "first line must be 'accord-npu-program 1'"},
      {"accord-npu-program 2\n", "version '2' is not 1"},
      {"# only a comment\n", "no 'accord-npu-program 1' line"},
      {h + "input a f32 4\n", "declares no output"},
      {h + "input a f16 4\noutput b f32 4\n", "type 'f16' is not f32"},
      {h + "input a f32 0\n", "dimension '0' is not in 1..16777216"},
      {h + "input a f32 3x\n", "dimension '3x'"},
      {h + "input a f32 -1\n", "dimension '-1'"},
      {h + "input a f32 99999999999999999999\n", "dimension '99999999999999999999'"},
      {h + "input a f32 16777216 16777216\n", "more than 2^26 elements"},
      {h + "input a f32 1 1 1 1 1\n", "more than 4 dimensions"},
      {h + "input a f32\n", "at least one dimension"},
      {h + "input a f32 4\ninput a f32 4\n", "declared twice"},
      {h + "input a/b f32 4\n", "not a valid name"},
      {h + "input a f32 4\noutput b f32 4\nrelu b c\n", "tensor 'c' is not declared"},
      {h + "input a f32 4\noutput b f32 4\nfrobnicate b a\n", "unknown operation 'frobnicate'"},
      {h + "input a f32 4\noutput b f32 4\nrelu b\n", "takes 2 tensors, not 1"},
      {h + "input a f32 4\noutput b f32 4\nrelu a b\n", "writes input 'a'"},
      {h + "input a f32 4\noutput b f32 5\nrelu b a\n", "equal shapes"},
      {h + "input a f32 4\noutput b f32 5\ncopy b a\n", "equal element counts"},
      {h + "input a f32 2 3\ninput b f32 4 2\noutput c f32 2 2\nmatmul c a b\n", "matmul shapes do not match"},
      {h + "input a f32 6\ninput b f32 6\noutput c f32 6\nmatmul c a b\n", "matmul needs 2-D tensors"},
      {h + "input a f32 2 2\noutput c f32 2 2\nmatmul c c a\n", "is also an operand"},
      {h + "input a f32 4\noutput b f32 4\nadd b a\n", "takes 3 tensors"},
      {h + "tensor t f32 8192 8192\ntensor u f32 8192 8192\ntensor v f32 8192 8192\n", "2^27 elements"},
      {h + std::string("input a f32 4\x01\n"), "not printable ASCII"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    std::string error;
    CHECK_FALSE(parse(c.text, error));
    CHECK_THAT(error, Catch::Contains(c.message));
  }
}

TEST_CASE("refusals name the line at fault", "[npu][npu_emulator]") {
  std::string error;
  CHECK_FALSE(parse("accord-npu-program 1\n\n# c\ninput a f32 4\noutput b f32 4\nrelu b zz\n", error));
  CHECK_THAT(error, Catch::StartsWith("line 6: "));
}

TEST_CASE("a program runs on its arguments and writes only its outputs", "[npu][npu_emulator]") {
  std::string error;
  auto program = parse(npu_testing::program_cases()[5].text, error);
  REQUIRE(program);
  auto args = npu_testing::random_arguments(npu_testing::program_cases()[5], 7);
  auto expected = args;
  npu_testing::program_cases()[5].reference(expected);
  const auto inputs = args;
  std::vector<void*> pointers;
  for (auto& a : args) pointers.push_back(a.data());
  REQUIRE(run_program(*program, pointers, [] { return true; }));
  for (std::size_t i = 0; i + 1 < args.size(); ++i) CHECK(args[i] == inputs[i]);
  for (std::size_t i = 0; i < expected.back().size(); ++i) CHECK(args.back()[i] == Approx(expected.back()[i]));
}

TEST_CASE("mangled blobs are parsed safely: refused or consistent", "[npu][npu_emulator]") {
  // Random byte edits of valid programs: the parser must never crash or read past the
  // blob (ASan checks that), and whatever it accepts must be internally consistent.
  std::mt19937 rng(1234);
  const auto cases = npu_testing::program_cases();
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = cases[static_cast<std::size_t>(round) % cases.size()].text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = static_cast<char>("0123456789 \nabcxyz#-"[rng() % 20]); break;
        case 1: text.erase(at, 1 + rng() % 3); break;
        default: text.insert(at, 1, static_cast<char>("9 \nmatmul"[rng() % 9])); break;
      }
      if (text.empty()) text = "x";
    }
    std::string error;
    auto program = parse(text, error);
    if (!program) {
      CHECK_FALSE(error.empty());
      continue;
    }
    ++accepted;
    for (const Operation& op : program->operations) {
      if (op.code == OpCode::Stall) continue;
      REQUIRE(op.out < program->tensors.size());
      REQUIRE(op.a < program->tensors.size());
      REQUIRE(op.b < program->tensors.size());
      CHECK(program->tensors[op.out].role != TensorRole::Input);
    }
    // Run what was accepted on buffers of exactly the argument sizes: any read or write
    // outside them is an ASan report.
    std::uint64_t total = program->scratch_elements;
    for (std::uint32_t t : program->arguments) total += program->tensors[t].elements;
    if (total > (1u << 20)) continue;
    std::vector<std::vector<float>> buffers;
    std::vector<void*> pointers;
    for (std::uint32_t t : program->arguments) buffers.emplace_back(program->tensors[t].elements, 0.5f);
    for (auto& b : buffers) pointers.push_back(b.data());
    run_program(*program, pointers, [] { return false; });
  }
  CHECK(accepted > 0);  // the edits leave some programs valid, so both paths ran
}

}  // namespace accord::npu_emulator
