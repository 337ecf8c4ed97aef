#include "connection.h"

#include <algorithm>
#include <cctype>

// Set by CMakeLists.txt from the cache variables of the same names.
#ifndef TABLANETTE_BOT_NAME
#define TABLANETTE_BOT_NAME "tablanette-cpp-bot"
#endif
#ifndef TABLANETTE_BOT_VERSION
#define TABLANETTE_BOT_VERSION "dev"
#endif

namespace tablanette_bot {

namespace {

std::string Trimmed(const std::string& text) {
  const auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  auto begin = std::find_if_not(text.begin(), text.end(), is_space);
  auto end = std::find_if_not(text.rbegin(), text.rend(), is_space).base();
  return begin < end ? std::string(begin, end) : std::string();
}

bool IsAllDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

std::vector<std::string> ParseAddressList(const std::string& text) {
  std::vector<std::string> addresses;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string address = Trimmed(text.substr(start, comma - start));
    if (!address.empty()) addresses.push_back(address);
    start = comma + 1;
  }
  return addresses;
}

std::size_t NextAddressIndex(std::size_t index, std::size_t count) {
  return count == 0 ? 0 : (index + 1) % count;
}

Backoff::Backoff(unsigned seed) : rng_(seed) {}

double Backoff::Next() {
  const double base = base_;
  base_ = std::min(base_ * 2, kMaxSeconds);
  std::uniform_real_distribution<double> jitter(-kJitter, kJitter);
  return base * (1.0 + jitter(rng_));  // 0.8 .. 1.2 times the base
}

void Backoff::Reset() { base_ = kFirstSeconds; }

bool IsDraining(grpc::StatusCode code, const std::string& message) {
  if (code != grpc::StatusCode::UNAVAILABLE) return false;
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("shutting down") != std::string::npos;
}

long ParseRetryAfterMs(const std::string& text) {
  const std::string digits = Trimmed(text);
  if (!IsAllDigits(digits)) return 0;  // empty, negative or not a number: no hint
  if (digits.size() > 12) return kMaxRetryAfterMs;  // std::stol could overflow; far past the cap anyway
  return std::min(std::stol(digits), kMaxRetryAfterMs);
}

ReconnectDecision Decide(grpc::StatusCode code, const std::string& message, long retry_after_ms) {
  ReconnectDecision d;
  switch (code) {
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::UNIMPLEMENTED:
      d.fatal = true;
      return d;
    case grpc::StatusCode::ALREADY_EXISTS:
      d.wait_at_least_seconds = kAlreadyExistsWaitSeconds;
      break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      d.wait_at_least_seconds = kSlowDownWaitSeconds;
      break;
    default:
      break;
  }
  const long hint_ms = std::min(std::max(retry_after_ms, 0L), kMaxRetryAfterMs);
  d.wait_at_least_seconds = std::max(d.wait_at_least_seconds, hint_ms / 1000.0);
  d.draining = IsDraining(code, message);
  return d;
}

std::string DefaultVersionLabel() {
  return std::string(TABLANETTE_BOT_NAME) + " " + TABLANETTE_BOT_VERSION;
}

std::string VersionLabel(const char* env_override) {
  if (env_override != nullptr && *env_override != '\0') return env_override;
  return DefaultVersionLabel();
}

}  // namespace tablanette_bot
