// Options of the level_zero backend: in-class defaults, validate(). Parsed from
// "level_zero.<key>" settings only in level_zero_registration.cpp (STYLE.md rule 3).
#pragma once

#include <cstdint>
#include <string>

#include "accord/status.h"

namespace accord::devices::level_zero {

struct LevelZeroOptions {
  // The loader library handed to dlopen ("level_zero.loader").
  std::string loader_path = "libze_loader.so.1";
  // How long the completion thread waits on one fence before it looks at its stop flag
  // again, in microseconds ("level_zero.poll_us"). Bounds how long shut_down() takes
  // while a region hangs; completion itself is reported as soon as the fence signals.
  std::uint32_t poll_us = 1000;
  // Whether a thread waiting for its own submission blocks on its region's fence itself
  // ("level_zero.waiter_blocks", 0 or 1): the fence then wakes it, where otherwise the
  // completion thread wakes and then wakes it.
  bool waiter_blocks = true;

  Status validate() const {
    if (loader_path.empty()) return invalid_error("level_zero.loader must name a library");
    if (poll_us == 0 || poll_us > 1'000'000) return invalid_error("level_zero.poll_us must be in 1..1000000");
    return Status();
  }
};

}  // namespace accord::devices::level_zero
