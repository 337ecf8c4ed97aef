// One thread per game: the game's turns are decided there, so a slow decision
// in one game never delays another, and a game's GameStrategy is only ever
// used by its own thread (strategy.h states the whole contract).
//
// The session's reader thread posts each Turn (and each PlayRejected) to the
// game's GameThread and goes straight back to reading. The thread asks the
// strategy, checks its answer, and sends the move with the `send` function it
// was given (the session's mutex-guarded stream writer). No network here, so
// the self-test drives it with a recorder.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "strategy.h"
#include "tablanette/v1/arena.pb.h"

namespace tablanette_bot {

class GameThread {
 public:
  using Send = std::function<bool(const tablanette::v1::BotMessage&)>;
  using Logger = std::function<void(const std::string&)>;

  // Starts the thread; `strategy` is this game's own.
  GameThread(std::string game_id, std::unique_ptr<GameStrategy> strategy, Send send, Logger log,
             bool verbose = false);
  // Stops taking turns and lets the thread go: a decision in progress finishes
  // on its own (its answer is dropped), so a game that ends while its strategy
  // is thinking never holds up the reader thread.
  ~GameThread();
  GameThread(const GameThread&) = delete;
  GameThread& operator=(const GameThread&) = delete;

  // A new turn of this game (it supersedes any earlier one), with the game's rules.
  void PostTurn(const tablanette::v1::Turn& turn, const tablanette::v1::Rules& rules);
  // The server rejected our answer to `turn_id`: try the next best play (at
  // most kMaxTries plays per turn, and only before the turn's deadline).
  void PostRejected(int64_t turn_id);

  // Counters for logs and tests.
  int64_t Answered() const;
  int64_t ChooseErrors() const;

  static constexpr std::size_t kMaxTries = 3;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the thread, which may outlive this object
};

}  // namespace tablanette_bot
