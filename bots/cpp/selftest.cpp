// Self-test of the strategy on hand-made Turn messages, and of the connection
// rules (address list, round robin, back-off, what each end-of-stream status
// leads to, version label). No network.
// Run: ./build/tablanette-cpp-bot-selftest   (or: ctest --test-dir build)
#include <cmath>
#include <initializer_list>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "connection.h"
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

}  // namespace

int main() {
  const v1::Rules tablic = Tablic();

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

  if (g_failures > 0) {
    std::cerr << g_failures << " of " << g_checks << " checks FAILED\n";
    return 1;
  }
  std::cout << "self-test (strategy and connection rules): all " << g_checks << " checks passed\n";
  return 0;
}
