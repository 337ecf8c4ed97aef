// A test strategy for the arena's own tests (tests/service/test_sdk_concurrency.py):
// two games at once, one of which thinks slowly.
//
// In a game played to 52 points, the first turn thinks until the file named by
// TABLANETTE_JUGGLER_RELEASE exists (or until 5 s before the turn's deadline);
// every other turn, in any game, plays the last legal play at once. It logs
// "slow game thinking" when the wait starts, so the test knows when to start
// the other game, and each game's strategy checks it only ever sees its own game.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "strategy.h"

namespace tablanette_bot {

namespace {

bool Exists(const char* path) {
  struct stat st;
  return path != nullptr && stat(path, &st) == 0;
}

class Juggler : public GameStrategy {
 public:
  explicit Juggler(std::string game_id) : game_id_(std::move(game_id)) {}

  int Choose(const tablanette::v1::Turn& turn, const tablanette::v1::Rules& rules, const std::set<int>& /*exclude*/,
             const Clock& clock) override {
    if (turn.game_id() != game_id_) throw std::logic_error("a turn of game " + turn.game_id() + " reached game " + game_id_);
    if (rules.target() == 52 && ++turns_ == 1) {
      std::cerr << "juggler: slow game thinking, " << clock.RemainingMs() << " ms left" << std::endl;
      const char* release = std::getenv("TABLANETTE_JUGGLER_RELEASE");
      while (!Exists(release) && clock.RemainingMs() > 5000)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::cerr << "juggler: slow game released" << std::endl;
    }
    return turn.legal_plays_size() - 1;
  }

 private:
  std::string game_id_;
  int turns_ = 0;
};

}  // namespace

std::unique_ptr<GameStrategy> NewGameStrategy(const tablanette::v1::GameStarted& game) {
  return std::make_unique<Juggler>(game.game_id());
}

}  // namespace tablanette_bot
