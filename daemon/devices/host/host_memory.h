// HostMemory: HostVisible storage of the host device, sealed memfd pages
// (common/memfd_pages.h), shared with the NPU backend's NpuLocal and Shared memory.
#pragma once

#include "daemon/devices/common/memfd_pages.h"

namespace accord::devices::host {

using HostMemory = common::MemfdPages;

}  // namespace accord::devices::host
