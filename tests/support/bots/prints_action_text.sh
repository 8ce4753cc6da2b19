#!/bin/sh
# Answers each act with the first legal action's text on a line of its own ("play The Forest"),
# not its id: a label where the id goes.
while IFS= read -r line; do
  case "$line" in
    *'"type": "hello"'*|*'"type":"hello"'*) echo '{"type": "hello", "name": "prints-text"}' ;;
    *'"type": "act"'*|*'"type":"act"'*)
      printf '%s\n' "$line" | sed -n 's/.*"legal_actions": *\[{[^]]*"text": *"\([^"]*\)".*/\1/p' ;;
    *'"type": "bye"'*|*'"type":"bye"'*) exit 0 ;;
  esac
done
