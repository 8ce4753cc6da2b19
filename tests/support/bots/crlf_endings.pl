#!/usr/bin/env perl
# Saved with Windows line endings: the "#!" line names "perl\r".
use strict;
$| = 1;
print "{\"type\": \"hello\", \"name\": \"crlf\"}\n";
