-- The competition ensemble "items" (competition_ensembles.lua).
ENSEMBLE = "items"
require "competition_ensembles"
