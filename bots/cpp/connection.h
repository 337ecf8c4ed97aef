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

// Refusals that are not the bot's fault and pass by themselves: the next
// attempt waits at least this long (or the server's retry-after-ms hint, if
// longer) instead of knocking every 0.25 s.
//  - ALREADY_EXISTS: a bot has one session at a time, and another session of
//    this bot is live (an old copy still running, or our own previous stream
//    the server has not seen end yet). It is refused until that one ends or
//    goes quiet; exiting would leave the bot offline for good once it does.
//  - RESOURCE_EXHAUSTED: slow down (too many Hellos or streams from this
//    address or for this token, too many messages, or the bot did not read
//    its stream and the server's queue for it filled up).
constexpr double kAlreadyExistsWaitSeconds = 5.0;
constexpr double kSlowDownWaitSeconds = 1.0;
// A retry-after-ms hint is cut to this: a garbled header must not park the
// bot for days.
constexpr long kMaxRetryAfterMs = 5 * 60 * 1000;

// The value of the trailing metadata entry "retry-after-ms" (whole
// milliseconds) as a number, capped at kMaxRetryAfterMs; 0 when it is empty
// or not a number.
long ParseRetryAfterMs(const std::string& text);

// What the bot does when a stream ends.
struct ReconnectDecision {
  // Exit: no retry can fix it (UNAUTHENTICATED: bad, unknown or revoked
  // token; PERMISSION_DENIED: token of another bot name; INVALID_ARGUMENT: the
  // Hello was refused; UNIMPLEMENTED: not a bot gateway).
  bool fatal = false;
  // Otherwise reconnect to the next address after max(back-off, this), in
  // seconds (0: the back-off alone).
  double wait_at_least_seconds = 0.0;
  // The server is shutting down on purpose: after a live session, go at once.
  bool draining = false;
};

// The decision for a stream that ended with `code` / `message`, and the
// server's retry-after-ms hint (0 if none; it counts whatever the code, the
// server knows best when to come back). Every code that is not fatal is
// retried: ABORTED (this session had gone quiet and a newer one replaced it)
// with the usual back-off, since if the newer session is live the next
// attempt is refused with ALREADY_EXISTS and waits 5 s anyway.
ReconnectDecision Decide(grpc::StatusCode code, const std::string& message, long retry_after_ms);

// "<TABLANETTE_BOT_NAME> <TABLANETTE_BOT_VERSION>" as configured in CMake
// (-DTABLANETTE_BOT_NAME=my-bot -DTABLANETTE_BOT_VERSION=1.2.0).
std::string DefaultVersionLabel();

// The label sent as Hello.version and printed by --version: `env_override`
// (the value of the environment variable TABLANETTE_BOT_VERSION, may be
// null) when it is set and not empty, else DefaultVersionLabel().
std::string VersionLabel(const char* env_override);

}  // namespace tablanette_bot
