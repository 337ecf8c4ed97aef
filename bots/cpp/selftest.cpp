// Self-test of the strategy on hand-made Turn messages. No network.
// Run: ./build/tablanette-cpp-bot-selftest   (or: ctest --test-dir build)
#include <cmath>
#include <initializer_list>
#include <iostream>
#include <string>
#include <vector>

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

  if (g_failures > 0) {
    std::cerr << g_failures << " of " << g_checks << " checks FAILED\n";
    return 1;
  }
  std::cout << "strategy self-test: all " << g_checks << " checks passed\n";
  return 0;
}
