"""Imports a package the sandbox does not offer (bots get the standard library and botkit only)."""
import numpy  # noqa: F401

from botkit import run

run(lambda obs, match: obs["legal_actions"][0]["id"], name="numpy-bot")
