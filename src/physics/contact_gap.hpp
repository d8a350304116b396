// The gap `kinematics2d` leaves between bodies that stop on contact.
#pragma once

namespace fleetsim {

/// Gap left between bodies that stop on contact, metres: the DEECo playground stops them at
/// contact; 1 nm is what covers rounding. A contact time is computed from differences of
/// positions (exact for two robots near each other) and an end position is one rounding of
/// x + f d: at most half an ulp of a coordinate per body, 1.2e-10 m at 1,000 km (the largest
/// arena), so the gap never closes. The step's own rounding to float (f and d) can leave more:
/// up to 6e-8 of a step. (kSkin, 1 µm, is the margin of touching: the collision sensor reports
/// what is within 4 kSkin, and the contact lists and the placement keep it.)
inline constexpr double kStopGap = 1e-9;

}  // namespace fleetsim
