-- Runs "../../argos/GiuliaNardicchia+intelligent-robotic-system/lab_activity-01/01a-phototaxis/phototaxis.lua" (the original, unchanged) and prints positions: ../print_positions.lua.
ORIGINAL_SCRIPT = "../../argos/GiuliaNardicchia+intelligent-robotic-system/lab_activity-01/01a-phototaxis/phototaxis.lua"
dofile("../print_positions.lua")
