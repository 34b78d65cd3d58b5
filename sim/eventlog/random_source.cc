#include "sim/eventlog/random_source.h"

#include <cmath>
#include <numbers>

namespace sparktrace::sim::eventlog {
namespace {

std::uint64_t Mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

RandomSource RandomSource::Fork(std::uint64_t salt) const {
  return RandomSource(Mix(state_ ^ Mix(salt + 0x632be59bd9b4e019ULL)));
}

std::uint64_t RandomSource::NextU64() {
  state_ += 0x9e3779b97f4a7c15ULL;
  return Mix(state_);
}

double RandomSource::Uniform() {
  // The top 53 bits: every double in [0, 1) with that spacing is equally likely.
  return static_cast<double>(NextU64() >> 11) * 0x1.0p-53;
}

std::int64_t RandomSource::UniformInt(std::int64_t low, std::int64_t high) {
  if (high <= low) return low;
  const auto span = static_cast<std::uint64_t>(high - low) + 1;
  return low + static_cast<std::int64_t>(NextU64() % span);
}

double RandomSource::Normal() {
  const double u1 = 1.0 - Uniform();  // (0, 1]: log() stays finite
  const double u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double RandomSource::LogNormalFactor(double sigma) { return std::exp(sigma * Normal()); }

}  // namespace sparktrace::sim::eventlog
