-- The competition ensemble "charger" (competition_ensembles.lua).
ENSEMBLE = "charger"
require "competition_ensembles"
