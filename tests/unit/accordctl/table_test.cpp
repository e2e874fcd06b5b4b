// accordctl's text tables and value formats (client/tools/accordctl/table.cpp): column
// widths and alignment, UTF-8 widths, no trailing blanks, byte sizes and ages. Pure
// formatting; the commands that fill the tables are exercised against a live daemon.
#include <catch2/catch.hpp>

#include <limits>

#include "client/tools/accordctl/table.h"

using accord::ctl::Align;
using accord::ctl::Table;

TEST_CASE("a table aligns every column to its widest cell", "[accordctl][table]") {
  Table table({{"ID", Align::Right}, {"LABEL"}, {"AGE", Align::Right}});
  table.add_row({"7", "trainer", "3.2s"});
  table.add_row({"12", "x", "5m12s"});
  CHECK(table.render() ==
        "ID  LABEL      AGE\n"
        " 7  trainer   3.2s\n"
        "12  x        5m12s\n");
  CHECK(table.row_count() == 2);
}

TEST_CASE("a left-aligned last column leaves no trailing blanks", "[accordctl][table]") {
  Table table({{"COUNTER"}, {"NOTE"}});
  table.add_row({"allocations", ""});
  table.add_row({"x", "long note"});
  CHECK(table.render() ==
        "COUNTER      NOTE\n"
        "allocations\n"
        "x            long note\n");
}

TEST_CASE("a table with no rows prints its header only", "[accordctl][table]") {
  Table table({{"A"}, {"B", Align::Right}});
  CHECK(table.render() == "A  B\n");
}

TEST_CASE("short rows are padded and extra cells ignored", "[accordctl][table]") {
  Table table({{"A"}, {"B"}});
  table.add_row({"1"});
  table.add_row({"2", "3", "ignored"});
  CHECK(table.render() ==
        "A  B\n"
        "1\n"
        "2  3\n");
}

TEST_CASE("widths count code points, so non-ASCII labels keep columns straight", "[accordctl][table]") {
  CHECK(accord::ctl::display_width("héllo") == 5);
  CHECK(accord::ctl::display_width("日本") == 2);
  Table table({{"LABEL"}, {"N", Align::Right}});
  table.add_row({"日本", "1"});
  table.add_row({"abcd", "22"});
  CHECK(table.render() ==
        "LABEL   N\n"
        "日本      1\n"
        "abcd   22\n");
}

TEST_CASE("byte sizes use binary units with one decimal", "[accordctl][format]") {
  using accord::ctl::format_bytes;
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1024) == "1.0 KiB");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(16u << 20) == "16.0 MiB");
  CHECK(format_bytes((1u << 20) - 1) == "1.0 MiB");  // not "1024.0 KiB"
  CHECK(format_bytes(std::uint64_t{5} << 30) == "5.0 GiB");
  CHECK(format_bytes(~std::uint64_t{0}) == "16.0 EiB");
}

TEST_CASE("ages read as seconds, then minutes, hours and days", "[accordctl][format]") {
  using accord::ctl::format_age;
  CHECK(format_age(0.42) == "0.4s");
  CHECK(format_age(9.94) == "9.9s");
  CHECK(format_age(42.7) == "42s");
  CHECK(format_age(312) == "5m12s");
  CHECK(format_age(3 * 3600 + 4 * 60 + 59) == "3h04m");
  CHECK(format_age(2 * 86400 + 5 * 3600) == "2d05h");
  CHECK(format_age(-1) == "0.0s");
  CHECK(format_age(std::numeric_limits<double>::quiet_NaN()) == "0.0s");
}

TEST_CASE("an empty list prints as a dash", "[accordctl][format]") {
  using accord::ctl::join_or_dash;
  CHECK(join_or_dash({}, " ") == "-");
  CHECK(join_or_dash({"0", "1"}, " ") == "0 1");
  CHECK(join_or_dash({"upload", "compute"}, ",") == "upload,compute");
}
