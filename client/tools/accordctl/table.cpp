#include "client/tools/accordctl/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace accord::ctl {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> widths(columns_.size(), 0);
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = display_width(columns_[c].title);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out;
  auto emit = [&](auto cell_of) {
    std::string line;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cell_of(c);
      const std::size_t pad = widths[c] - display_width(cell);
      if (c > 0) line += "  ";
      if (columns_[c].align == Align::Right) line.append(pad, ' ');
      line += cell;
      if (columns_[c].align == Align::Left) line.append(pad, ' ');
    }
    // Left-aligned last columns pad to their width; trailing blanks are noise in a terminal
    // and make golden-output comparisons brittle.
    line.erase(line.find_last_not_of(' ') + 1);
    out += line;
    out += '\n';
  };
  emit([&](std::size_t c) -> const std::string& { return columns_[c].title; });
  for (const auto& row : rows_) emit([&](std::size_t c) -> const std::string& { return row[c]; });
  return out;
}

std::size_t display_width(std::string_view text) noexcept {
  std::size_t width = 0;
  for (const char ch : text)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++width;
  return width;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  // Switch units before rounding would print "1024.0": 1023.95 KiB reads better as 1.0 MiB.
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string format_age(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  char text[32];
  if (seconds < 10) {
    std::snprintf(text, sizeof(text), "%.1fs", seconds);
    return text;
  }
  const auto total = static_cast<std::uint64_t>(seconds);
  const std::uint64_t days = total / 86400;
  const std::uint64_t hours = total / 3600 % 24;
  const std::uint64_t minutes = total / 60 % 60;
  const std::uint64_t secs = total % 60;
  const auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  if (total < 60) std::snprintf(text, sizeof(text), "%llus", u(secs));
  else if (total < 3600) std::snprintf(text, sizeof(text), "%llum%02llus", u(minutes), u(secs));
  else if (total < 86400) std::snprintf(text, sizeof(text), "%lluh%02llum", u(hours), u(minutes));
  else std::snprintf(text, sizeof(text), "%llud%02lluh", u(days), u(hours));
  return text;
}

std::string join_or_dash(const std::vector<std::string>& items, std::string_view separator) {
  if (items.empty()) return "-";
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace accord::ctl
