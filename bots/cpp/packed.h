// The packed form of a Turn (docs/protocol.md#the-packed-form). The bot asks
// for it in its Hello (kFeatures); a turn then carries card numbers
// (rank * 4 + suit: 0 = AC ... 51 = KS) and card masks (bit n = card n) in
// Turn.packed, legal_cards and legal_captured, instead of names: less for the
// server to build and send and for the bot to parse. UnpackTurn() turns it
// back into the named form the strategy reads, so strategies see one form
// whichever the server sent. Pure functions, checked by selftest.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tablanette/v1/arena.pb.h"

namespace tablanette_bot {

// The Hello features this bot asks for.
inline const char* const kFeatures[] = {"packed"};

// The canonical names of the cards of `mask`, ascending ("AC" ... "KS").
std::vector<std::string> CardNames(std::uint64_t mask);

// Fills turn->observation() and legal_plays() from the packed fields, and
// clears those. A named turn is left as it is. Returns false, saying why in
// *why, when the packed fields cannot be read (a card number outside 0..51, a
// mask above 52 bits, lists of one kind that differ in length).
bool UnpackTurn(tablanette::v1::Turn* turn, std::string* why);

}  // namespace tablanette_bot
