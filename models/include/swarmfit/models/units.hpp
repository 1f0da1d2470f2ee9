// Units of the science models: AU, day, solar mass, G = k^2 (design/ARCHITECTURE.md).
#pragma once

namespace swarmfit::units {

constexpr double kGaussK = 0.01720209895;  // Gaussian gravitational constant, AU^1.5 / (day Msun^0.5)
constexpr double kG = kGaussK * kGaussK;   // AU^3 / (Msun day^2)
constexpr double kEarthMass = 3.986004e14 / 1.32712440018e20;      // Msun (IAU 2015 GM ratios)
constexpr double kJupiterMass = 1.26686534e17 / 1.32712440018e20;  // Msun
constexpr double kSolarRadius = 695700.0 / 149597870.7;            // AU (IAU 2015 nominal)
constexpr double kMetresPerSecond = 86400.0 / 149597870700.0;      // 1 m/s in AU/day
constexpr double kPi = 3.14159265358979323846;
constexpr double kDegree = kPi / 180.0;

}  // namespace swarmfit::units
