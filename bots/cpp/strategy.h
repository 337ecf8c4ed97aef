// The bot's policy: pick one of Turn.legal_plays. Pure functions, no network,
// so the self-test (selftest.cpp) can exercise them on hand-made messages.
//
// The contract between the bot and a strategy (bot.cpp keeps it):
//  - each game gets its own GameStrategy, made by NewGameStrategy() when the
//    game starts (GameStarted, or the first Turn of a game whose GameStarted
//    was missed after a reconnect: `game` then holds only the game_id), and
//    destroyed when the game is over, so per-game state is safe in it;
//  - each game has its own thread: Choose() may think as long as the turn
//    allows (clock.RemainingMs()) without delaying any other game, and calls
//    for one game never overlap (a turn that comes while the previous one is
//    still being decided waits; the late answer is dropped);
//  - if Choose() throws or returns an index that is out of range or already
//    tried, the bot plays the first untried legal play (on a first try that is
//    legal_plays(0), the engine's own timeout play) and logs why: a bug costs
//    a move, never the connection.
//
// To write your own strategy, change ChooseMove() in strategy.cpp (keep its
// signature), or write a GameStrategy and make NewGameStrategy() in
// game_strategy.cpp return it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <set>
#include <string>

#include "tablanette/v1/arena.pb.h"
#include "tablanette/v1/game.pb.h"

namespace tablanette_bot {

// The time left for one turn, from Turn.time_left_ms, on this machine's
// steady clock (a wrong wall clock on either side does not matter). The
// network's share of the way back is not taken off: keep a margin. On a
// CLOCK_CPU turn (a hosted bot in a league on the CPU clock) it is the CPU
// time left, counted with std::clock() (this process's CPU time), as the
// arena counts the sandbox's CPU time. BankMs() is the part of the budget
// that is the bot's time bank for the rest of the match (Turn.time_bank_ms):
// plan on RemainingMs() - BankMs() to keep the reserve.
class Clock {
 public:
  using Steady = std::chrono::steady_clock;
  explicit Clock(int64_t time_left_ms, Steady::time_point received = Steady::now(), bool cpu = false,
                 int64_t bank_ms = 0)
      : budget_ms_(time_left_ms > 0 ? time_left_ms : 0),
        bank_ms_(bank_ms > 0 ? std::min(bank_ms, budget_ms_) : 0),
        deadline_(received + std::chrono::milliseconds(budget_ms_)),
        cpu_start_(cpu ? std::clock() : static_cast<std::clock_t>(-1)) {}
  int64_t BankMs() const { return bank_ms_; }
  // Milliseconds left before the turn's deadline (0 once it has passed).
  int64_t RemainingMs() const {
    int64_t left;
    if (cpu_start_ != static_cast<std::clock_t>(-1)) {
      left = budget_ms_ - static_cast<int64_t>((std::clock() - cpu_start_) * 1000 / CLOCKS_PER_SEC);
    } else {
      left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Steady::now()).count();
    }
    return left > 0 ? left : 0;
  }

 private:
  int64_t budget_ms_;
  int64_t bank_ms_;
  Steady::time_point deadline_;
  std::clock_t cpu_start_;
};

// One game's strategy (see the contract above).
class GameStrategy {
 public:
  virtual ~GameStrategy() = default;
  // An index into turn.legal_plays() not in `exclude` (plays the server rejected).
  virtual int Choose(const tablanette::v1::Turn& turn, const tablanette::v1::Rules& rules,
                     const std::set<int>& exclude, const Clock& clock) = 0;
};

// The strategy of a new game (game_strategy.cpp; the shipped one is greedy).
std::unique_ptr<GameStrategy> NewGameStrategy(const tablanette::v1::GameStarted& game);

// Rules used when a game's GameStarted.rules never arrived: the `tablic`
// preset's scoring (TD 3, 2C 2, each Ace 1; sweeping Jack; fixed tabla).
const tablanette::v1::Rules& DefaultRules();

// Card names: a rank letter then a suit letter, both in the protocol's order
// (a card's number in the packed form is rank index * 4 + suit index).
inline constexpr char kRanks[] = "A23456789TJQK";
inline constexpr char kSuits[] = "CDHS";

// Canonical card name ("10d" -> "TD"); unknown input is returned upper-cased.
std::string CanonicalCard(const std::string& card);

// 0 (Ace) .. 12 (King), or -1 if the name is not a card.
int RankIndex(const std::string& card);
// 0 (C) .. 3 (S), or -1.
int SuitIndex(const std::string& card);

// Rules.card_points of one card (0 when it scores nothing).
int CardPoints(const tablanette::v1::Rules& rules, const std::string& card);

// True if the card is a Jack and the rules make Jacks sweep the table.
bool IsSweepingJack(const tablanette::v1::Rules& rules, const std::string& card);

// Points a capture banks right now: card points of the captured cards and of
// the played card, +1 if it clears the table, +0.1 per card taken (played card
// included). A trail (nothing captured) scores 0.
double CaptureScore(const tablanette::v1::Rules& rules, const tablanette::v1::Turn& turn,
                    const tablanette::v1::Play& play);

// The greedy policy. Returns an index into turn.legal_plays(), skipping the
// indices in `exclude` (plays the server already rejected), or -1 if none is
// left. Best capture by CaptureScore; with no capture, trail the card with the
// fewest points (not a sweeping Jack if any other trail exists; ties: lowest
// rank, then suit C < D < H < S).
int ChooseMove(const tablanette::v1::Turn& turn, const tablanette::v1::Rules& rules,
               const std::set<int>& exclude = {});

// "9C:AH,8H" for a capture, "5C" for a trail.
std::string DescribePlay(const tablanette::v1::Play& play);

}  // namespace tablanette_bot
