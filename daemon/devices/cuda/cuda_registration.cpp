// The CUDA backend's entry in the catalog: "cuda" -> open every GPU the driver reports
// (or only cuda.ordinal, in a GPU executor process).
// The only place "cuda.<key>" options are parsed. Where there is no driver or no GPU the
// factory's error says so ("cuda: libcuda.so.1 not found (...)", "cuda: no CUDA
// devices"), and the registry records the backend as absent.
#include <algorithm>
#include <initializer_list>
#include <charconv>
#include <string>
#include <string_view>
#include <utility>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/cuda/cuda_device.h"
#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices {
namespace cuda {
namespace {

Result<std::uint32_t> parse_count(const std::string& key, const std::string& text) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    return invalid_error("cuda: option cuda." + key + " = '" + text + "' is not a non-negative integer");
  return value;
}

// One of `choices` (word, value) by its word, or Invalid listing the words.
template <class Enum>
Result<Enum> parse_choice(const std::string& key, const std::string& text,
                          std::initializer_list<std::pair<std::string_view, Enum>> choices) {
  std::string words;
  std::size_t i = 0;
  for (const auto& [word, value] : choices) {
    if (word == text) return value;
    words += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(word);
    ++i;
  }
  return invalid_error("cuda: option cuda." + key + " = '" + text + "' is not " + words);
}

Result<CudaDeviceOptions> parse_options(const DeviceSettings& settings) {
  CudaDeviceOptions options;
  for (const auto& [key, value] : settings.options) {
    if (!key.starts_with("cuda.")) continue;
    const std::string name = key.substr(5);
    if (name == "library") {
      options.loader.library = value;
    } else if (name == "streams_per_lane") {
      ACCORD_ASSIGN_OR_RETURN(options.streams_per_lane, parse_count(name, value));
    } else if (name == "max_connections") {
      ACCORD_ASSIGN_OR_RETURN(options.loader.max_connections, parse_count(name, value));
      options.loader.max_connections_configured = true;
    } else if (name == "completion") {
      using enum CudaCompletionMode;
      ACCORD_ASSIGN_OR_RETURN(options.completion, parse_choice<CudaCompletionMode>(
                                                      name, value, {{"flag", Flag}, {"flag_event", FlagAndEvent}, {"event", Event}}));
    } else if (name == "flag_write") {
      using enum CudaFlagWriter;
      ACCORD_ASSIGN_OR_RETURN(
          options.flag_write,
          parse_choice<CudaFlagWriter>(name, value,
                                       {{"kernel", Kernel}, {"early_kernel", EarlyKernel}, {"memory_op", MemoryOp}}));
    } else if (name == "tenant_contexts") {
      ACCORD_ASSIGN_OR_RETURN(options.tenant_contexts, parse_count(name, value));
    } else if (name == "context") {
      using enum CudaContextChoice;
      ACCORD_ASSIGN_OR_RETURN(options.context, parse_choice<CudaContextChoice>(
                                                   name, value, {{"primary", Primary}, {"own", Own}, {"auto", Auto}}));
    } else if (name == "poll_spin_us") {
      ACCORD_ASSIGN_OR_RETURN(const std::uint32_t us, parse_count(name, value));
      options.poll.spin = std::chrono::microseconds(us);
    } else if (name == "ordinal") {
      ACCORD_ASSIGN_OR_RETURN(const std::uint32_t ordinal, parse_count(name, value));
      if (ordinal > 1024) return invalid_error("cuda: option cuda.ordinal = '" + value + "' is not in 0..1024");
      options.ordinal = static_cast<int>(ordinal);
    } else if (name == "poll_max_sleep_us") {
      ACCORD_ASSIGN_OR_RETURN(const std::uint32_t us, parse_count(name, value));
      options.poll.max_sleep = std::chrono::microseconds(us);
    } else {
      return invalid_error("cuda: unknown option '" + key +
                           "' (known: cuda.library, cuda.max_connections, cuda.streams_per_lane, "
                           "cuda.completion, cuda.flag_write, cuda.context, cuda.tenant_contexts, cuda.ordinal, cuda.poll_spin_us, "
                           "cuda.poll_max_sleep_us)");
    }
  }
  ACCORD_RETURN_IF_ERROR(options.validate());
  return options;
}

Result<std::vector<std::unique_ptr<Device>>> open_cuda(const BackendRequest& request) {
  ACCORD_ASSIGN_OR_RETURN(const CudaDeviceOptions options, parse_options(request.settings));
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<const CudaSymbols> syms, CudaSymbols::load(options.loader));
  int count = 0;
  if (const CUresult r = syms->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return unsupported_error("cuda: " + std::string(cuda_status(syms.get(), r, "cuDeviceGetCount", "counting GPUs").message()));
  if (count <= 0) return unsupported_error("cuda: no CUDA devices");
  std::vector<std::unique_ptr<Device>> devices;
  // One GPU only (a GPU executor): no context is created on the others.
  const int first = options.ordinal >= 0 ? options.ordinal : 0;
  const int end = options.ordinal >= 0 ? std::min(options.ordinal + 1, count) : count;
  for (int ordinal = first; ordinal < end; ++ordinal) {
    auto device = CudaDevice::open(syms, ordinal, options);
    // One GPU that does not open makes the backend absent, with the reason: a
    // half-opened box would renumber GPUs behind the config's back.
    if (!device.ok()) return unsupported_error("cuda: " + std::string(device.status().message()));
    devices.push_back(std::move(device).value());
  }
  return devices;
}

}  // namespace
}  // namespace cuda

void register_cuda(BackendCatalog& catalog) { catalog.add("cuda", &cuda::open_cuda); }

}  // namespace accord::devices
