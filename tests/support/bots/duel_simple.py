"""A fixture for arena duel's tests: botkit's simple policy, clearly better than random."""

from botkit import run, simple_choice

run(simple_choice, name="duel-simple")
