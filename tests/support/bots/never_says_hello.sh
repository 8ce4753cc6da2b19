#!/bin/sh
# Reads its input and never answers, as a bot whose hello sits unflushed in its buffer.
cat > /dev/null
