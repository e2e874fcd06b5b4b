// Trusted host-kernel plugins: shared objects that export accord_plugin_query() (the C
// ABI in accord/plugin_abi.h). HostPluginLoader opens them, checks the ABI version and
// sanitizer, finds kernels by name and checks their contracts; every HostCode it returns
// keeps its library loaded. Plugins run with the daemon's privileges: trusted code only.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "accord/plugin_abi.h"
#include "client/api/unique_dl_handle.h"
#include "daemon/devices/host/host_code.h"
#include "daemon/devices/host/host_options.h"

namespace accord::devices::host {

// One loaded plugin: the dlopen handle and the header its query returned, which stays
// valid while the handle is open. Shared by every HostCode loaded from it; the last
// owner to go dlclose()s the library. Immutable after construction: thread-safe.
class HostPluginLibrary {
 public:
  // Takes ownership of `handle`; `header` must point into that library.
  HostPluginLibrary(std::string path, UniqueDlHandle handle, const accord_plugin_header_v1_t& header) noexcept
      : path_(std::move(path)), handle_(std::move(handle)), header_(&header) {}

  const std::string& path() const noexcept { return path_; }
  const accord_plugin_header_v1_t& header() const noexcept { return *header_; }
  // The kernel named `name`, or nullptr. Borrowed: valid while *this lives.
  const accord_plugin_kernel_v1_t* find_kernel(std::string_view name) const noexcept;
  // The offered kernel names, comma-separated, for error messages.
  std::string kernel_names() const;

 private:
  std::string path_;
  UniqueDlHandle handle_;
  const accord_plugin_header_v1_t* header_;
};

class HostPluginLoader {
 public:
  // Copies the plugin policy (allow_plugins, plugin_paths) out of `options`.
  explicit HostPluginLoader(const HostDeviceOptions& options);

  // Loads kernel `kernel` from the plugin at `path` and checks `contract` against it
  // (check_kernel_contract()). Opens the library on first use (dlopen, RTLD_NOW |
  // RTLD_LOCAL) and reuses it while any code loaded from it lives. Blocks on dlopen;
  // not for the submit path. Thread-safe.
  // Errors: Unsupported when plugins are disabled, `path` is not in a non-empty
  // allowlist, the library cannot be opened or is not an Accord plugin, or its ABI
  // version or sanitizer does not match this build; Invalid for a relative path, a
  // kernel the plugin does not offer (the message lists the ones it does) or a contract
  // that does not match the kernel.
  Result<std::unique_ptr<HostCode>> load(const std::string& path, std::string_view kernel,
                                         const KernelContract& contract);

  // How many plugin libraries are loaded through *this right now. Thread-safe.
  std::size_t loaded_library_count() const;

 private:
  Status check_policy(const std::string& path) const;
  Result<std::shared_ptr<const HostPluginLibrary>> open(const std::string& path);

  const bool allow_plugins_;
  const std::vector<std::string> allowlist_;
  mutable std::mutex mutex_;
  // Weak, so a library unloads once no loaded code uses it; keyed by the path as given.
  std::unordered_map<std::string, std::weak_ptr<const HostPluginLibrary>> cache_;  // guarded by mutex_
};

}  // namespace accord::devices::host
