#!/usr/bin/perl
# A Tablanette bot in Perl with nothing but its core modules: no gRPC library.
# It speaks the arena's JSON-lines protocol (docs/jsonlines.md) on stdin/stdout:
#
#     tablanette bot bridge --as perly -- perl bots/jsonlines/greedy.pl
#
# Strategy: take the capture worth most (points first, then cards), else trail
# the card worth least. Diagnostics go to stderr, which the bridge keeps.
use strict;
use warnings;
use JSON::PP;

$| = 1;    # every answer leaves at once
my $json = JSON::PP->new->canonical;
my %points;    # card -> points, from the rules in the start line

sub worth {    # what taking these cards is worth to us
    my @cards = @_;
    my $sum = 0;
    $sum += 100 * ($points{$_} // 0) + 1 for @cards;
    return $sum;
}

while (my $line = <STDIN>) {
    my $msg = eval { $json->decode($line) };
    if (!$msg) { print STDERR "greedy.pl: cannot read $line"; next; }
    if ($msg->{type} eq 'start') {
        %points = %{ $msg->{rules}{card_points} // {} };
        print STDERR "greedy.pl: seat $msg->{seat}, protocol $msg->{protocol}\n";
    }
    elsif ($msg->{type} eq 'turn') {
        my ($best, $best_value) = (0, undef);
        my $i = 0;
        for my $play (@{ $msg->{legal_plays} }) {
            my ($card, $captured) = split /:/, $play, 2;
            my $value = defined $captured
                ? worth($card, split(/,/, $captured))    # a capture: the played card is won too
                : -worth($card);                         # a trail: give away as little as we can
            ($best, $best_value) = ($i, $value) if !defined $best_value || $value > $best_value;
            $i++;
        }
        print $json->encode({ play => $best }), "\n";
    }
    elsif ($msg->{type} eq 'end') {
        print STDERR "greedy.pl: game over, $msg->{reason}, score @{ $msg->{score} }\n";
        last;
    }
}
