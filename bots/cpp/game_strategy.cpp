// Which strategy each game gets: the bot calls NewGameStrategy() once per game.
// To play your own, return your GameStrategy here (see strategy.h).
#include "strategy.h"

namespace tablanette_bot {

namespace {

// The greedy policy of ChooseMove(); it keeps no state between turns.
class Greedy : public GameStrategy {
 public:
  int Choose(const tablanette::v1::Turn& turn, const tablanette::v1::Rules& rules,
             const std::set<int>& exclude, const Clock& /*clock*/) override {
    return ChooseMove(turn, rules, exclude);
  }
};

}  // namespace

std::unique_ptr<GameStrategy> NewGameStrategy(const tablanette::v1::GameStarted& /*game*/) {
  return std::make_unique<Greedy>();
}

}  // namespace tablanette_bot
