// Opening Level Zero for NPUs: driver and device discovery, one context per driver, the
// graph extension table. Runs once per factory call, not on any hot path.
#include "daemon/devices/level_zero/level_zero_runtime.h"

#include <cstring>

#include "daemon/devices/level_zero/level_zero_status.h"

namespace accord::devices::level_zero {
namespace {

std::string version_text(std::uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xff) + "." + std::to_string(v & 0xffff);
}

// Whether the driver advertises the graph extension at version 1.4 or later.
Result<bool> has_graph_extension(const ZeSymbols& ze, ze_driver_handle_t driver) {
  std::uint32_t count = 0;
  ACCORD_ZE_RETURN_IF_ERROR("zeDriverGetExtensionProperties", ze.zeDriverGetExtensionProperties(driver, &count, nullptr),
                            "counting driver extensions");
  std::vector<ze_driver_extension_properties_t> extensions(count);
  ACCORD_ZE_RETURN_IF_ERROR("zeDriverGetExtensionProperties",
                            ze.zeDriverGetExtensionProperties(driver, &count, extensions.data()),
                            "listing driver extensions");
  for (std::uint32_t i = 0; i < count; ++i) {
    extensions[i].name[ZE_MAX_EXTENSION_NAME - 1] = '\0';
    if (std::strcmp(extensions[i].name, ZE_GRAPH_EXT_NAME) == 0 &&
        ZE_MAJOR_VERSION(extensions[i].version) == 1 && ZE_MINOR_VERSION(extensions[i].version) >= 4)
      return true;
  }
  return false;
}

}  // namespace

LevelZeroRuntime::~LevelZeroRuntime() {
  for (NpuDriver& driver : drivers_) driver.context.reset();
}

Result<std::shared_ptr<LevelZeroRuntime>> LevelZeroRuntime::open(const LevelZeroOptions& options) {
  ACCORD_RETURN_IF_ERROR(options.validate());
  std::shared_ptr<LevelZeroRuntime> runtime(new LevelZeroRuntime());
  runtime->options_ = options;
  ACCORD_ASSIGN_OR_RETURN(runtime->symbols_, ZeSymbols::load(options.loader_path));
  const ZeSymbols& ze = *runtime->symbols_;

  if (const ze_result_t r = ze.zeInit(ZE_INIT_FLAG_VPU_ONLY); r != ZE_RESULT_SUCCESS)
    return unsupported_error("level_zero: no NPU (VPU) device: zeInit: " + result_name(r) +
                             " (no Level Zero driver with an NPU; set ZE_ENABLE_ALT_DRIVERS for the emulator)");
  std::uint32_t driver_count = 0;
  ACCORD_ZE_RETURN_IF_ERROR("zeDriverGet", ze.zeDriverGet(&driver_count, nullptr), "level_zero: counting drivers");
  std::vector<ze_driver_handle_t> drivers(driver_count);
  ACCORD_ZE_RETURN_IF_ERROR("zeDriverGet", ze.zeDriverGet(&driver_count, drivers.data()),
                            "level_zero: listing drivers");

  bool saw_vpu = false;
  for (ze_driver_handle_t driver : drivers) {
    std::uint32_t device_count = 0;
    ACCORD_ZE_RETURN_IF_ERROR("zeDeviceGet", ze.zeDeviceGet(driver, &device_count, nullptr),
                              "level_zero: counting devices");
    std::vector<ze_device_handle_t> devices(device_count);
    ACCORD_ZE_RETURN_IF_ERROR("zeDeviceGet", ze.zeDeviceGet(driver, &device_count, devices.data()),
                              "level_zero: listing devices");
    std::vector<NpuHandle> found;
    for (ze_device_handle_t device : devices) {
      ze_device_properties_t properties{};
      properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      ACCORD_ZE_RETURN_IF_ERROR("zeDeviceGetProperties", ze.zeDeviceGetProperties(device, &properties),
                                "level_zero: reading device properties");
      if (properties.type != ZE_DEVICE_TYPE_VPU) continue;
      properties.name[ZE_MAX_DEVICE_NAME - 1] = '\0';
      found.push_back({runtime->drivers_.size(), device, properties.name});
    }
    if (found.empty()) continue;
    saw_vpu = true;
    ACCORD_ASSIGN_OR_RETURN(const bool graph, has_graph_extension(ze, driver));
    if (!graph) continue;

    NpuDriver npu_driver;
    npu_driver.handle = driver;
    void* table = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR("zeDriverGetExtensionFunctionAddress",
                              ze.zeDriverGetExtensionFunctionAddress(driver, ZE_GRAPH_EXT_NAME_1_4, &table),
                              "level_zero: getting the graph extension 1.4 table");
    npu_driver.graph = static_cast<const ze_graph_dditable_ext_t*>(table);
    if (npu_driver.graph == nullptr || npu_driver.graph->pfnCreate == nullptr ||
        npu_driver.graph->pfnBuildLogGetString == nullptr)
      return unsupported_error("level_zero: the NPU driver's graph extension table lacks version 1.4 entries");
    ze_driver_properties_t driver_properties{};
    driver_properties.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    ACCORD_ZE_RETURN_IF_ERROR("zeDriverGetProperties", ze.zeDriverGetProperties(driver, &driver_properties),
                              "level_zero: reading driver properties");
    npu_driver.version = "level-zero driver " + version_text(driver_properties.driverVersion) + ", graph extension 1.4";
    ze_context_desc_t context_desc{};
    context_desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    ze_context_handle_t context = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR("zeContextCreate", ze.zeContextCreate(driver, &context_desc, &context),
                              "level_zero: creating the NPU context");
    npu_driver.context = UniqueZeContext(context, ze.zeContextDestroy);
    runtime->drivers_.push_back(std::move(npu_driver));
    runtime->npus_.insert(runtime->npus_.end(), found.begin(), found.end());
  }
  if (!saw_vpu) return unsupported_error("level_zero: no NPU (VPU) device among " + std::to_string(driver_count) +
                                         " Level Zero driver(s)");
  if (runtime->npus_.empty())
    return unsupported_error("level_zero: the NPU driver does not offer " ZE_GRAPH_EXT_NAME " 1.4 or later");
  return runtime;
}

}  // namespace accord::devices::level_zero
