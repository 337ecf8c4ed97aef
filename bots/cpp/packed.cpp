#include "packed.h"

#include "strategy.h"

namespace tablanette_bot {
namespace v1 = tablanette::v1;

namespace {

constexpr std::uint64_t kDeck = (std::uint64_t{1} << 52) - 1;

std::string CardName(int n) { return std::string{kRanks[n >> 2], kSuits[n & 3]}; }

bool ValidCard(int n) { return n >= 0 && n < 52; }

template <typename Names>
bool AddNames(std::uint64_t mask, Names* names, std::string* why) {
  if (mask & ~kDeck) {
    *why = "a card mask has bits above the 52 cards";
    return false;
  }
  for (const auto& name : CardNames(mask)) names->Add(std::string(name));
  return true;
}

}  // namespace

std::vector<std::string> CardNames(std::uint64_t mask) {
  std::vector<std::string> out;
  for (int n = 0; n < 52 && mask >> n; ++n) {
    if (mask >> n & 1) out.push_back(CardName(n));
  }
  return out;
}

bool UnpackTurn(v1::Turn* turn, std::string* why) {
  if (!turn->has_packed()) return true;
  const v1::PackedObservation& p = turn->packed();
  const int plays = p.play_seats_size();
  if (p.play_cards_size() != plays || p.play_captured_size() != plays || p.play_bonus_size() != plays ||
      p.play_auto_size() != plays || turn->legal_cards_size() != turn->legal_captured_size()) {
    *why = "the packed lists of one kind (plays, legal plays) differ in length";
    return false;
  }
  v1::Observation obs;
  obs.set_seat(p.seat());
  obs.set_team(p.team());
  obs.set_turn(p.turn());
  obs.set_deal_index(p.deal_index());
  obs.set_dealer(p.dealer());
  obs.set_round(p.round());
  obs.set_rounds_left(p.rounds_left());
  if (!AddNames(p.hand(), obs.mutable_hand(), why) || !AddNames(p.table(), obs.mutable_table(), why) ||
      !AddNames(p.unseen(), obs.mutable_unseen(), why)) {
    return false;
  }
  for (std::uint64_t pile : p.piles()) {
    if (!AddNames(pile, obs.add_piles()->mutable_cards(), why)) return false;
  }
  *obs.mutable_hand_counts() = p.hand_counts();
  for (int i = 0; i < plays; ++i) {
    if (!ValidCard(p.play_cards(i))) {
      *why = "card number " + std::to_string(p.play_cards(i)) + " is outside 0..51";
      return false;
    }
    v1::PlayRecord* record = obs.add_plays();
    record->set_seat(p.play_seats(i));
    record->set_card(CardName(p.play_cards(i)));
    if (!AddNames(p.play_captured(i), record->mutable_captured(), why)) return false;
    record->set_bonus(p.play_bonus(i));
    record->set_auto_(p.play_auto(i));
  }
  *obs.mutable_deal_bonus() = p.deal_bonus();
  *obs.mutable_scores() = p.scores();
  obs.set_stock_count(p.stock_count());
  google::protobuf::RepeatedPtrField<v1::Play> legal;
  for (int i = 0; i < turn->legal_cards_size(); ++i) {
    if (!ValidCard(turn->legal_cards(i))) {
      *why = "card number " + std::to_string(turn->legal_cards(i)) + " is outside 0..51";
      return false;
    }
    v1::Play* play = legal.Add();
    play->set_card(CardName(turn->legal_cards(i)));
    if (!AddNames(turn->legal_captured(i), play->mutable_captured(), why)) return false;
  }
  *turn->mutable_observation() = std::move(obs);
  *turn->mutable_legal_plays() = std::move(legal);
  turn->clear_packed();
  turn->clear_legal_cards();
  turn->clear_legal_captured();
  return true;
}

}  // namespace tablanette_bot
