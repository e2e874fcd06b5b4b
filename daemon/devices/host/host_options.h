// Options of the host device, with in-class defaults (STYLE.md rule 3). Parsed from the
// TOML file or flags only in daemon/main.cpp or host_registration.cpp, never inside the
// device; make_host_device() validates them before building the device.
#pragma once

#include <string>
#include <vector>

#include "accord/status.h"

namespace accord::devices::host {

struct HostDeviceOptions {
  // Whether CodeImage::Kind::Plugin may be loaded at all. Plugins are trusted code that
  // runs with the daemon's privileges (ARCHITECTURE.md, security model).
  bool allow_plugins = true;

  // Allowlist of plugin shared objects, as absolute paths compared literally with the
  // requested path. Empty means any absolute path may be loaded.
  std::vector<std::string> plugin_paths;

  // Invalid when an allowlist entry is empty or not an absolute path.
  Status validate() const {
    for (std::size_t i = 0; i < plugin_paths.size(); ++i) {
      const std::string& path = plugin_paths[i];
      if (path.empty() || path.front() != '/')
        return invalid_error("host device option plugin_paths[" + std::to_string(i) + "] = '" + path +
                             "': plugin paths must be absolute");
    }
    return Status();
  }
};

}  // namespace accord::devices::host
