// The one table of settings that flags and the TOML file share: each entry names its
// key, its flag and how a value enters AccorddConfig, so the two sources cannot drift
// apart and to_toml() writes exactly the keys the parser reads. Internal to daemon/config/
// (never included from outside the folder). Thread-safe: the table is immutable and the
// functions are pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "accord/status.h"
#include "daemon/config/accordd_config.h"
#include "daemon/config/config_input_impl.h"

namespace accord::daemon_config::detail {

enum class Shape : std::uint8_t {
  Scalar,  // one value; a flag given twice keeps the last
  List,    // a TOML array; a repeatable flag whose values replace the file's list
  Switch,  // a boolean; the flag takes no value (or =true / =false)
  Names,   // a TOML string or array of strings; a repeatable, comma-separated flag
           // whose values replace the file's
  Table,   // a TOML table (written last in the file); a repeatable KEY=VALUE flag whose
           // entries replace the file's table
};

struct Setting {
  std::string_view key;        // TOML key
  std::string_view flag;       // command-line flag
  std::string_view type_name;  // shown in --help
  std::string_view help;
  Shape shape;
  // Called with exactly one input for Scalar and Switch, with every element for List.
  Status (*apply)(std::span<const Input> values, AccorddConfig& config);
};

// Every setting, in the order of deploy/accordd.toml.
std::span<const Setting> settings() noexcept;

// The setting whose TOML key is `key`, or null.
const Setting* find_setting(std::string_view key) noexcept;

// " (did you mean 'workers'?)" for a near miss, else a pointer to the list of keys.
std::string unknown_key_hint(std::string_view key);

}  // namespace accord::daemon_config::detail
