// The web page's files (viewer/*.html, *.js, *.css), embedded into the binary at build time by
// embed_page_files.cmake so that an installed `fleetsim view` works from any directory.
// Setting FLEETSIM_VIEWER_DIR to a folder serves that folder's files instead (edit-reload
// while working on the page).
#pragma once

#include <span>
#include <string_view>

namespace fleetsim::view {

/// One embedded file: its URL path below "/" ("index.html", "js/player.js"), MIME type, bytes.
struct PageFile {
  std::string_view path;
  std::string_view mime_type;
  std::string_view bytes;
};

/// Every embedded page file. Static storage; safe from any thread.
std::span<const PageFile> embedded_page_files();

}  // namespace fleetsim::view
