// How Catch2 prints accord's vocabulary types in assertion messages (a Status with its
// kind and message, an ErrorKind or LaneKind by name), for every suite that compares them.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "accord/lane.h"
#include "accord/status.h"

namespace Catch {
template <>
struct StringMaker<accord::Status> {
  static std::string convert(const accord::Status& status) { return status.to_string(); }
};
template <>
struct StringMaker<accord::ErrorKind> {
  static std::string convert(accord::ErrorKind kind) { return std::string(accord::to_string(kind)); }
};
template <>
struct StringMaker<accord::LaneKind> {
  static std::string convert(accord::LaneKind lane) { return std::string(accord::to_string(lane)); }
};
}  // namespace Catch
