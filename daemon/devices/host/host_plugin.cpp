#include "daemon/devices/host/host_plugin.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace accord::devices::host {
namespace {

std::string sanitizer_name(std::uint32_t sanitizer) {
  switch (sanitizer) {
    case ACCORD_PLUGIN_SANITIZER_NONE: return "none";
    case ACCORD_PLUGIN_SANITIZER_ADDRESS: return "ASan";
    case ACCORD_PLUGIN_SANITIZER_THREAD: return "TSan";
    default: return "unknown (" + std::to_string(sanitizer) + ")";
  }
}

std::string dl_error_text() {
  const char* text = ::dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

}  // namespace

const accord_plugin_kernel_v1_t* HostPluginLibrary::find_kernel(std::string_view name) const noexcept {
  for (std::uint32_t i = 0; i < header_->kernel_count; ++i) {
    const accord_plugin_kernel_v1_t& kernel = header_->kernels[i];
    if (kernel.name != nullptr && name == kernel.name) return &kernel;
  }
  return nullptr;
}

std::string HostPluginLibrary::kernel_names() const {
  std::string names;
  for (std::uint32_t i = 0; i < header_->kernel_count; ++i) {
    if (header_->kernels[i].name == nullptr) continue;
    if (!names.empty()) names += ", ";
    names += header_->kernels[i].name;
  }
  return names.empty() ? "(none)" : names;
}

HostPluginLoader::HostPluginLoader(const HostDeviceOptions& options)
    : allow_plugins_(options.allow_plugins), allowlist_(options.plugin_paths) {}

Status HostPluginLoader::check_policy(const std::string& path) const {
  if (!allow_plugins_)
    return unsupported_error("cannot load plugin '" + path + "': plugins are disabled on the host device");
  // A relative path would resolve against the daemon's working directory or the
  // library search path, neither of which a client can see or should choose.
  if (path.empty() || path.front() != '/') return invalid_error("plugin path '" + path + "' is not absolute");
  if (!allowlist_.empty() && std::find(allowlist_.begin(), allowlist_.end(), path) == allowlist_.end())
    return unsupported_error("plugin '" + path + "' is not in the host device's plugin allowlist");
  return Status();
}

Result<std::shared_ptr<const HostPluginLibrary>> HostPluginLoader::open(const std::string& path) {
  // The policy is checked before dlopen: opening a library already runs its code.
  ACCORD_RETURN_IF_ERROR(check_policy(path));
  std::lock_guard lock(mutex_);
  if (auto it = cache_.find(path); it != cache_.end()) {
    if (std::shared_ptr<const HostPluginLibrary> cached = it->second.lock()) return cached;
    cache_.erase(it);
  }

  static_cast<void>(::dlerror());  // clear stale state so the error below is this call's
  UniqueDlHandle handle(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) return unsupported_error("cannot load plugin '" + path + "': " + dl_error_text());
  void* symbol = handle.symbol(ACCORD_PLUGIN_QUERY_SYMBOL);
  if (symbol == nullptr)
    return unsupported_error("'" + path + "' is not an Accord plugin: it does not export " ACCORD_PLUGIN_QUERY_SYMBOL);
  accord_plugin_query_fn query = nullptr;
  static_assert(sizeof(query) == sizeof(symbol));
  std::memcpy(&query, &symbol, sizeof(query));  // object -> function pointer, as dlsym requires

  const accord_plugin_header_v1_t* header = nullptr;
  try {
    header = query(ACCORD_PLUGIN_ABI_VERSION);
  } catch (...) {
    return unsupported_error("plugin '" + path + "': " ACCORD_PLUGIN_QUERY_SYMBOL " threw an exception");
  }
  if (header == nullptr)
    return unsupported_error("plugin '" + path + "' supports no ABI version up to " +
                             std::to_string(ACCORD_PLUGIN_ABI_VERSION));
  if (header->version == 0 || header->version > ACCORD_PLUGIN_ABI_VERSION)
    return unsupported_error("plugin '" + path + "' implements ABI version " + std::to_string(header->version) +
                             "; the host device supports 1 to " + std::to_string(ACCORD_PLUGIN_ABI_VERSION));
  // Mixing sanitizer runtimes in one process crashes or reports nonsense; refuse early.
  if (header->sanitizer != ACCORD_BUILD_SANITIZER)
    return unsupported_error("plugin '" + path + "' was built with sanitizer " + sanitizer_name(header->sanitizer) +
                             "; this build uses " + sanitizer_name(ACCORD_BUILD_SANITIZER));
  if (header->kernel_count > 0 && header->kernels == nullptr)
    return unsupported_error("plugin '" + path + "' declares " + std::to_string(header->kernel_count) +
                             " kernels but no kernel table");

  auto library = std::make_shared<const HostPluginLibrary>(path, std::move(handle), *header);
  cache_[path] = library;
  return std::shared_ptr<const HostPluginLibrary>(std::move(library));
}

Result<std::unique_ptr<HostCode>> HostPluginLoader::load(const std::string& path, std::string_view kernel,
                                                         const KernelContract& contract) {
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<const HostPluginLibrary> library, open(path));
  const accord_plugin_kernel_v1_t* found = library->find_kernel(kernel);
  if (found == nullptr)
    return invalid_error("plugin '" + path + "' has no kernel '" + std::string(kernel) +
                         "'; it offers: " + library->kernel_names());
  if (Status status = check_kernel_description(*found); !status.ok())
    return std::move(status).annotate("plugin '" + path + "'");
  if (Status status = check_kernel_contract(*found, contract); !status.ok())
    return std::move(status).annotate("plugin '" + path + "'");
  return std::make_unique<HostCode>(*found, contract, std::move(library));
}

std::size_t HostPluginLoader::loaded_library_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(cache_.begin(), cache_.end(), [](const auto& entry) { return !entry.second.expired(); }));
}

}  // namespace accord::devices::host
