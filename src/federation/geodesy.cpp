#include "federation/geodesy.hpp"

#include <cmath>
#include <numbers>

namespace fleetsim::federation {

namespace {

constexpr double kRad = std::numbers::pi / 180.0;

// The ENU axes of `ref` in ECEF: east, north, up as unit vectors.
struct EnuAxes {
  Point3 east, north, up;
};

EnuAxes axes_at(const Geodetic& ref) {
  const double sl = std::sin(ref.latitude_deg * kRad), cl = std::cos(ref.latitude_deg * kRad);
  const double so = std::sin(ref.longitude_deg * kRad), co = std::cos(ref.longitude_deg * kRad);
  return {{-so, co, 0.0}, {-sl * co, -sl * so, cl}, {cl * co, cl * so, sl}};
}

}  // namespace

Point3 geodetic_to_ecef(const Geodetic& g) {
  const double lat = g.latitude_deg * kRad, lon = g.longitude_deg * kRad;
  const double s = std::sin(lat);
  const double n = kWgs84A / std::sqrt(1.0 - kWgs84E2 * s * s);  // prime vertical radius
  return {(n + g.altitude_m) * std::cos(lat) * std::cos(lon),
          (n + g.altitude_m) * std::cos(lat) * std::sin(lon),
          (n * (1.0 - kWgs84E2) + g.altitude_m) * s};
}

Geodetic ecef_to_geodetic(const Point3& p) {
  const double r = std::hypot(p.x, p.y);  // distance from the polar axis
  // Start from the latitude of a point on the ellipsoid's surface, then iterate
  // lat = atan2(z + e2 N sin lat, r), which converges in a handful of steps for any altitude
  // a robot or aircraft has.
  double lat = std::atan2(p.z, r * (1.0 - kWgs84E2));
  for (int k = 0; k < 20; ++k) {
    const double s = std::sin(lat);
    const double n = kWgs84A / std::sqrt(1.0 - kWgs84E2 * s * s);
    const double next = std::atan2(p.z + kWgs84E2 * n * s, r);
    const bool done = std::fabs(next - lat) < 1e-15;
    lat = next;
    if (done) break;
  }
  const double s = std::sin(lat), c = std::cos(lat);
  const double n = kWgs84A / std::sqrt(1.0 - kWgs84E2 * s * s);
  // h = r cos(lat) + z sin(lat) - a^2 / N: no division by cos(lat), so exact at the poles.
  const double h = r * c + p.z * s - kWgs84A * kWgs84A / n;
  return {lat / kRad, std::atan2(p.y, p.x) / kRad, h};
}

Geodetic enu_to_geodetic(const Point3& enu, const Geodetic& ref) {
  const Point3 o = geodetic_to_ecef(ref);
  const EnuAxes a = axes_at(ref);
  return ecef_to_geodetic({o.x + enu.x * a.east.x + enu.y * a.north.x + enu.z * a.up.x,
                           o.y + enu.x * a.east.y + enu.y * a.north.y + enu.z * a.up.y,
                           o.z + enu.x * a.east.z + enu.y * a.north.z + enu.z * a.up.z});
}

Point3 geodetic_to_enu(const Geodetic& g, const Geodetic& ref) {
  const Point3 o = geodetic_to_ecef(ref), p = geodetic_to_ecef(g);
  const Point3 d{p.x - o.x, p.y - o.y, p.z - o.z};
  const EnuAxes a = axes_at(ref);
  auto dot = [&](const Point3& u) { return d.x * u.x + d.y * u.y + d.z * u.z; };
  return {dot(a.east), dot(a.north), dot(a.up)};
}

}  // namespace fleetsim::federation
