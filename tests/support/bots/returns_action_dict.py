"""Answers with the whole action object instead of its id."""
from botkit import run

run(lambda obs, match: obs["legal_actions"][0], name="dict-bot")
