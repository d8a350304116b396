// WGS84 geodesy for the frame-conversion modifier (docs/federation-format.md, "Datastreams"):
// a local east-north-up frame at a reference point, Earth-centred Earth-fixed coordinates and
// geodetic latitude, longitude and altitude on the WGS84 ellipsoid.
#pragma once

namespace fleetsim::federation {

/// The WGS84 ellipsoid (NIMA TR8350.2): semi-major axis (m) and flattening, exact by
/// definition; the first eccentricity squared derived from them.
inline constexpr double kWgs84A = 6378137.0;
inline constexpr double kWgs84F = 1.0 / 298.257223563;
inline constexpr double kWgs84E2 = kWgs84F * (2.0 - kWgs84F);

/// A point on or above the ellipsoid: degrees, degrees, metres above the ellipsoid.
struct Geodetic {
  double latitude_deg = 0;
  double longitude_deg = 0;
  double altitude_m = 0;
};

/// Three coordinates in metres: ECEF (x, y, z) or ENU (east, north, up).
struct Point3 {
  double x = 0, y = 0, z = 0;
};

/// Geodetic to ECEF (closed form).
Point3 geodetic_to_ecef(const Geodetic& g);
/// ECEF to geodetic: fixed-point iteration on the latitude until it moves by less than 1e-15
/// rad (about 6 nm), with the altitude formula valid at the poles too.
Geodetic ecef_to_geodetic(const Point3& p);
/// ENU at reference `ref` to geodetic, through ECEF.
Geodetic enu_to_geodetic(const Point3& enu, const Geodetic& ref);
/// Geodetic to ENU at reference `ref`, through ECEF.
Point3 geodetic_to_enu(const Geodetic& g, const Geodetic& ref);

}  // namespace fleetsim::federation
