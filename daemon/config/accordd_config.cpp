// load_config: the TOML file, then the flags over it, each value applied through the
// table of settings (config_settings_impl.h) that both sources share. CLI11 and toml++ report
// errors by throwing; every throw is caught in load_config and becomes an Invalid
// Status (STYLE.md rule 5: no exceptions leave a daemon/ function).
#include "daemon/config/accordd_config.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

#include "daemon/config/config_input_impl.h"
#include "daemon/config/config_settings_impl.h"

namespace accord::daemon_config {

using detail::find_setting;
using detail::in_quotes;
using detail::Input;
using detail::parse_whole;
using detail::Setting;
using detail::settings;
using detail::Shape;
using detail::unknown_key_hint;
using detail::wrong_type;

namespace {

std::string at(const std::string& file, const toml::source_region& where) {
  return file + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
}

// The entries of a Shape::Table setting. Nested tables join their keys with '.', so
// `null.devices = "2"` (a dotted key, which TOML makes a nested table), `[device_options.null]`
// and `"null.devices" = "2"` all give the entry "null.devices".
void flatten_table(const toml::table& table, const std::string& prefix, const std::string& file,
                   std::string_view setting, std::vector<Input>& out) {
  for (const auto& [key, node] : table) {
    const std::string full = prefix + std::string(key.str());
    if (const toml::table* nested = node.as_table()) {
      flatten_table(*nested, full + ".", file, setting, out);
      continue;
    }
    out.push_back(Input{&node, {}, at(file, key.source()) + ": " + in_quotes(std::string(setting) + "." + full), full});
  }
}

Status apply_table(const toml::table& table, const std::string& file, AccorddConfig& config) {
  for (const auto& [key, node] : table) {
    const Setting* setting = find_setting(key.str());
    if (!setting)
      return invalid_error(at(file, key.source()) + ": unknown key " + in_quotes(key.str()) +
                           unknown_key_hint(key.str()));
    const std::string where = at(file, key.source()) + ": " + in_quotes(key.str());
    std::vector<Input> inputs;
    if (setting->shape == Shape::List || (setting->shape == Shape::Names && node.is_array())) {
      const toml::array* array = node.as_array();
      if (!array) return wrong_type(Input{&node, {}, where, {}}, "an array");
      for (std::size_t i = 0; i < array->size(); ++i)
        inputs.push_back(Input{array->get(i), {}, where + "[" + std::to_string(i) + "]", {}});
    } else if (setting->shape == Shape::Table) {
      const toml::table* entries = node.as_table();
      if (!entries) return wrong_type(Input{&node, {}, where, {}}, "a table");
      flatten_table(*entries, {}, file, key.str(), inputs);
    } else {
      inputs.push_back(Input{&node, {}, where, {}});
    }
    ACCORD_RETURN_IF_ERROR(setting->apply(inputs, config));
  }
  return {};
}

// Reads `path` into `out`. A missing file is Invalid only when `required`; the returned
// bool says whether a file was read.
Result<bool> read_file(const std::string& path, bool required, std::string& out) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    if (!required && (!ec || ec == std::errc::no_such_file_or_directory)) return false;
    return invalid_error("config file " + in_quotes(path) + " does not exist" +
                         (ec && ec != std::errc::no_such_file_or_directory ? " (" + ec.message() + ")" : ""));
  }
  if (std::filesystem::is_directory(status)) return invalid_error("config file " + in_quotes(path) + " is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_error("cannot read config file " + in_quotes(path) + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return invalid_error("cannot read config file " + in_quotes(path));
  out = std::move(text).str();
  return true;
}

Status apply_file(const std::string& path, bool required, AccorddConfig& config) {
  std::string text;
  ACCORD_ASSIGN_OR_RETURN(bool found, read_file(path, required, text));
  if (!found) return {};
  config.config_file = path;
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return invalid_error(at(path, e.source()) + ": " + std::string(e.description()));
  }
  return apply_table(table, path, config);
}

// Checks that involve more than one setting.
Status check_combination(const AccorddConfig& config) {
  if (config.daemon.grpc_socket == config.daemon.session_socket)
    return invalid_error("grpc_socket and session_socket are both " + in_quotes(config.daemon.grpc_socket));
  const bool isolation = !config.daemon.isolated_uids.empty() || !config.daemon.isolated_gids.empty();
  if (isolation && config.daemon.device_settings.gpu_executor_binary.empty())
    return invalid_error("gpu_isolation gives sessions GPU executors of their own, so it needs gpu_executors = true");
  return {};
}

}  // namespace

Result<std::uint64_t> parse_byte_size(std::string_view text, std::string_view what) {
  std::string_view digits = text;
  unsigned shift = 0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: break;
    }
    if (shift) digits.remove_suffix(1);
  }
  std::uint64_t value = 0;
  if (!parse_whole(digits, value)) {
    return invalid_error(std::string(what) + ": " + in_quotes(text) +
                         " is not a byte count (digits with an optional K, M or G suffix)");
  }
  if (value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    return invalid_error(std::string(what) + ": " + in_quotes(text) + " is too large");
  return value << shift;
}

Result<AccorddConfig> load_config(int argc, const char* const* argv, std::string_view default_config_path) {
  AccorddConfig config;
  // accordd's default: GPUs in executor processes (gpu_executors = true).
  config.daemon.device_settings.gpu_executor_binary = std::string(kSelfExecutable);
  CLI::App app("accordd coordinates GPU and NPU work for every process on this box.\n"
               "Flags override the config file.",
               "accordd");
  std::string config_path(default_config_path);
  // std::map keeps the addresses CLI11 writes through stable.
  std::map<std::string_view, std::string> scalars;
  std::map<std::string_view, std::vector<std::string>> lists;  // List, Names and Table
  std::map<std::string_view, bool> switches;
  std::vector<std::pair<const Setting*, const CLI::Option*>> flag_options;
  try {
    app.set_version_flag("--version", std::string(version_string()));
    const CLI::Option* config_option =
        app.add_option("--config", config_path,
                       "TOML config file (default " + std::string(default_config_path) +
                           "; a missing default file is fine)")
            ->type_name("PATH");
    app.add_flag("--check-config", config.check_config,
                 "parse and validate the configuration, print it as TOML, exit 0 (valid) or 2");
    for (const Setting& s : settings()) {
      const std::string flag(s.flag);
      const std::string help(s.help);
      CLI::Option* option = nullptr;
      switch (s.shape) {
        case Shape::Scalar:
          option = app.add_option(flag, scalars[s.key], help)
                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
          break;
        case Shape::List:
        case Shape::Names:
          option = app.add_option(flag, lists[s.key], help);
          // "--allow-uid 1000,alice"; not for paths, which may contain commas.
          if (s.key != "plugin_paths") option->delimiter(',');
          break;
        case Shape::Table:
          // "--device-option null.devices=2"; values may contain commas.
          option = app.add_option(flag, lists[s.key], help);
          break;
        case Shape::Switch:
          option = app.add_flag(flag, switches[s.key], help);
          break;
      }
      if (!s.type_name.empty()) option->type_name(std::string(s.type_name));
      flag_options.emplace_back(&s, option);
    }
    app.footer("Every setting is also a key of the config file; see " + std::string(kDefaultConfigPath) +
               " or deploy/accordd.toml.");

    app.parse(argc, argv);

    // The file first, then the flags over it.
    ACCORD_RETURN_IF_ERROR(apply_file(config_path, config_option->count() > 0, config));
    for (const auto& [setting, option] : flag_options) {
      if (option->count() == 0) continue;
      std::vector<Input> inputs;
      const std::string where(setting->flag);
      switch (setting->shape) {
        case Shape::Scalar:
          inputs.push_back(Input{nullptr, scalars[setting->key], where, {}});
          break;
        case Shape::List:
        case Shape::Names:
          for (const std::string& value : lists[setting->key]) inputs.push_back(Input{nullptr, value, where, {}});
          break;
        case Shape::Table:
          for (const std::string& entry : lists[setting->key]) {
            const std::size_t eq = entry.find('=');
            if (eq == std::string::npos)
              return invalid_error(where + ": " + in_quotes(entry) + " is not BACKEND.KEY=VALUE");
            inputs.push_back(Input{nullptr, std::string_view(entry).substr(eq + 1), where, entry.substr(0, eq)});
          }
          break;
        case Shape::Switch:
          inputs.push_back(Input{nullptr, switches[setting->key] ? "true" : "false", where, {}});
          break;
      }
      ACCORD_RETURN_IF_ERROR(setting->apply(inputs, config));
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      std::ostringstream out, err;
      app.exit(e, out, err);
      config.print_and_exit = out.str();
      return config;
    }
    return invalid_error(std::string("command line: ") + e.what());
  } catch (const std::exception& e) {
    // CLI::ConstructionError (a bug in the table of settings) or std::bad_alloc.
    return internal_error(std::string("parsing the configuration: ") + e.what());
  }
  ACCORD_RETURN_IF_ERROR(check_combination(config));
  return config;
}

std::string_view version_string() noexcept { return "accordd " ACCORD_VERSION; }

}  // namespace accord::daemon_config
