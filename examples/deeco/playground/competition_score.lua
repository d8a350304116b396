-- The competition ensemble "score" (competition_ensembles.lua).
ENSEMBLE = "score"
require "competition_ensembles"
