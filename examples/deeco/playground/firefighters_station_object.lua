-- The DEECo playground's firefighters ChargingStation: an object whose tag is "Charging
-- Station" (its setParameters), which the energy layer and StationEnsemble look for.
function step()
  object.tag = "Charging Station"
end
