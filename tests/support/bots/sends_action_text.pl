#!/usr/bin/env perl
# Speaks the protocol by hand and sends the chosen action's text ("play The Forest") as its
# action, not its id.
use strict;
use warnings;
use JSON::PP;

my $json = JSON::PP->new->canonical;
$| = 1;
while (my $line = <STDIN>) {
    my $msg = $json->decode($line);
    my $type = $msg->{type} // '';
    if ($type eq 'hello') {
        print $json->encode({ type => 'hello', name => 'action-text' }), "\n";
    } elsif ($type eq 'act') {
        my $first = $msg->{observation}{legal_actions}[0];
        print $json->encode({ type => 'action', action => $first->{text} }), "\n";
    } elsif ($type eq 'bye') {
        last;
    }
}
