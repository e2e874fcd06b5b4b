// Backend options given to a test or benchmark through the environment: "key=value"
// words split at spaces (ACCORD_BENCH_CUDA_OPTIONS, ACCORD_CONFORMANCE_DEVICE_OPTIONS), so
// that one run can compare a backend's settings without a rebuild.
#pragma once

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace accord::testing {

struct EnvironmentOptions {
  std::map<std::string, std::string> options;  // key -> value
  std::string malformed;                       // the first word without '=', if any
};

// The words of environment variable `variable` (unset: none).
inline EnvironmentOptions options_from_environment(const char* variable) {
  EnvironmentOptions out;
  const char* words = std::getenv(variable);
  if (words == nullptr) return out;
  std::istringstream in(words);
  for (std::string word; in >> word;) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos) {
      if (out.malformed.empty()) out.malformed = word;
      continue;
    }
    out.options[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

}  // namespace accord::testing
