"""A fixture upload that fails the conformance check: it exits before saying hello."""
import sys

sys.stderr.write("dies_at_hello: giving up before the handshake\n")
sys.exit(3)
