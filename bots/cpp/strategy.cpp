#include "strategy.h"

#include <cctype>
#include <tuple>

namespace tablanette_bot {

namespace v1 = tablanette::v1;

namespace {
constexpr double kEps = 1e-9;
}  // namespace

const v1::Rules& DefaultRules() {
  static const v1::Rules rules = [] {
    v1::Rules r;
    r.set_preset("tablic");
    r.set_players(2);
    r.set_hand_size(6);
    r.set_table_size(4);
    r.add_ace_values(1);
    r.set_jack("sweep");
    r.set_queen(12);
    r.set_king(13);
    r.set_sums(true);
    r.set_capture_optional(true);
    r.set_tabla_points("fixed");
    r.set_jack_sweep_tabla("same");
    auto& points = *r.mutable_card_points();
    points["TD"] = 3;
    points["2C"] = 2;
    for (const char* ace : {"AC", "AD", "AH", "AS"}) points[ace] = 1;
    r.set_most_cards(3);
    r.set_target(101);
    return r;
  }();
  return rules;
}

std::string CanonicalCard(const std::string& card) {
  std::string up;
  up.reserve(card.size());
  for (char c : card) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (up.size() == 3 && up[0] == '1' && up[1] == '0') up = "T" + up.substr(2);
  return up;
}

int RankIndex(const std::string& card) {
  const std::string c = CanonicalCard(card);
  if (c.size() != 2) return -1;
  for (int i = 0; kRanks[i] != '\0'; ++i)
    if (kRanks[i] == c[0]) return i;
  return -1;
}

int SuitIndex(const std::string& card) {
  const std::string c = CanonicalCard(card);
  if (c.size() != 2) return -1;
  for (int i = 0; kSuits[i] != '\0'; ++i)
    if (kSuits[i] == c[1]) return i;
  return -1;
}

int CardPoints(const v1::Rules& rules, const std::string& card) {
  const auto& points = rules.card_points();
  auto it = points.find(card);
  if (it == points.end()) it = points.find(CanonicalCard(card));
  return it == points.end() ? 0 : it->second;
}

bool IsSweepingJack(const v1::Rules& rules, const std::string& card) {
  return rules.jack() == "sweep" && RankIndex(card) == 10;
}

double CaptureScore(const v1::Rules& rules, const v1::Turn& turn, const v1::Play& play) {
  if (play.captured_size() == 0) return 0.0;
  double score = CardPoints(rules, play.card());
  for (const auto& card : play.captured()) score += CardPoints(rules, card);
  // Captured cards are always table cards, so taking as many as the table
  // holds means the table is left empty: a tabla.
  if (play.captured_size() == turn.observation().table_size()) score += 1.0;
  score += 0.1 * (play.captured_size() + 1);
  return score;
}

int ChooseMove(const v1::Turn& turn, const v1::Rules& rules, const std::set<int>& exclude) {
  int best_capture = -1;
  double best_score = 0.0;
  int best_trail = -1;
  // Lower is better: (sweeping Jack?, points, rank, suit).
  std::tuple<bool, int, int, int> best_trail_key{};

  for (int i = 0; i < turn.legal_plays_size(); ++i) {
    if (exclude.count(i) != 0) continue;
    const v1::Play& play = turn.legal_plays(i);
    if (play.captured_size() > 0) {
      const double score = CaptureScore(rules, turn, play);
      if (best_capture < 0 || score > best_score + kEps) {
        best_capture = i;
        best_score = score;
      }
    } else {
      const std::tuple<bool, int, int, int> key{IsSweepingJack(rules, play.card()),
                                                CardPoints(rules, play.card()),
                                                RankIndex(play.card()), SuitIndex(play.card())};
      if (best_trail < 0 || key < best_trail_key) {
        best_trail = i;
        best_trail_key = key;
      }
    }
  }
  return best_capture >= 0 ? best_capture : best_trail;
}

std::string DescribePlay(const v1::Play& play) {
  std::string out = play.card();
  for (int i = 0; i < play.captured_size(); ++i) {
    out += (i == 0 ? ":" : ",");
    out += play.captured(i);
  }
  return out;
}

}  // namespace tablanette_bot
