// The bot's policy: pick one of Turn.legal_plays. Pure functions, no network,
// so the self-test (selftest.cpp) can exercise them on hand-made messages.
//
// To write your own strategy, change ChooseMove() in strategy.cpp (keep its
// signature): it gets the Turn (observation + legal plays) and the game's Rules
// and returns an index into turn.legal_plays().
#pragma once

#include <set>
#include <string>

#include "tablanette/v1/arena.pb.h"
#include "tablanette/v1/game.pb.h"

namespace tablanette_bot {

// Rules used when a game's GameStarted.rules never arrived: the `tablic`
// preset's scoring (TD 3, 2C 2, each Ace 1; sweeping Jack; fixed tabla).
const tablanette::v1::Rules& DefaultRules();

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
