"""Well-mannered reference bot: answers each request with the same line."""
import sys

for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
