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

std::string DefaultVersionLabel() {
  return std::string(TABLANETTE_BOT_NAME) + " " + TABLANETTE_BOT_VERSION;
}

std::string VersionLabel(const char* env_override) {
  if (env_override != nullptr && *env_override != '\0') return env_override;
  return DefaultVersionLabel();
}

}  // namespace tablanette_bot
