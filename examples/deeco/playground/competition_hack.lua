-- The competition ensemble "hack" (competition_ensembles.lua).
ENSEMBLE = "hack"
require "competition_ensembles"
