// How the bot (re)connects: the replica list, the next address to try, the
// reconnect back-off, and the version label sent in Hello. Small pure pieces,
// no network, so the self-test (selftest.cpp) can check them.
//
// Why these rules: a bot that drops off (its engine replica died or
// restarted) keeps its games only if it is back within the arena's grace
// period (Welcome.grace_ms, 10 s by default). So the bot tries the NEXT
// address of its list after every failed or ended connection (a replica that
// is gone for good is skipped), and waits at most about 2 s between attempts.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

namespace tablanette_bot {

// The replica list of --address / TABLANETTE_ADDRESS: "a:1, b:2" -> {"a:1", "b:2"}.
// Spaces around the commas and empty entries are ignored; one address is a
// list of one. An empty result means no address was given.
std::vector<std::string> ParseAddressList(const std::string& text);

// The index of the address to try after `index` in a list of `count`
// addresses: the next one, wrapping around (round robin).
std::size_t NextAddressIndex(std::size_t index, std::size_t count);

// Reconnect delays: 0.25 s, 0.5 s, 1 s, 2 s, 2 s, ... each with random jitter
// of +-20% (so the bots of a dead replica do not all come back at the same
// moment). Reset() after a Welcome starts over at 0.25 s.
class Backoff {
 public:
  static constexpr double kFirstSeconds = 0.25;
  static constexpr double kMaxSeconds = 2.0;
  static constexpr double kJitter = 0.2;  // +-20%

  explicit Backoff(unsigned seed = std::random_device{}());

  // The delay before the next attempt, in seconds; the one after it is twice
  // as long (up to kMaxSeconds), before jitter.
  double Next();
  // Start over at kFirstSeconds (call it once a server has welcomed the bot).
  void Reset();
  // The next delay before jitter (for tests and logs).
  double base() const { return base_; }

 private:
  double base_ = kFirstSeconds;
  std::mt19937 rng_;
};

// True when the server ended the stream because it is shutting down on
// purpose (draining): UNAVAILABLE with "shutting down" in the message. The
// other replicas are ready, so the bot reconnects at once.
bool IsDraining(grpc::StatusCode code, const std::string& message);

// "<TABLANETTE_BOT_NAME> <TABLANETTE_BOT_VERSION>" as configured in CMake
// (-DTABLANETTE_BOT_NAME=my-bot -DTABLANETTE_BOT_VERSION=1.2.0).
std::string DefaultVersionLabel();

// The label sent as Hello.version and printed by --version: `env_override`
// (the value of the environment variable TABLANETTE_BOT_VERSION, may be
// null) when it is set and not empty, else DefaultVersionLabel().
std::string VersionLabel(const char* env_override);

}  // namespace tablanette_bot
