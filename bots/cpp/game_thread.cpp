#include "game_thread.h"

#include <chrono>
#include <exception>
#include <thread>
#include <utility>

namespace tablanette_bot {

namespace v1 = tablanette::v1;

namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct GameThread::State {
  std::string game_id;
  std::unique_ptr<GameStrategy> strategy;
  Send send;
  Logger log;
  bool verbose = false;

  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  // The game's current turn and what has been tried for it.
  v1::Turn turn;
  v1::Rules rules;
  std::set<int> tried;
  bool has_turn = false;
  int64_t generation = 0;  // bumped by every new turn: a late answer to an older one is dropped
  Clock clock{0};
  std::deque<int64_t> jobs;  // generations to decide (one per turn, one per rejection)
  int64_t answered = 0;
  int64_t choose_errors = 0;

  void Run() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [this] { return stop || !jobs.empty(); });
      if (stop) return;
      const int64_t job = jobs.front();
      jobs.pop_front();
      if (job != generation || !has_turn) continue;  // superseded by a newer turn
      if (tried.size() >= kMaxTries || tried.size() >= static_cast<std::size_t>(turn.legal_plays_size())) continue;
      if (!tried.empty() && turn.deadline_unix_ms() > 0 && NowUnixMs() >= turn.deadline_unix_ms()) continue;
      // Decide without the lock: the reader thread may post a newer turn meanwhile.
      const v1::Turn my_turn = turn;
      const v1::Rules my_rules = rules;
      const std::set<int> exclude = tried;
      const Clock my_clock = clock;
      lock.unlock();
      std::string failure;
      int index = -1;
      try {
        index = strategy->Choose(my_turn, my_rules, exclude, my_clock);
        if (index < 0 || index >= my_turn.legal_plays_size() || exclude.count(index) > 0)
          failure = "it chose " + std::to_string(index) + ", not an untried index into " +
                    std::to_string(my_turn.legal_plays_size()) + " legal plays";
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "an exception that is not a std::exception";
      }
      lock.lock();
      if (stop) return;
      const std::string where = "game " + game_id + " turn " + std::to_string(my_turn.turn_id());
      if (!failure.empty()) {
        ++choose_errors;
        index = -1;
        for (int i = 0; i < my_turn.legal_plays_size(); ++i) {
          if (exclude.count(i) == 0) {
            index = i;
            break;
          }
        }
        log(where + ": strategy failed (" + failure + "); playing legal play " + std::to_string(index));
        if (index < 0) continue;
      }
      if (job != generation) {
        log(where + ": decided after the game moved on; answer dropped");
        continue;
      }
      tried.insert(index);
      ++answered;
      v1::BotMessage msg;
      auto* play = msg.mutable_play();
      play->set_game_id(game_id);
      play->set_turn_id(my_turn.turn_id());
      play->set_index(index);
      if (verbose)
        log(where + ": table of " + std::to_string(my_turn.observation().table_size()) + " cards -> " +
            DescribePlay(my_turn.legal_plays(index)));
      lock.unlock();  // writing may wait for the stream: never hold the game's lock meanwhile
      if (!send(msg)) log(where + ": could not send the move (stream closing)");
      lock.lock();
    }
  }
};

GameThread::GameThread(std::string game_id, std::unique_ptr<GameStrategy> strategy, Send send, Logger log,
                       bool verbose)
    : state_(std::make_shared<State>()) {
  state_->game_id = std::move(game_id);
  state_->strategy = std::move(strategy);
  state_->send = std::move(send);
  state_->log = std::move(log);
  state_->verbose = verbose;
  std::thread([state = state_] { state->Run(); }).detach();
}

GameThread::~GameThread() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
    state_->jobs.clear();
  }
  state_->cv.notify_all();
}

void GameThread::PostTurn(const v1::Turn& turn, const v1::Rules& rules) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->turn = turn;
    state_->rules = rules;
    state_->tried.clear();
    state_->has_turn = true;
    state_->clock = Clock(turn.time_left_ms() > 0 ? turn.time_left_ms()
                                                  : (turn.deadline_unix_ms() > 0 ? turn.deadline_unix_ms() - NowUnixMs() : 0),
                          Clock::Steady::now(), turn.clock() == tablanette::v1::CLOCK_CPU, turn.time_bank_ms());
    state_->jobs.push_back(++state_->generation);
  }
  state_->cv.notify_one();
}

void GameThread::PostRejected(int64_t turn_id) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->has_turn || state_->turn.turn_id() != turn_id) return;  // a stale rejection
    state_->jobs.push_back(state_->generation);
  }
  state_->cv.notify_one();
}

int64_t GameThread::Answered() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->answered;
}

int64_t GameThread::ChooseErrors() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->choose_errors;
}

}  // namespace tablanette_bot
