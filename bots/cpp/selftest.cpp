// Self-test of the strategy on hand-made Turn messages, of the game threads
// (each game decided on its own thread with its own strategy; a strategy that
// throws), and of the connection rules (address list, round robin, back-off,
// what each end-of-stream status leads to, version label). No network.
// Run: ./build/tablanette-cpp-bot-selftest   (or: ctest --test-dir build)
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "connection.h"
#include "game_thread.h"
#include "packed.h"
#include "strategy.h"

namespace v1 = tablanette::v1;
using namespace tablanette_bot;

namespace {

int g_failures = 0;
int g_checks = 0;

void Check(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::cerr << "FAIL: " << what << "\n";
  }
}

void CheckEq(int got, int want, const std::string& what) {
  Check(got == want, what + " (got " + std::to_string(got) + ", want " + std::to_string(want) + ")");
}

void CheckNear(double got, double want, const std::string& what) {
  Check(std::fabs(got - want) < 1e-9,
        what + " (got " + std::to_string(got) + ", want " + std::to_string(want) + ")");
}

void CheckList(const std::vector<std::string>& got, const std::vector<std::string>& want,
               const std::string& what) {
  std::string text;
  for (const auto& s : got) text += "[" + s + "]";
  Check(got == want, what + " (got " + text + ")");
}

// The connection rules of connection.h.
void CheckConnectionRules() {
  // --address / TABLANETTE_ADDRESS: one address, or a comma-separated list.
  CheckList(ParseAddressList("127.0.0.1:50051"), {"127.0.0.1:50051"}, "one address");
  CheckList(ParseAddressList("a:1,b:2,c:3"), {"a:1", "b:2", "c:3"}, "three addresses");
  CheckList(ParseAddressList(" a:1 , b:2,, "), {"a:1", "b:2"}, "spaces and empty entries ignored");
  CheckList(ParseAddressList("[::1]:50051,dns:///arena.example.org:443"),
            {"[::1]:50051", "dns:///arena.example.org:443"}, "IPv6 and dns: targets");
  Check(ParseAddressList("").empty(), "empty text: no address");
  Check(ParseAddressList(" , ").empty(), "only commas: no address");

  // Round robin: the next address after each failure, wrapping around.
  CheckEq(static_cast<int>(NextAddressIndex(0, 1)), 0, "one address: always the same");
  CheckEq(static_cast<int>(NextAddressIndex(0, 3)), 1, "0 -> 1 of 3");
  CheckEq(static_cast<int>(NextAddressIndex(1, 3)), 2, "1 -> 2 of 3");
  CheckEq(static_cast<int>(NextAddressIndex(2, 3)), 0, "2 -> 0 of 3 (wraps)");

  // Back-off: 0.25 s doubling to a 2 s cap, each delay within +-20%, reset().
  CheckNear(Backoff::kFirstSeconds, 0.25, "first delay");
  CheckNear(Backoff::kMaxSeconds, 2.0, "delay cap");
  CheckNear(Backoff::kJitter, 0.2, "jitter");
  {
    Backoff backoff(42);
    const double want[] = {0.25, 0.5, 1.0, 2.0, 2.0, 2.0};
    for (double base : want) {
      CheckNear(backoff.base(), base, "back-off step before jitter");
      const double d = backoff.Next();
      Check(d >= base * 0.8 - 1e-12 && d <= base * 1.2 + 1e-12,
            "delay " + std::to_string(d) + " s within 20% of " + std::to_string(base) + " s");
    }
    backoff.Reset();
    CheckNear(backoff.base(), 0.25, "reset() starts over at 0.25 s");
  }
  {
    // Many seeds: never outside the bounds, and the jitter does vary.
    std::set<double> seen;
    bool in_bounds = true;
    for (unsigned seed = 0; seed < 200; ++seed) {
      Backoff backoff(seed);
      for (int i = 0; i < 6; ++i) {
        const double base = backoff.base();
        const double d = backoff.Next();
        in_bounds = in_bounds && d >= base * 0.8 - 1e-12 && d <= base * 1.2 + 1e-12 && d <= 2.4 + 1e-12;
        if (i == 0) seen.insert(d);
      }
    }
    Check(in_bounds, "200 seeds: every delay within +-20% of its step, none above 2.4 s");
    Check(seen.size() > 100, "jitter varies the first delay");
  }

  // A draining server: UNAVAILABLE with "shutting down" in the message only.
  Check(IsDraining(grpc::StatusCode::UNAVAILABLE, "server is shutting down; reconnect"), "draining");
  Check(IsDraining(grpc::StatusCode::UNAVAILABLE, "Server Is Shutting Down"), "draining, any case");
  Check(!IsDraining(grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses"),
        "a dead server is not draining");
  Check(!IsDraining(grpc::StatusCode::ABORTED, "shutting down"), "only UNAVAILABLE drains");

  // retry-after-ms: whole milliseconds; anything else is no hint; absurd values are capped.
  CheckEq(static_cast<int>(ParseRetryAfterMs("5000")), 5000, "retry-after-ms 5000");
  CheckEq(static_cast<int>(ParseRetryAfterMs(" 40 ")), 40, "retry-after-ms with spaces");
  CheckEq(static_cast<int>(ParseRetryAfterMs("")), 0, "no retry-after-ms");
  CheckEq(static_cast<int>(ParseRetryAfterMs("soon")), 0, "retry-after-ms not a number");
  CheckEq(static_cast<int>(ParseRetryAfterMs("-5")), 0, "negative retry-after-ms");
  CheckEq(static_cast<int>(ParseRetryAfterMs("1.5")), 0, "fractional retry-after-ms");
  CheckEq(static_cast<int>(ParseRetryAfterMs("999999999999999999999")), static_cast<int>(kMaxRetryAfterMs),
          "huge retry-after-ms is capped");
  CheckEq(static_cast<int>(ParseRetryAfterMs("86400000")), static_cast<int>(kMaxRetryAfterMs),
          "a day of retry-after-ms is capped");

  // What each end-of-stream status leads to (Decide).
  using grpc::StatusCode;
  for (StatusCode code : {StatusCode::UNAUTHENTICATED, StatusCode::PERMISSION_DENIED,
                          StatusCode::INVALID_ARGUMENT, StatusCode::UNIMPLEMENTED})
    Check(Decide(code, "x", 0).fatal, "fatal: status " + std::to_string(static_cast<int>(code)));
  Check(Decide(StatusCode::UNAUTHENTICATED, "this bot's token was revoked", 0).fatal,
        "a revoked token is fatal");
  Check(Decide(StatusCode::UNAUTHENTICATED, "x", 5000).fatal, "a hint does not make a fatal code retry");
  {
    // ALREADY_EXISTS: another session is live; at least 5 s, or the hint if longer.
    const ReconnectDecision hinted = Decide(StatusCode::ALREADY_EXISTS, "bot is connected already", 5000);
    Check(!hinted.fatal && !hinted.draining, "ALREADY_EXISTS is retried");
    CheckNear(hinted.wait_at_least_seconds, 5.0, "ALREADY_EXISTS with retry-after-ms 5000: 5 s");
    CheckNear(Decide(StatusCode::ALREADY_EXISTS, "x", 0).wait_at_least_seconds, 5.0,
              "ALREADY_EXISTS without a hint: 5 s");
    CheckNear(Decide(StatusCode::ALREADY_EXISTS, "x", 100).wait_at_least_seconds, 5.0,
              "ALREADY_EXISTS with a short hint: still 5 s");
    CheckNear(Decide(StatusCode::ALREADY_EXISTS, "x", 12000).wait_at_least_seconds, 12.0,
              "ALREADY_EXISTS with a longer hint: the hint");
  }
  {
    // RESOURCE_EXHAUSTED: slow down; at least 1 s, or the hint if longer.
    Check(!Decide(StatusCode::RESOURCE_EXHAUSTED, "x", 0).fatal, "RESOURCE_EXHAUSTED is retried");
    CheckNear(Decide(StatusCode::RESOURCE_EXHAUSTED, "the bot does not read its stream", 0).wait_at_least_seconds,
              1.0, "RESOURCE_EXHAUSTED without a hint: 1 s");
    CheckNear(Decide(StatusCode::RESOURCE_EXHAUSTED, "retry in 40 ms", 40).wait_at_least_seconds, 1.0,
              "RESOURCE_EXHAUSTED with a short hint: still 1 s");
    CheckNear(Decide(StatusCode::RESOURCE_EXHAUSTED, "retry in 3500 ms", 3500).wait_at_least_seconds, 3.5,
              "RESOURCE_EXHAUSTED with a longer hint: the hint");
  }
  // Everything else: the usual back-off (no floor), ABORTED included.
  for (StatusCode code : {StatusCode::ABORTED, StatusCode::UNAVAILABLE, StatusCode::CANCELLED,
                          StatusCode::UNKNOWN, StatusCode::INTERNAL, StatusCode::DEADLINE_EXCEEDED,
                          StatusCode::OK, StatusCode::NOT_FOUND, StatusCode::FAILED_PRECONDITION}) {
    const ReconnectDecision d = Decide(code, "replaced by a newer session", 0);
    Check(!d.fatal && !d.draining && d.wait_at_least_seconds == 0.0,
          "retried with the back-off alone: status " + std::to_string(static_cast<int>(code)));
  }
  CheckNear(Decide(StatusCode::UNAVAILABLE, "busy", 3000).wait_at_least_seconds, 3.0,
            "a hint counts whatever the code");
  CheckNear(Decide(StatusCode::UNAVAILABLE, "x", -7).wait_at_least_seconds, 0.0, "a negative hint is none");
  Check(Decide(StatusCode::UNAVAILABLE, "server is shutting down; reconnect", 0).draining,
        "a draining server: reconnect at once");
  Check(!Decide(StatusCode::UNAVAILABLE, "server is shutting down", 0).fatal, "draining is not fatal");

  // The version label: CMake's TABLANETTE_BOT_NAME and TABLANETTE_BOT_VERSION,
  // or the environment variable TABLANETTE_BOT_VERSION when it is set.
  Check(DefaultVersionLabel() == std::string(TABLANETTE_BOT_NAME) + " " + TABLANETTE_BOT_VERSION,
        "default label is '<name> <version>' from CMake (" + DefaultVersionLabel() + ")");
  Check(VersionLabel(nullptr) == DefaultVersionLabel(), "no env: the default label");
  Check(VersionLabel("") == DefaultVersionLabel(), "empty env: the default label");
  Check(VersionLabel("my-bot 1.2.0") == "my-bot 1.2.0", "env TABLANETTE_BOT_VERSION wins");
}

struct P {
  std::string card;
  std::vector<std::string> captured;
};

v1::Turn MakeTurn(std::initializer_list<std::string> table, std::initializer_list<std::string> hand,
                  std::initializer_list<P> plays) {
  v1::Turn turn;
  turn.set_game_id("g-selftest");
  turn.set_turn_id(7);
  for (const auto& c : table) turn.mutable_observation()->add_table(c);
  for (const auto& c : hand) turn.mutable_observation()->add_hand(c);
  for (const auto& p : plays) {
    v1::Play* play = turn.add_legal_plays();
    play->set_card(p.card);
    for (const auto& c : p.captured) play->add_captured(c);
  }
  return turn;
}

v1::Rules Tablic() { return DefaultRules(); }

v1::Rules NumericJack() {
  v1::Rules r = DefaultRules();
  r.set_jack("12");
  return r;
}

// What game threads send and log, and a way to wait for it (no timing is
// assumed: a wait only fails the check after a minute without the message).
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> moves;  // "game/turn/index"
  std::vector<std::string> logs;
  bool open = true;

  GameThread::Send Sender() {
    return [this](const v1::BotMessage& m) {
      std::lock_guard<std::mutex> lock(mu);
      if (!open) return false;
      moves.push_back(m.play().game_id() + "/" + std::to_string(m.play().turn_id()) + "/" +
                      std::to_string(m.play().index()));
      cv.notify_all();
      return true;
    };
  }
  GameThread::Logger Logger() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      logs.push_back(line);
      cv.notify_all();
    };
  }
  bool WaitFor(const std::function<bool()>& done) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::minutes(1), done);
  }
  std::vector<std::string> Moves() {
    std::lock_guard<std::mutex> lock(mu);
    return moves;
  }
  bool Logged(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& l : logs)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
};

// A gate a strategy can wait at until the test opens it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    ++waiting;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  bool WaitUntilWaiting() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::minutes(1), [this] { return waiting > 0; });
  }
};

// Plays the last legal play; in the slow game, every call waits at the gate first.
class GatedStrategy : public GameStrategy {
 public:
  GatedStrategy(Gate* gate, int* calls) : gate_(gate), calls_(calls) {}
  int Choose(const v1::Turn& turn, const v1::Rules&, const std::set<int>&, const Clock&) override {
    ++*calls_;
    if (gate_ != nullptr) gate_->Wait();
    return turn.legal_plays_size() - 1;
  }

 private:
  Gate* gate_;
  int* calls_;
};

v1::Turn GameTurn(const std::string& game, int64_t turn_id) {
  v1::Turn t = MakeTurn({"5H"}, {"5C", "KD"}, {{"5C", {"5H"}}, {"KD", {}}});
  t.set_game_id(game);
  t.set_turn_id(turn_id);
  t.set_time_left_ms(60000);
  return t;
}

void CheckGameThreads() {
  // 1. A slow game does not hold up another: five fast turns are answered while
  //    the slow game's first turn is still thinking. Then a second slow turn
  //    supersedes the first: the late answer is dropped, the new one sent.
  {
    Recorder rec;
    Gate gate;
    int slow_calls = 0, fast_calls = 0;
    auto slow = std::make_unique<GameThread>("slow", std::make_unique<GatedStrategy>(&gate, &slow_calls),
                                             rec.Sender(), rec.Logger());
    auto fast = std::make_unique<GameThread>("fast", std::make_unique<GatedStrategy>(nullptr, &fast_calls),
                                             rec.Sender(), rec.Logger());
    slow->PostTurn(GameTurn("slow", 1), Tablic());
    Check(gate.WaitUntilWaiting(), "the slow game's strategy is thinking");
    for (int turn = 1; turn <= 5; ++turn) {
      fast->PostTurn(GameTurn("fast", turn), Tablic());
      Check(rec.WaitFor([&] { return rec.moves.size() == static_cast<std::size_t>(turn); }),
            "fast turn " + std::to_string(turn) + " answered while the slow game thinks");
    }
    CheckList(rec.Moves(), {"fast/1/1", "fast/2/1", "fast/3/1", "fast/4/1", "fast/5/1"}, "five fast answers");
    slow->PostTurn(GameTurn("slow", 2), Tablic());  // its turn 1 timed out on the server
    gate.Open();
    Check(rec.WaitFor([&] { return rec.moves.size() == 6; }), "the slow game's turn 2 answered");
    Check(rec.Moves().back() == "slow/2/1", "turn 2's answer, not turn 1's");
    Check(rec.Logged("game slow turn 1: decided after the game moved on; answer dropped"), "the late answer logged");
    CheckEq(slow_calls, 2, "one call per slow turn, never two at once");
    CheckEq(static_cast<int>(fast->Answered()), 5, "fast answered 5");
  }

  // 2. A strategy that throws, or answers out of range or twice the same index,
  //    costs a move: the first untried legal play goes instead, and the game goes on.
  {
    class Clumsy : public GameStrategy {
     public:
      int Choose(const v1::Turn& turn, const v1::Rules&, const std::set<int>&, const Clock& clock) override {
        remaining.push_back(clock.RemainingMs());
        switch (turn.turn_id() % 4) {
          case 1: throw std::runtime_error("a bug in the bot");
          case 2: throw 42;
          case 3: return 99;
          default: return 1;
        }
      }
      std::vector<int64_t> remaining;
    };
    Recorder rec;
    auto strategy = std::make_unique<Clumsy>();
    Clumsy* clumsy = strategy.get();
    GameThread game("g", std::move(strategy), rec.Sender(), rec.Logger());
    for (int turn = 1; turn <= 4; ++turn) {
      game.PostTurn(GameTurn("g", turn), Tablic());
      Check(rec.WaitFor([&] { return rec.moves.size() == static_cast<std::size_t>(turn); }),
            "turn " + std::to_string(turn) + " answered");
    }
    CheckList(rec.Moves(), {"g/1/0", "g/2/0", "g/3/0", "g/4/1"}, "a failed choice plays legal play 0");
    CheckEq(static_cast<int>(game.ChooseErrors()), 3, "three failures counted");
    Check(rec.Logged("game g turn 1: strategy failed (a bug in the bot); playing legal play 0"), "the bug logged");
    Check(rec.Logged("not a std::exception"), "a non-std exception logged");
    Check(rec.Logged("it chose 99, not an untried index into 2 legal plays"), "an out-of-range index logged");
    bool clocks_ok = !clumsy->remaining.empty();
    for (int64_t ms : clumsy->remaining) clocks_ok = clocks_ok && ms > 0 && ms <= 60000;
    Check(clocks_ok, "Choose gets the turn's time left (0 < ms <= time_left_ms)");
    // Rejected: the next untried play (turn 4 tried index 1; its fallback is index 0).
    game.PostRejected(4);
    Check(rec.WaitFor([&] { return rec.moves.size() == 5; }), "the rejected turn answered again");
    Check(rec.Moves().back() == "g/4/0", "with the play not tried yet");
    game.PostRejected(3);  // a stale rejection: ignored
    game.PostTurn(GameTurn("g", 5), Tablic());
    Check(rec.WaitFor([&] { return rec.moves.size() == 6; }), "the next turn answered");
    Check(rec.Moves().back() == "g/5/0", "and nothing for the stale rejection");
  }

  // 3. A game that ends while its strategy thinks: the reader thread does not wait, and nothing is sent.
  {
    Recorder rec;
    Gate gate;
    int calls = 0;
    auto game = std::make_unique<GameThread>("over", std::make_unique<GatedStrategy>(&gate, &calls), rec.Sender(),
                                             rec.Logger());
    game->PostTurn(GameTurn("over", 1), Tablic());
    Check(gate.WaitUntilWaiting(), "thinking");
    game.reset();  // GameOver: returns at once though the strategy is still thinking
    gate.Open();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Check(rec.Moves().empty(), "no move sent for a game that is over");
  }
}

}  // namespace

int main() {
  const v1::Rules tablic = Tablic();

  // A CLOCK_CPU turn's clock counts this process's CPU time, not the time it waits.
  {
    const Clock cpu(500, Clock::Steady::now(), true);
    const Clock wall(500);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Check(cpu.RemainingMs() > 400, "a CPU clock does not run while the bot waits");
    Check(wall.RemainingMs() <= 200, "a wall clock runs while the bot waits");
    const std::clock_t start = std::clock();
    volatile uint64_t spin = 0;
    while ((std::clock() - start) * 1000 / CLOCKS_PER_SEC < 200) spin = spin + 1;
    Check(cpu.RemainingMs() <= 300, "a CPU clock runs while the bot computes");
  }

  // The packed form reads as the named one: cards by number (AC=0 ... KS=51), sets as masks.
  {
    auto bits = [](std::initializer_list<int> cards) {
      std::uint64_t m = 0;
      for (int c : cards) m |= std::uint64_t{1} << c;
      return m;
    };
    v1::Turn t;
    t.set_game_id("g");
    v1::PackedObservation* p = t.mutable_packed();
    p->set_seat(1);
    p->set_hand(bits({25, 51}));        // 7D KS
    p->set_table(bits({6, 19, 24}));    // 2H 5S 7C
    p->add_piles(0);
    p->add_piles(bits({0, 37}));        // AC TD
    p->add_play_seats(0);
    p->add_play_cards(37);
    p->add_play_captured(bits({0}));
    p->add_play_bonus(0);
    p->add_play_auto(false);
    p->set_unseen(bits({4, 50}));       // 2C KH
    for (auto [card, captured] : {std::pair<int, std::uint64_t>{25, 0}, {25, bits({24})}, {25, bits({6, 19})}}) {
      t.add_legal_cards(card);
      t.add_legal_captured(captured);
    }
    std::string why;
    Check(UnpackTurn(&t, &why), "a packed turn unpacks");
    Check(!t.has_packed() && t.legal_cards_size() == 0, "the packed fields are cleared");
    Check(t.observation().seat() == 1 && t.observation().hand_size() == 2 && t.observation().hand(1) == "KS", "hand");
    Check(t.observation().table_size() == 3 && t.observation().table(0) == "2H", "table");
    Check(t.observation().piles_size() == 2 && t.observation().piles(1).cards(1) == "TD", "piles");
    Check(t.observation().plays_size() == 1 && t.observation().plays(0).card() == "TD" &&
              t.observation().plays(0).captured(0) == "AC", "plays");
    Check(t.observation().unseen_size() == 2 && t.observation().unseen(1) == "KH", "unseen");
    Check(t.legal_plays_size() == 3 && t.legal_plays(2).card() == "7D" && t.legal_plays(2).captured_size() == 2 &&
              t.legal_plays(2).captured(1) == "5S", "legal plays");
    v1::Turn named = t;
    Check(UnpackTurn(&named, &why) && named.SerializeAsString() == t.SerializeAsString(), "a named turn is left as it is");
    v1::Turn bad;
    bad.mutable_packed();
    bad.add_legal_cards(52);
    bad.add_legal_captured(0);
    Check(!UnpackTurn(&bad, &why) && why.find("outside 0..51") != std::string::npos, "a card number out of range: " + why);
    v1::Turn high;
    high.mutable_packed()->set_hand(std::uint64_t{1} << 60);
    Check(!UnpackTurn(&high, &why) && why.find("52 cards") != std::string::npos, "a mask above the deck: " + why);
  }

  // Card helpers.
  CheckEq(RankIndex("AS"), 0, "rank of AS");
  CheckEq(RankIndex("KD"), 12, "rank of KD");
  CheckEq(RankIndex("10d"), 9, "rank of 10d");
  CheckEq(SuitIndex("TH"), 2, "suit of TH");
  CheckEq(RankIndex("ZZ"), -1, "rank of junk");
  Check(CanonicalCard("10d") == "TD", "canonical 10d");
  CheckEq(CardPoints(tablic, "TD"), 3, "points TD");
  CheckEq(CardPoints(tablic, "2C"), 2, "points 2C");
  CheckEq(CardPoints(tablic, "AH"), 1, "points AH");
  CheckEq(CardPoints(tablic, "KS"), 0, "points KS");
  Check(IsSweepingJack(tablic, "JC"), "JC sweeps in tablic");
  Check(!IsSweepingJack(NumericJack(), "JC"), "JC does not sweep with jack=12");

  // 1. The capture that banks the most points wins, not the one with most cards.
  {
    // table 2C 3H 4S 5D TD ; hand 5C TS 9H
    const v1::Turn t = MakeTurn({"2C", "3H", "4S", "5D", "TD"}, {"5C", "TS", "9H"},
                                {{"5C", {}},
                                 {"5C", {"2C", "3H"}},   // 2 + 0.3        = 2.3
                                 {"5C", {"5D"}},         // 0 + 0.2        = 0.2
                                 {"9H", {}},
                                 {"9H", {"4S", "5D"}},   // 0 + 0.3        = 0.3
                                 {"TS", {}},
                                 {"TS", {"TD"}},         // 3 + 0.2        = 3.2
                                 {"TS", {"2C", "3H", "5D"}}});  // 2 + 0.4  = 2.4
    CheckEq(ChooseMove(t, tablic), 6, "best-points capture TS:TD");
    Check(std::fabs(CaptureScore(tablic, t, t.legal_plays(6)) - 3.2) < 1e-9, "score of TS:TD is 3.2");
    Check(CaptureScore(tablic, t, t.legal_plays(0)) == 0.0, "a trail scores 0");
    // If the server rejected index 6, the next best is 7.
    CheckEq(ChooseMove(t, tablic, {6}), 7, "next best after a rejection");
    CheckEq(ChooseMove(t, tablic, {6, 7}), 1, "third best after two rejections");
  }

  // 2. Clearing the table earns +1 (tabla), which can beat a richer partial capture.
  {
    // table 4H 5S ; hand 9C  ... and a capture of AD elsewhere for comparison
    const v1::Turn t = MakeTurn({"4H", "5S"}, {"9C", "5D"},
                                {{"5D", {}}, {"5D", {"5S"}}, {"9C", {}}, {"9C", {"4H", "5S"}}});
    Check(std::fabs(CaptureScore(tablic, t, t.legal_plays(3)) - 1.3) < 1e-9, "tabla score 1.3");
    CheckEq(ChooseMove(t, tablic), 3, "tabla 9C:4H,5S");
  }

  // 3. A sweeping Jack takes the whole table: tabla bonus + card points.
  {
    const v1::Turn t = MakeTurn({"AH", "7C", "TD"}, {"JS", "7D"},
                                {{"7D", {}}, {"7D", {"7C"}}, {"JS", {"AH", "7C", "TD"}}});
    CheckEq(ChooseMove(t, tablic), 2, "Jack sweep of AH 7C TD");
  }

  // 4. No capture: trail the card with fewest points, lowest rank on ties.
  {
    const v1::Turn t = MakeTurn({"KH"}, {"TD", "AS", "8C", "3D"},
                                {{"TD", {}}, {"AS", {}}, {"8C", {}}, {"3D", {}}});
    CheckEq(ChooseMove(t, tablic), 3, "trail 3D (0 points, lowest rank)");
  }

  // 5. Never trail a sweeping Jack while another trail exists, even a pricier one.
  {
    const v1::Turn t = MakeTurn({}, {"JC", "TD"}, {{"JC", {}}, {"TD", {}}});
    CheckEq(ChooseMove(t, tablic), 1, "trail TD rather than a sweeping Jack");
    // ... but with a numeric Jack (0 points in these rules) the Jack is the cheapest trail.
    CheckEq(ChooseMove(t, NumericJack()), 0, "trail JC when jack is numeric");
    // ... and a lone Jack is trailed when it is the only play.
    const v1::Turn only = MakeTurn({}, {"JC"}, {{"JC", {}}});
    CheckEq(ChooseMove(only, tablic), 0, "only play is the Jack");
  }

  // 6. A capture beats trailing, even one worth only card count.
  {
    const v1::Turn t = MakeTurn({"6H", "KD"}, {"6S", "2H"},
                                {{"2H", {}}, {"6S", {}}, {"6S", {"6H"}}});
    CheckEq(ChooseMove(t, tablic), 2, "take 6H rather than trail");
  }

  // 7. Rules with different card points (e.g. tablanette-1939: K Q J T A 1, TD 2).
  {
    v1::Rules r = DefaultRules();
    r.clear_card_points();
    auto& pts = *r.mutable_card_points();
    for (const char* c : {"AC", "AD", "AH", "AS", "KC", "KD", "KH", "KS", "QC", "QD", "QH", "QS",
                          "JC", "JD", "JH", "JS", "TC", "TH", "TS"})
      pts[c] = 1;
    pts["TD"] = 2;
    pts["2C"] = 1;
    const v1::Turn t = MakeTurn({"KH", "2C", "3S"}, {"KS", "5D"},
                                {{"KS", {}}, {"KS", {"KH"}}, {"5D", {}}, {"5D", {"2C", "3S"}}});
    // KS:KH = 1+1+0.2 = 2.2 ; 5D:2C,3S = 1+0.3 = 1.3
    CheckEq(ChooseMove(t, r), 1, "KS:KH under 1939-style points");
    CheckEq(ChooseMove(t, tablic), 3, "5D:2C,3S under tablic points");
  }

  // 8. Nothing to choose.
  {
    const v1::Turn t = MakeTurn({"5H"}, {}, {});
    CheckEq(ChooseMove(t, tablic), -1, "no legal plays");
    const v1::Turn one = MakeTurn({"5H"}, {"5C"}, {{"5C", {"5H"}}});
    CheckEq(ChooseMove(one, tablic, {0}), -1, "everything excluded");
  }

  // 9. Missing card_points (empty Rules): falls back to card order only, still legal.
  {
    const v1::Rules empty;
    const v1::Turn t = MakeTurn({}, {"KC", "4H"}, {{"KC", {}}, {"4H", {}}});
    CheckEq(ChooseMove(t, empty), 1, "empty rules: trail lowest rank");
  }

  Check(DescribePlay(MakeTurn({}, {}, {{"9C", {"AH", "8H"}}}).legal_plays(0)) == "9C:AH,8H",
        "DescribePlay capture");

  CheckConnectionRules();
  CheckGameThreads();

  if (g_failures > 0) {
    std::cerr << g_failures << " of " << g_checks << " checks FAILED\n";
    return 1;
  }
  std::cout << "self-test (strategy, game threads and connection rules): all " << g_checks << " checks passed\n";
  return 0;
}
