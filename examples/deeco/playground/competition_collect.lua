-- The competition ensemble "collect" (competition_ensembles.lua).
ENSEMBLE = "collect"
require "competition_ensembles"
