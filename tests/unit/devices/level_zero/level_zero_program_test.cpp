// Loading NPU programs on the level_zero backend: a blob the driver refuses is Invalid
// with the driver's build log, and a contract that does not match the program's
// argument properties (count, direction, bytes, constants) is Invalid naming the
// argument. Running programs is covered in level_zero_device_test.cpp.
#include <catch2/catch.hpp>

#include "daemon/devices/level_zero/level_zero_program.h"
#include "tests/unit/devices/level_zero/level_zero_test_support.h"
#include "tests/unit/devices/npu_emulator/npu_reference.h"

namespace accord::devices::level_zero::testing {

TEST_CASE("a program keeps its name and contract", "[npu][level_zero]") {
  auto devices = open_npus();
  const auto c = npu_testing::program_cases()[0];
  const KernelContract contract = contract_for(c.elements, c.output);
  auto code = devices[0]->load(program_image(*devices[0], "mm", c.text), contract);
  REQUIRE(code.ok());
  CHECK((*code)->name() == "mm");
  CHECK((*code)->contract().bindings.size() == 3);
}

TEST_CASE("a bad blob is refused at load with the driver's build log", "[npu][level_zero]") {
  auto devices = open_npus();
  auto code = devices[0]->load(
      program_image(*devices[0], "bad", "accord-npu-program 1\ninput a f32 4\noutput b f32 4\nrelu b q\n"),
      contract_for({4, 4}, {false, true}));
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Invalid);
  const std::string message(code.status().message());
  CHECK_THAT(message, Catch::StartsWith("pfnGraphCreate: ZE_RESULT_ERROR_INVALID_NATIVE_BINARY"));
  CHECK_THAT(message, Catch::Contains("NPU program 'bad' refused"));
  CHECK_THAT(message, Catch::Contains("line 4: tensor 'q' is not declared"));
}

TEST_CASE("code without a program image, or for another device, is Unsupported", "[npu][level_zero]") {
  auto devices = open_npus();
  CodeImage builtin;
  builtin.name = "accord.add_f32";
  builtin.device = devices[0]->info().id();
  CHECK(devices[0]->load(builtin, {}).status().kind() == ErrorKind::Unsupported);
  CodeImage elsewhere = program_image(*devices[1], "p", npu_testing::program_cases()[2].text);
  CHECK(devices[0]->load(elsewhere, contract_for({100, 100}, {false, true})).status().kind() ==
        ErrorKind::Unsupported);
}

TEST_CASE("a contract that does not match the program is Invalid, naming the argument", "[npu][level_zero]") {
  auto devices = open_npus();
  Device& npu = *devices[0];
  const auto c = npu_testing::program_cases()[0];  // matmul: a f32[5,7], b f32[7,3] -> c f32[5,3]
  const CodeImage image = program_image(npu, "mm", c.text);

  SECTION("binding count") {
    KernelContract contract = contract_for({35, 21}, {false, false});
    auto code = npu.load(image, contract);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK_THAT(std::string(code.status().message()), Catch::Contains("has 3 arguments; the contract declares 2"));
  }
  SECTION("direction") {
    KernelContract contract = contract_for(c.elements, c.output);
    contract.bindings[2].access = Access::ReadWrite;
    auto code = npu.load(image, contract);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK_THAT(std::string(code.status().message()),
               Catch::Contains("argument 2 ('c', output): the program's access is Write; the contract declares "
                               "ReadWrite"));
  }
  SECTION("bytes") {
    KernelContract contract = contract_for(c.elements, c.output);
    contract.bindings[1].bytes = 80;
    auto code = npu.load(image, contract);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK_THAT(std::string(code.status().message()),
               Catch::Contains("argument 1 ('b', input) is 84 bytes (f32[7,3,1,1,1]); the contract declares 80"));
  }
  SECTION("constants") {
    KernelContract contract = contract_for(c.elements, c.output);
    append_constant(contract.constants, std::uint32_t{7});
    auto code = npu.load(image, contract);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK_THAT(std::string(code.status().message()), Catch::Contains("takes no constants"));
  }
}

TEST_CASE("check_program_contract accepts the contract the arguments imply", "[npu][level_zero]") {
  const std::vector<NpuArgument> arguments = {{"x", false, 16, "f32[4]"}, {"y", true, 16, "f32[4]"}};
  CHECK(check_program_contract("p", arguments, contract_for({4, 4}, {false, true})).ok());
  CHECK_FALSE(check_program_contract("p", arguments, contract_for({4, 4}, {true, true})).ok());
}

}  // namespace accord::devices::level_zero::testing
