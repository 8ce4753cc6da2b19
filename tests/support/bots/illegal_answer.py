"""Answers with an id one past the legal ones."""
from botkit import run

run(lambda obs, match: len(obs["legal_actions"]), name="illegal")
