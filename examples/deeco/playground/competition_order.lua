-- The competition ensemble "order" (competition_ensembles.lua).
ENSEMBLE = "order"
require "competition_ensembles"
