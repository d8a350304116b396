// `<ensemble type="lua" script="file.lua">`: an ensemble written in Lua (docs/lua-api.md,
// "Ensembles"). The script defines global functions, all optional but exchange:
//
//   is_coordinator(r), is_member(r)   -> boolean   (further selection over knowledge)
//   membership(c, m)                  -> boolean   (whether m belongs to c's ensemble now)
//   exchange(c, m)                              (writes c.knowledge.* or m.knowledge.*)
//
// where r, c and m are components: tables whose fields read the robot (`id`, the entity id;
// `tag`, `kind`, `x`, `y`, `heading`) and whose `knowledge` reads and writes its
// knowledge fields (a number, or a table of numbers for a field of size > 1). Globals:
// `tick()`, `status(text)`, `end_run()`, `log(...)`. One Lua state per <ensemble>, used on
// the run's main thread only.
#pragma once

#include <memory>

#include "fleetsim/ensemble.hpp"

namespace fleetsim::lua {

std::unique_ptr<Ensemble> make_lua_ensemble();

}  // namespace fleetsim::lua
