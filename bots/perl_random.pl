#!/usr/bin/env perl
# Plays a uniformly random legal action, in any game: the protocol without botkit.
# One JSON object per line each way; core modules only.
use strict;
use warnings;
use JSON::PP;

my $json = JSON::PP->new->canonical;
$| = 1;  # every reply must reach the referee at once

sub send_msg { print $json->encode($_[0]), "\n"; }

while (my $line = <STDIN>) {
    next unless $line =~ /\S/;
    my $msg = $json->decode($line);
    my $type = $msg->{type} // '';
    if ($type eq 'hello') {
        send_msg({ type => 'hello', name => 'random-perl', protocol => 1 });
    } elsif ($type eq 'start') {
        srand($msg->{seed} % 4294967296);  # same match seed, same play
    } elsif ($type eq 'act') {
        my $legal = $msg->{observation}{legal_actions};
        my $pick = $legal->[int(rand(scalar @$legal))];
        send_msg({ type => 'action', action => $pick->{id} + 0 });
    } elsif ($type eq 'bye') {
        last;
    }
}
