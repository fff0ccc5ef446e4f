"""Local ENU coordinates to WGS-84 latitude/longitude, as the reference's Gps plugin converts them."""

from __future__ import annotations

import math

#: WGS-84 semi-major axis (m).
WGS84_A = 6378137.0
#: WGS-84 first eccentricity squared.
WGS84_E2 = 0.0066943799831668
#: Fixed-point iterations of the latitude.
LATITUDE_ITERATIONS = 4


class EnuToWgs84:
    """Converts east/north offsets (m) from a reference point (degrees) to latitude/longitude.

    Args:
        ref_lat: latitude of the world origin, degrees.
        ref_lon: longitude of the world origin, degrees.
    """

    def __init__(self, ref_lat: float, ref_lon: float) -> None:
        self.lat0 = math.radians(ref_lat)
        self.lon0 = math.radians(ref_lon)
        sin_lat, cos_lat = math.sin(self.lat0), math.cos(self.lat0)
        radius = WGS84_A / math.sqrt(1.0 - WGS84_E2 * sin_lat * sin_lat)
        self.x0 = radius * cos_lat * math.cos(self.lon0)
        self.y0 = radius * cos_lat * math.sin(self.lon0)
        self.z0 = radius * (1.0 - WGS84_E2) * sin_lat

    def convert(self, east: float, north: float) -> tuple[float, float]:
        """(latitude, longitude) in degrees of the point ``east``, ``north`` metres from the origin."""
        sin_lat0, cos_lat0 = math.sin(self.lat0), math.cos(self.lat0)
        sin_lon0, cos_lon0 = math.sin(self.lon0), math.cos(self.lon0)
        x = self.x0 - sin_lon0 * east - sin_lat0 * cos_lon0 * north
        y = self.y0 + cos_lon0 * east - sin_lat0 * sin_lon0 * north
        z = self.z0 + cos_lat0 * north
        longitude = math.degrees(math.atan2(y, x))
        p = math.hypot(x, y)
        # The reference starts from atan(p / z) and iterates a fixed number of times.
        latitude = math.pi / 2 if z == 0.0 else math.atan(p / z)
        for _ in range(LATITUDE_ITERATIONS):
            radius = WGS84_A / math.sqrt(1.0 - WGS84_E2 * math.sin(latitude) ** 2)
            height = p / math.cos(latitude) - radius
            latitude = math.atan((z / p) / (1.0 - WGS84_E2 * radius / (radius + height)))
        return math.degrees(latitude), longitude
