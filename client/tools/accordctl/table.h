// Aligned plain-text tables and the small value formats (sizes, ages) that accordctl
// prints for operators. Pure string formatting: no I/O, no daemon, no locale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace accord::ctl {

enum class Align : std::uint8_t { Left, Right };

struct Column {
  std::string title;
  Align align = Align::Left;
};

// Rows of text cells under a header line, each column as wide as its widest cell,
// columns separated by two spaces. Widths count UTF-8 code points, so a non-ASCII
// session label does not skew the columns. Lines carry no trailing spaces.
class Table {
 public:
  explicit Table(std::vector<Column> columns);

  // Appends a row. A row with fewer cells than columns is padded with empty cells;
  // extra cells are ignored (a caller bug that should not garble the output).
  void add_row(std::vector<std::string> cells);
  std::size_t row_count() const noexcept { return rows_.size(); }

  // The header line then one line per row, each ending in '\n'.
  std::string render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Code points in UTF-8 `text` (continuation bytes are not counted).
std::size_t display_width(std::string_view text) noexcept;

// `bytes` in binary units with one decimal: "512 B", "1.0 KiB", "16.0 MiB", "2.5 GiB".
std::string format_bytes(std::uint64_t bytes);

// A duration for an age column: "0.4s" under 10 s, then "42s", "5m12s", "3h04m",
// "2d05h". Negative or non-finite input prints as "0.0s".
std::string format_age(double seconds);

// `items` joined with `separator`; "-" when `items` is empty, so a cell is never blank.
std::string join_or_dash(const std::vector<std::string>& items, std::string_view separator);

}  // namespace accord::ctl
