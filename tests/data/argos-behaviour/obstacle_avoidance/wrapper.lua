-- Runs "../../argos/GiuliaNardicchia+intelligent-robotic-system/lab_activity-01/01b-obstacle-avoidance/obstacle_avoidance.lua" (the original, unchanged) and prints positions: ../print_positions.lua.
ORIGINAL_SCRIPT = "../../argos/GiuliaNardicchia+intelligent-robotic-system/lab_activity-01/01b-obstacle-avoidance/obstacle_avoidance.lua"
dofile("../print_positions.lua")
