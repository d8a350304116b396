// What the server sends the page: the log header as JSON, the obstacle bitmap as raw bytes,
// and frames in binary chunks the page reads with typed arrays, without parsing
// (docs/view-format.md, "Wire format"). A chunk carries every column of the log's column lists,
// in their order, whatever they are: the page builds its typed arrays from the lists in the
// header JSON, so a column added by the engine or a plug-in reaches the page with no change
// here or there. The columns named x and y are sent relative to the arena centre so that
// 32-bit floats keep millimetre precision in any arena.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "log/log_reader.hpp"

namespace fleetsim::view {

/// "FSVC": the first four bytes of a frame chunk (little-endian u32).
inline constexpr std::uint32_t kChunkMagic = 0x43565346;
/// Version of the chunk layout; the page refuses other versions. Version 2: the columns of the
/// header's robotColumns / objectColumns lists, in order.
inline constexpr std::uint32_t kChunkVersion = 2;

/// The header as the page reads it (arena, bitmap size, segments, robot kinds, object classes,
/// entity table, column lists).
/// `log_name` is shown in the page title; `frame_count` is the reader's.
nlohmann::json header_json(const log::LogHeader& header, log::LogFormat format,
                           std::size_t frame_count, const std::string& log_name);

/// The obstacle bitmap, one byte per pixel (1 = obstacle), row-major from the top row.
std::string bitmap_bytes(const log::LogHeader& header);

/// Encodes frames [first, first + count) read from `reader` into one binary chunk. Stops early
/// (fewer frames) once the chunk exceeds `max_bytes`, but always holds at least one frame.
/// When frame k > first cannot be read, returns frames [first, k); throws log::LogError when
/// frame `first` itself cannot be read. Not thread-safe (the reader seeks).
std::string encode_chunk(log::LogReader& reader, std::size_t first, std::size_t count,
                         std::size_t max_bytes);

/// The exact values of one robot in one frame (double precision, absolute world frame), and
/// every other logged column of that robot under "columns", for the page's "clicked robot"
/// panel. Throws log::LogError; null when out of range.
nlohmann::json robot_json(log::LogReader& reader, std::size_t frame, std::size_t index);

/// One element of a column (at `p`) as JSON: a number (null if not finite, as JSON has no
/// such numbers), a colour as [r, g, b, a], a tag as its string in `tags`.
nlohmann::json element_json(const ColumnDesc& d, const std::uint8_t* p,
                            const std::vector<std::string>& tags);

}  // namespace fleetsim::view
