#pragma once
// RandomSource: a small seeded pseudo-random generator (splitmix64) for the event-log simulator's
// task-level jitter. Our own, rather than <random>'s distributions, whose output differs between
// standard libraries: the same seed must give the same bytes everywhere.
//
// Threads: a plain value; not synchronised.

#include <cstdint>

namespace sparktrace::sim::eventlog {

class RandomSource {
 public:
  explicit RandomSource(std::uint64_t seed) : state_(seed) {}

  // An independent stream for `salt` (e.g. an operation's ordinal), so that what one operation
  // draws does not depend on what another drew before it.
  RandomSource Fork(std::uint64_t salt) const;

  std::uint64_t NextU64();
  // Uniform in [0, 1).
  double Uniform();
  double Uniform(double low, double high) { return low + (high - low) * Uniform(); }
  // Uniform integer in [low, high].
  std::int64_t UniformInt(std::int64_t low, std::int64_t high);
  // Standard normal (Box-Muller).
  double Normal();
  // exp(sigma · N(0,1)): a multiplicative jitter with median 1, as task durations have.
  double LogNormalFactor(double sigma);
  bool Bernoulli(double probability) { return Uniform() < probability; }

 private:
  std::uint64_t state_;
};

}  // namespace sparktrace::sim::eventlog
