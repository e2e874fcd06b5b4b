// `accordctl devices` (client/tools/accordctl/device_view.cpp): the table and JSON built
// from a ListDevices answer with a present host, a lost GPU and an absent backend.
// Pure formatting; integration/devices_test.cpp runs the command against accordd.
#include <catch2/catch.hpp>

#include "client/tools/accordctl/device_view.h"

using namespace accord;

namespace {

v1::ListDevicesResponse sample() {
  v1::ListDevicesResponse response;
  v1::Device* host = response.add_devices();
  host->set_index(0);
  host->set_kind("host");
  host->set_backend("host");
  host->set_name("host");
  host->set_target("x86_64");
  host->set_state("present");
  host->add_lanes(v1::LANE_HOST);
  host->add_placements(v1::PLACEMENT_KIND_HOST_VISIBLE);
  v1::Device* gpu = response.add_devices();
  gpu->set_index(1);
  gpu->set_kind("gpu");
  gpu->set_ordinal(1);
  gpu->set_backend("cuda");
  gpu->set_name("cuda:1 (H200)");
  gpu->set_target("sm_90");
  gpu->set_memory_bytes(std::uint64_t{141} << 30);
  gpu->set_memory_free(std::uint64_t{140} << 30);
  gpu->set_state("lost");
  gpu->set_reason("watchdog: region did not complete in 60 s");
  v1::Device* absent = response.add_devices();
  absent->set_name("level_zero");
  absent->set_backend("level_zero");
  absent->set_state("absent");
  absent->set_reason("level_zero: libze_loader.so.1 not found");
  return response;
}

}  // namespace

TEST_CASE("a device's id is its kind and ordinal, the host's just host", "[accordctl][devices]") {
  const v1::ListDevicesResponse response = sample();
  CHECK(ctl::device_id(response.devices(0)) == "host");
  CHECK(ctl::device_id(response.devices(1)) == "gpu:1");
  CHECK(ctl::device_id(response.devices(2)) == "-");  // an absent backend has no device
}

TEST_CASE("the devices table shows present, lost and absent entries with their reasons",
          "[accordctl][devices]") {
  CHECK(ctl::devices_table(sample()).render() ==
        "INDEX  ID     BACKEND     NAME           TARGET  MEMORY                      STATE    REASON\n"
        "    0  host   host        host           x86_64  -                           present\n"
        "    1  gpu:1  cuda        cuda:1 (H200)  sm_90   141.0 GiB (140.0 GiB free)  lost     watchdog: region did not complete in 60 s\n"
        "    -  -      level_zero  level_zero     -       -                           absent   level_zero: libze_loader.so.1 not found\n");
}

TEST_CASE("devices --json carries state, reason, backend, ordinal and memory", "[accordctl][devices]") {
  const nlohmann::ordered_json json = ctl::devices_json(sample());
  const auto& devices = json.at("devices");
  REQUIRE(devices.size() == 3);
  CHECK(devices[0].at("id") == "host");
  CHECK(devices[0].at("state") == "present");
  CHECK(devices[0].at("reason") == "");
  CHECK(devices[0].at("lanes") == nlohmann::json::array({"host"}));
  CHECK(devices[0].at("placements") == nlohmann::json::array({"host-visible"}));
  CHECK(devices[1].at("id") == "gpu:1");
  CHECK(devices[1].at("index") == 1);
  CHECK(devices[1].at("ordinal") == 1);
  CHECK(devices[1].at("backend") == "cuda");
  CHECK(devices[1].at("memory_bytes") == std::uint64_t{141} << 30);
  CHECK(devices[1].at("state") == "lost");
  CHECK(devices[1].at("reason") == "watchdog: region did not complete in 60 s");
  CHECK(devices[2].at("index").is_null());
  CHECK(devices[2].at("id").is_null());
  CHECK(devices[2].at("backend") == "level_zero");
  CHECK(devices[2].at("state") == "absent");
  CHECK(devices[2].at("reason") == "level_zero: libze_loader.so.1 not found");
}
