// How `accordctl devices` shows a ListDevices answer: one row per device, present or
// lost, then one per backend that opened no device, as an aligned table or as JSON.
// Pure formatting of the proto message (no daemon), so tests/unit/accordctl covers it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "accord/v1/accord.pb.h"
#include "client/tools/accordctl/table.h"

namespace accord::ctl {

// The device's id as clients name it: "host", "gpu:0", "npu:1"; "-" for an absent
// backend, which has no device. A kind this build does not know prints as given
// ("tpu:0").
std::string device_id(const v1::Device& device);

// Columns INDEX, ID, BACKEND, NAME, TARGET, STATE, REASON. An absent backend shows "-"
// for index, id and target; REASON is blank for a present device.
Table devices_table(const v1::ListDevicesResponse& response);

// {"devices": [...]}, each with index, id, kind, ordinal (null for an absent backend),
// backend, name, target, memory_bytes, state, reason, lanes and placements.
nlohmann::ordered_json devices_json(const v1::ListDevicesResponse& response);

}  // namespace accord::ctl
